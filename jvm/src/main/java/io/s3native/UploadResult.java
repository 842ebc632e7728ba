package io.s3native;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a closed {@link S3NativeOutputStream} produced: bucket, key, upload id (null for a
 * single PUT), the ETags in part order (for a single PUT, the object's ETag), per-part
 * checksums when a checksum mode was set, the length, and the writer's statistics at close.
 *
 * <p>{@link #toJson()} gives the native writer's own JSON form, which {@link #fromJson(String)}
 * reads back in this or another JVM, so another process can
 * {@link S3NativeOutputStream#complete complete} or {@link S3NativeOutputStream#abort(UploadResult, java.util.Map) abort}
 * a deferred upload. The JSON is parsed by the native library (the one parser of this form),
 * which hands the fields over by name (the Rust {@code s3native::UploadResult}'s); this class
 * keeps the JSON verbatim.
 */
public final class UploadResult {
    /** The field names this class reads, as the native library names them (a test checks it sends exactly those). */
    static final java.util.Set<String> FIELDS = java.util.Set.of("bucket", "key", "upload_id", "etags", "checksums",
            "checksum_algorithm", "length", "completed", "statistics");

    private final String json;
    private final String bucket;
    private final String key;
    private final String uploadId;
    private final List<String> etags;
    private final List<String> checksums;
    private final String checksumAlgorithm;
    private final long length;
    private final boolean completed;
    private final Statistics statistics;

    @SuppressWarnings("unchecked")
    private UploadResult(String json, Map<String, Object> fields) {
        this.json = json;
        this.bucket = (String) field(fields, "bucket");
        this.key = (String) field(fields, "key");
        this.uploadId = (String) nullable(fields, "upload_id");
        this.etags = Collections.unmodifiableList((List<String>) field(fields, "etags"));
        this.checksums = Collections.unmodifiableList((List<String>) field(fields, "checksums"));
        this.checksumAlgorithm = (String) nullable(fields, "checksum_algorithm");
        this.length = (Long) field(fields, "length");
        this.completed = (Boolean) field(fields, "completed");
        this.statistics = new Statistics((Map<String, Object>) field(fields, "statistics"));
    }

    /** A field that may be null, but must be sent. */
    private static Object nullable(Map<String, Object> fields, String name) {
        if (!fields.containsKey(name)) {
            throw new IllegalStateException("s3native: the native library sent no UploadResult field " + name
                    + " (jar and library versions differ?)");
        }
        return fields.get(name);
    }

    private static Object field(Map<String, Object> fields, String name) {
        Object v = fields.get(name);
        if (v == null) {
            throw new IllegalStateException("s3native: the native library sent no UploadResult field " + name
                    + " (jar and library versions differ?)");
        }
        return v;
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

    /** Per-part checksums (base64), entry i for part i+1, when a checksum mode was set; else empty. */
    public List<String> getChecksums() {
        return checksums;
    }

    /** {@code SHA256} or {@code CRC64NVME} when there are checksums, else null. */
    public String getChecksumAlgorithm() {
        return checksumAlgorithm;
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
    public Statistics getStatistics() {
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
