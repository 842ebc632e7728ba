package io.s3native.hadoop;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.hadoop.fs.Abortable;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.MeanStatistic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.s3native.S3NativeOutputStream;
import io.s3native.Statistics;

/**
 * The stream {@link NativeS3AFileSystem} returns (inside an FSDataOutputStream): forwards to
 * {@link S3NativeOutputStream} and answers like S3A's block output stream: capabilities,
 * {@link Abortable}, {@link Syncable} per {@code fs.s3a.downgrade.syncable.exceptions}, and
 * IOStatistics under S3A's names plus the native ones ({@code s3native.*}).
 */
final class NativeS3AOutputStream extends OutputStream implements StreamCapabilities, Abortable, Syncable, IOStatisticsSource {
    private static final Logger LOG = LoggerFactory.getLogger(NativeS3AOutputStream.class);

    /** What runs after a successful close (parent directory markers); may be null. */
    interface AfterClose {
        void run() throws IOException;
    }

    static final String MAGIC_CAPABILITY = "fs.s3a.capability.magic.output.stream";
    static final String MAGIC_CAPABILITY_OLD = "s3a:magic.output.stream";
    static final String ABORTABLE = "fs.capability.outputstream.abortable";
    static final String IOSTATISTICS = "iostatistics";

    private final S3NativeOutputStream out;
    private final boolean magic;
    private final boolean downgradeSyncable;
    private final AfterClose afterClose;
    private boolean warnedSyncable;
    /** S3A's rule (S3ABlockOutputStream): close or abort acts once, even when it failed; later ones do nothing. */
    private final AtomicBoolean finishCalled = new AtomicBoolean();

    NativeS3AOutputStream(S3NativeOutputStream out, boolean magic, boolean downgradeSyncable, AfterClose afterClose) {
        this.out = out;
        this.magic = magic;
        this.downgradeSyncable = downgradeSyncable;
        this.afterClose = afterClose;
    }

    /** The native stream (its UploadResult after close). */
    S3NativeOutputStream nativeStream() {
        return out;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        if (!finishCalled.get()) { // like S3A: flushing a closed or aborted stream does nothing
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        if (finishCalled.getAndSet(true)) {
            return; // like S3A: closing twice, or after abort(), does nothing
        }
        out.close();
        if (afterClose != null) {
            afterClose.run();
        }
    }

    @Override
    public AbortableResult abort() {
        final boolean wasClosed = finishCalled.getAndSet(true);
        IOException failure = null;
        if (!wasClosed) {
            try {
                out.abort();
            } catch (IOException e) {
                failure = e;
            }
        }
        final IOException f = failure;
        return new AbortableResult() {
            @Override
            public boolean alreadyClosed() {
                return wasClosed;
            }

            @Override
            public IOException anyCleanupException() {
                return f;
            }
        };
    }

    @Override
    public boolean hasCapability(String capability) {
        switch (capability.toLowerCase(Locale.ENGLISH)) {
            case MAGIC_CAPABILITY:
            case MAGIC_CAPABILITY_OLD:
                return magic;
            case ABORTABLE:
            case IOSTATISTICS:
                return true;
            default:
                return false; // hflush, hsync and the rest
        }
    }

    @Override
    public void hflush() throws IOException {
        syncable("hflush");
    }

    @Override
    public void hsync() throws IOException {
        syncable("hsync");
    }

    private void syncable(String call) {
        if (!downgradeSyncable) {
            throw new UnsupportedOperationException("S3A streams are not Syncable. See HADOOP-17597.");
        }
        if (!warnedSyncable) {
            warnedSyncable = true;
            LOG.warn("Application invoked the Syncable API ({}) against an S3A stream: data is not persisted until close", call);
        }
    }

    @Override
    public IOStatistics getIOStatistics() {
        Statistics s;
        try {
            s = out.getStatistics();
        } catch (IOException e) {
            return new IOStatisticsSnapshot();
        }
        IOStatisticsSnapshot snap = new IOStatisticsSnapshot();
        Map<String, Long> c = snap.counters();
        // S3A's names (StreamStatisticNames / StoreStatisticNames).
        c.put("stream_write_bytes", s.getBytesWritten());
        c.put("stream_write_total_data", s.getBytesWritten());
        c.put("stream_write_block_uploads", s.getPartsUploaded() + s.getSinglePuts());
        c.put("object_multipart_initiated", s.getCreateMultipartUploadRequests());
        c.put("multipart_upload_part_put", s.getUploadPartRequests());
        c.put("object_multipart_aborted", s.getAbortMultipartUploadRequests());
        c.put("object_put_request", s.getPutObjectRequests());
        long[] q = s.getPartQueueWait();
        c.put("stream_write_queue_duration", q[0] * q[2] / 1000); // total queue wait, ms
        // The native ones.
        c.put("s3native.retries", s.getRetries());
        c.put("s3native.budget_blocked_us", s.getBudgetBlockedMicros());
        c.put("s3native.in_flight_blocked_us", s.getInFlightBlockedMicros());
        c.put("s3native.complete_multipart_upload", s.getCompleteMultipartUploadRequests());
        long[] u = s.getPartUploadTime();
        snap.minimums().put("s3native.part_queue_wait_us", q[1]);
        snap.maximums().put("s3native.part_queue_wait_us", q[3]);
        snap.meanStatistics().put("s3native.part_queue_wait_us", new MeanStatistic(q[0], q[0] * q[2]));
        snap.minimums().put("s3native.part_upload_time_us", u[1]);
        snap.maximums().put("s3native.part_upload_time_us", u[3]);
        snap.meanStatistics().put("s3native.part_upload_time_us", new MeanStatistic(u[0], u[0] * u[2]));
        return snap;
    }

    @Override
    public String toString() {
        return "NativeS3AOutputStream{s3://" + out.getBucket() + "/" + out.getKey() + (magic ? ", magic" : "") + "}";
    }
}
