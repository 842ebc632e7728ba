package io.s3native;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What a closed {@link S3NativeOutputStream} produced: bucket, key, upload id (null for a
 * single PUT), the ETags in part order (for a single PUT, the object's ETag), the length, and
 * the writer's statistics at close.
 *
 * <p>{@link #toJson()} gives the native writer's own JSON form, which {@link #fromJson(String)}
 * reads back in this or another JVM, so another process can
 * {@link S3NativeOutputStream#complete complete} or {@link S3NativeOutputStream#abort(UploadResult, java.util.Map) abort}
 * a deferred upload. The JSON is parsed by the native library (the one parser of this form);
 * this class keeps it verbatim.
 */
public final class UploadResult {
    private final String json;
    private final String bucket;
    private final String key;
    private final String uploadId;
    private final List<String> etags;
    private final long length;
    private final boolean completed;
    private Statistics statistics; // parsed on first use

    private UploadResult(String json, String[] fields) {
        this.json = json;
        this.bucket = fields[0];
        this.key = fields[1];
        this.uploadId = fields[2];
        this.length = Long.parseLong(fields[3]);
        this.completed = Boolean.parseBoolean(fields[4]);
        this.etags = Collections.unmodifiableList(Arrays.asList(Arrays.copyOfRange(fields, 5, fields.length)));
    }

    /**
     * Read a result written by {@link #toJson()}.
     *
     * @throws IllegalArgumentException when {@code json} is not such a result
     */
    public static UploadResult fromJson(String json) {
        Native.init();
        return new UploadResult(json, Native.parseResult(json));
    }

    /** The result as one line of JSON (the native writer's form). */
    public String toJson() {
        return json;
    }

    public String getBucket() {
        return bucket;
    }

    public String getKey() {
        return key;
    }

    /** The multipart upload id, or null when the object was written with one PUT. */
    public String getUploadId() {
        return uploadId;
    }

    /** True for a multipart upload (it has an upload id). */
    public boolean isMultipart() {
        return uploadId != null;
    }

    /** ETags as S3 returned them (quotes included): entry i for part i+1; for a single PUT the object's. */
    public List<String> getEtags() {
        return etags;
    }

    /** Object length in bytes. */
    public long getLength() {
        return length;
    }

    /** True when the object is visible (publish mode); false for a deferred upload. */
    public boolean isCompleted() {
        return completed;
    }

    /** The writer's statistics at close. */
    public synchronized Statistics getStatistics() {
        if (statistics == null) {
            statistics = new Statistics(Native.resultStatistics(json));
        }
        return statistics;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UploadResult && json.equals(((UploadResult) o).json);
    }

    @Override
    public int hashCode() {
        return json.hashCode();
    }

    @Override
    public String toString() {
        return "UploadResult{s3://" + bucket + "/" + key + ", uploadId=" + uploadId + ", parts=" + etags.size()
                + ", length=" + length + ", completed=" + completed + "}";
    }

    static String requireJson(UploadResult r) {
        return Objects.requireNonNull(r, "result").json;
    }
}
