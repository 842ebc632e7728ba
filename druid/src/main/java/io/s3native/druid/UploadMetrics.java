package io.s3native.druid;

import io.s3native.S3NativeOutputStream;
import io.s3native.Statistics;
import io.s3native.UploadResult;
import org.apache.druid.java.util.emitter.service.ServiceEmitter;
import org.apache.druid.java.util.emitter.service.ServiceMetricEvent;

/**
 * Publishes a closed upload's statistics (the native writer's, {@link UploadResult#getStatistics()})
 * through Druid's emitter, in the names Druid's S3 connector uses, milliseconds for times:
 *
 * <ul>
 * <li>{@code s3/upload/part/queuedTime}, {@code s3/upload/part/time}: the mean wait of the
 *     upload's parts for an upload slot and their mean upload time; dimensions {@code uploadId},
 *     {@code parts} (how many), {@code maxMs} and {@code p99Ms}. Druid emits one event per part;
 *     the native writer keeps a summary per upload instead, so one event per upload carries it.</li>
 * <li>{@code s3/upload/part/queueSize}: part buffers held in the whole process when the upload
 *     closed (filling, queued or uploading), in parts of this upload's size.</li>
 * <li>{@code s3/upload/total/time}: from open to the end of close; {@code s3/upload/total/bytes}:
 *     the object's length; dimension {@code uploadId} (empty for a single PUT).</li>
 * <li>{@code s3native/upload/budget/blockedTime}: time the writer's caller waited for the
 *     process-wide memory budget; {@code s3native/upload/inFlight/blockedTime}: for its own cap
 *     of parts in flight.</li>
 * </ul>
 * Every event also has {@code bucket}, {@code requests} (S3 requests sent) and {@code singlePut}.
 */
public class UploadMetrics
{
  public static final String PART_QUEUED_TIME = "s3/upload/part/queuedTime";
  public static final String PART_TIME = "s3/upload/part/time";
  public static final String PART_QUEUE_SIZE = "s3/upload/part/queueSize";
  public static final String TOTAL_TIME = "s3/upload/total/time";
  public static final String TOTAL_BYTES = "s3/upload/total/bytes";
  public static final String BUDGET_BLOCKED_TIME = "s3native/upload/budget/blockedTime";
  public static final String IN_FLIGHT_BLOCKED_TIME = "s3native/upload/inFlight/blockedTime";

  private final ServiceEmitter emitter;

  /** {@code emitter} null: no metrics. */
  public UploadMetrics(ServiceEmitter emitter)
  {
    this.emitter = emitter;
  }

  private ServiceMetricEvent.Builder builder(UploadResult r)
  {
    Statistics s = r.getStatistics();
    return ServiceMetricEvent.builder()
                             .setDimension("uploadId", r.getUploadId() == null ? "" : r.getUploadId())
                             .setDimension("bucket", r.getBucket())
                             .setDimension("singlePut", Boolean.toString(!r.isMultipart()))
                             .setDimension("requests", s.getTotalRequests());
  }

  private static long ms(long micros)
  {
    return micros / 1000;
  }

  /** Emit the metrics of the closed upload {@code r} that took {@code totalMillis} from open to close. */
  public void emit(UploadResult r, long totalMillis, long partSize)
  {
    if (emitter == null) {
      return;
    }
    Statistics s = r.getStatistics();
    long[] queued = s.getPartQueueWait();
    long[] upload = s.getPartUploadTime();
    // {count, min, mean, max, p50, p99}, microseconds.
    if (queued[0] > 0) {
      emitter.emit(builder(r).setDimension("parts", queued[0]).setDimension("maxMs", ms(queued[3]))
                             .setDimension("p99Ms", ms(queued[5])).setMetric(PART_QUEUED_TIME, ms(queued[2])));
    }
    if (upload[0] > 0) {
      emitter.emit(builder(r).setDimension("parts", upload[0]).setDimension("maxMs", ms(upload[3]))
                             .setDimension("p99Ms", ms(upload[5])).setMetric(PART_TIME, ms(upload[2])));
    }
    long held = S3NativeOutputStream.globalStatistics().getBufferBytes();
    emitter.emit(builder(r).setMetric(PART_QUEUE_SIZE, partSize > 0 ? (held + partSize - 1) / partSize : 0));
    emitter.emit(builder(r).setMetric(TOTAL_TIME, totalMillis));
    emitter.emit(builder(r).setMetric(TOTAL_BYTES, r.getLength()));
    emitter.emit(builder(r).setMetric(BUDGET_BLOCKED_TIME, ms(s.getBudgetBlockedMicros())));
    emitter.emit(builder(r).setMetric(IN_FLIGHT_BLOCKED_TIME, ms(s.getInFlightBlockedMicros())));
  }
}
