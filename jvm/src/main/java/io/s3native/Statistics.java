package io.s3native;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Counters of one writer, or of the whole process (see {@link S3NativeOutputStream#globalStatistics()}).
 * A snapshot: it does not change after it was taken. Durations are in microseconds.
 */
public final class Statistics {
    // Names of the values, in the order native/src/jni.rs (stats_values) sends them.
    private static final String[] NAMES = {
        "bytes_written", "parts_uploaded", "single_puts", "retries", "budget_blocked_us", "in_flight_blocked_us",
        "requests.create_multipart_upload", "requests.upload_part", "requests.complete_multipart_upload",
        "requests.abort_multipart_upload", "requests.put_object", "requests.head_object", "requests.other",
        "part_queue_wait.count", "part_queue_wait.min_us", "part_queue_wait.mean_us", "part_queue_wait.max_us",
        "part_queue_wait.p50_us", "part_queue_wait.p99_us",
        "part_upload_time.count", "part_upload_time.min_us", "part_upload_time.mean_us", "part_upload_time.max_us",
        "part_upload_time.p50_us", "part_upload_time.p99_us",
        "writers_opened", "writers_closed", "writers_aborted", "budget_overcommits",
        "buffer_bytes", "buffer_peak_bytes",
    };

    /** Number of values. */
    static final int SIZE = NAMES.length;

    private final long[] v;

    Statistics(long[] values) {
        if (values == null || values.length != NAMES.length) {
            throw new IllegalStateException("s3native: the native library sent " + (values == null ? 0 : values.length)
                    + " statistics values, expected " + NAMES.length + " (jar and library versions differ?)");
        }
        this.v = values.clone();
    }

    /** Bytes accepted by write. */
    public long getBytesWritten() { return v[0]; }
    /** Parts uploaded successfully. */
    public long getPartsUploaded() { return v[1]; }
    /** Objects written with one PutObject. */
    public long getSinglePuts() { return v[2]; }
    /** Requests beyond the operations asked for (HTTP retries, abort retries). */
    public long getRetries() { return v[3]; }
    /** Time callers spent blocked waiting for the memory budget. */
    public long getBudgetBlockedMicros() { return v[4]; }
    /** Time callers spent blocked because the writer had its maximum of parts in flight. */
    public long getInFlightBlockedMicros() { return v[5]; }
    public long getCreateMultipartUploadRequests() { return v[6]; }
    public long getUploadPartRequests() { return v[7]; }
    public long getCompleteMultipartUploadRequests() { return v[8]; }
    public long getAbortMultipartUploadRequests() { return v[9]; }
    public long getPutObjectRequests() { return v[10]; }
    public long getHeadObjectRequests() { return v[11]; }
    public long getOtherRequests() { return v[12]; }
    /** Requests sent on the wire, retries included. */
    public long getTotalRequests() { return v[6] + v[7] + v[8] + v[9] + v[10] + v[11] + v[12]; }
    /** Per part, from hand-off until its first request started: count, min, mean, max, p50, p99 (µs). */
    public long[] getPartQueueWait() { return java.util.Arrays.copyOfRange(v, 13, 19); }
    /** Per part, from its first request until its last attempt ended: count, min, mean, max, p50, p99 (µs). */
    public long[] getPartUploadTime() { return java.util.Arrays.copyOfRange(v, 19, 25); }
    /** Process-wide only: writers opened. */
    public long getWritersOpened() { return v[25]; }
    /** Process-wide only: writers closed successfully. */
    public long getWritersClosed() { return v[26]; }
    /** Process-wide only: writers aborted or failed. */
    public long getWritersAborted() { return v[27]; }
    /** Process-wide only: admissions beyond the memory budget to avoid a deadlock. */
    public long getBudgetOvercommits() { return v[28]; }
    /** Process-wide only: bytes of part buffers held now (being filled or uploading); 0 per writer. */
    public long getBufferBytes() { return v[29]; }
    /** Process-wide only: the most bytes of part buffers held at once since the process started; 0 per writer. */
    public long getBufferPeakBytes() { return v[30]; }

    /** Every value by name (the Rust field names, nested ones dotted), in a stable order. */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < NAMES.length; i++) {
            m.put(NAMES[i], v[i]);
        }
        return Collections.unmodifiableMap(m);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Statistics && java.util.Arrays.equals(v, ((Statistics) o).v);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(v);
    }

    @Override
    public String toString() {
        return "Statistics" + asMap();
    }
}
