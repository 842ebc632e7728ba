package io.s3native;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Counters of one writer, or of the whole process (see {@link S3NativeOutputStream#globalStatistics()}).
 * A snapshot: it does not change after it was taken. Durations are in microseconds.
 *
 * <p>The values come from the native library by name: the fields of the Rust
 * {@code s3native::Statistics}, nested ones dotted ({@code requests.upload_part},
 * {@code part_queue_wait.p99_us}). {@link #NAMES} lists the names this class reads; a test
 * checks that the library sends exactly those.
 */
public final class Statistics {
    /** The value names this class reads, as the native library names them. */
    public static final List<String> NAMES = List.of(
            "bytes_written", "parts_uploaded", "single_puts", "retries", "budget_blocked_us", "in_flight_blocked_us",
            "requests.create_multipart_upload", "requests.upload_part", "requests.complete_multipart_upload",
            "requests.abort_multipart_upload", "requests.put_object", "requests.head_object", "requests.other",
            "part_queue_wait.count", "part_queue_wait.min_us", "part_queue_wait.mean_us", "part_queue_wait.max_us",
            "part_queue_wait.p50_us", "part_queue_wait.p99_us",
            "part_upload_time.count", "part_upload_time.min_us", "part_upload_time.mean_us", "part_upload_time.max_us",
            "part_upload_time.p50_us", "part_upload_time.p99_us",
            "writers_opened", "writers_closed", "writers_aborted", "budget_overcommits",
            "buffer_bytes", "buffer_peak_bytes");

    private static final String[] SUMMARY = {"count", "min_us", "mean_us", "max_us", "p50_us", "p99_us"};

    private final Map<String, Long> values;

    /**
     * From the native library's map (nested maps for nested structs, {@code Long} values).
     *
     * @throws IllegalStateException when a value is not a number (jar and library versions differ)
     */
    Statistics(Map<String, Object> nativeForm) {
        Map<String, Long> flat = new LinkedHashMap<>();
        flatten("", nativeForm, flat);
        this.values = Collections.unmodifiableMap(flat);
    }

    @SuppressWarnings("unchecked")
    private static void flatten(String prefix, Map<String, Object> in, Map<String, Long> out) {
        for (Map.Entry<String, Object> e : in.entrySet()) {
            String name = prefix + e.getKey();
            Object v = e.getValue();
            if (v instanceof Map) {
                flatten(name + ".", (Map<String, Object>) v, out);
            } else if (v instanceof Long) {
                out.put(name, (Long) v);
            } else {
                throw new IllegalStateException("s3native: statistics value " + name + " is " + v
                        + ", not a number (jar and library versions differ?)");
            }
        }
    }

    private long get(String name) {
        Long v = values.get(name);
        if (v == null) {
            throw new IllegalStateException("s3native: the native library sent no statistics value " + name
                    + " (jar and library versions differ?)");
        }
        return v;
    }

    private long[] summary(String name) {
        long[] s = new long[SUMMARY.length];
        for (int i = 0; i < s.length; i++) {
            s[i] = get(name + "." + SUMMARY[i]);
        }
        return s;
    }

    /** Bytes accepted by write. */
    public long getBytesWritten() { return get("bytes_written"); }
    /** Parts uploaded successfully. */
    public long getPartsUploaded() { return get("parts_uploaded"); }
    /** Objects written with one PutObject. */
    public long getSinglePuts() { return get("single_puts"); }
    /** Requests beyond the operations asked for (HTTP retries, abort retries). */
    public long getRetries() { return get("retries"); }
    /** Time callers spent blocked waiting for the memory budget, µs. */
    public long getBudgetBlockedMicros() { return get("budget_blocked_us"); }
    /** Time callers spent blocked because the writer had its maximum of parts in flight, µs. */
    public long getInFlightBlockedMicros() { return get("in_flight_blocked_us"); }
    public long getCreateMultipartUploadRequests() { return get("requests.create_multipart_upload"); }
    public long getUploadPartRequests() { return get("requests.upload_part"); }
    public long getCompleteMultipartUploadRequests() { return get("requests.complete_multipart_upload"); }
    public long getAbortMultipartUploadRequests() { return get("requests.abort_multipart_upload"); }
    public long getPutObjectRequests() { return get("requests.put_object"); }
    public long getHeadObjectRequests() { return get("requests.head_object"); }
    public long getOtherRequests() { return get("requests.other"); }
    /** Requests sent on the wire, retries included. */
    public long getTotalRequests() {
        long total = 0;
        for (Map.Entry<String, Long> e : values.entrySet()) {
            if (e.getKey().startsWith("requests.")) {
                total += e.getValue();
            }
        }
        return total;
    }
    /** Per part, from hand-off until its first request started: count, min, mean, max, p50, p99 (µs). */
    public long[] getPartQueueWait() { return summary("part_queue_wait"); }
    /** Per part, from its first request until its last attempt ended: count, min, mean, max, p50, p99 (µs). */
    public long[] getPartUploadTime() { return summary("part_upload_time"); }
    /** Process-wide only: writers opened. */
    public long getWritersOpened() { return get("writers_opened"); }
    /** Process-wide only: writers closed successfully. */
    public long getWritersClosed() { return get("writers_closed"); }
    /** Process-wide only: writers aborted or failed. */
    public long getWritersAborted() { return get("writers_aborted"); }
    /** Process-wide only: admissions beyond the memory budget to avoid a deadlock. */
    public long getBudgetOvercommits() { return get("budget_overcommits"); }
    /** Process-wide only: bytes of part buffers held now (being filled or uploading); 0 per writer. */
    public long getBufferBytes() { return get("buffer_bytes"); }
    /** Process-wide only: the most bytes of part buffers held at once since the process started; 0 per writer. */
    public long getBufferPeakBytes() { return get("buffer_peak_bytes"); }

    /** Every value by name (the Rust field names, nested ones dotted), as the library sent them. */
    public Map<String, Long> asMap() {
        return values;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Statistics && values.equals(((Statistics) o).values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return "Statistics" + values;
    }
}
