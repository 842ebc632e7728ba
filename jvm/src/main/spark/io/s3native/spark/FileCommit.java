package io.s3native.spark;

import java.io.Serializable;
import java.util.List;

/**
 * One data file a task wrote as a deferred multipart upload: its key, upload id, ETags (part
 * order), rows and bytes, and the writer's UploadResult JSON, which the driver completes or
 * aborts with ({@code S3NativeOutputStream.complete/abort}).
 */
public final class FileCommit implements Serializable {
    private static final long serialVersionUID = 1L;

    public final String bucket;
    public final String key;
    public final String uploadId;
    public final List<String> etags;
    public final long rows;
    public final long bytes;
    /** The native writer's UploadResult JSON. */
    public final String upload;

    FileCommit(String bucket, String key, String uploadId, List<String> etags, long rows, long bytes, String upload) {
        this.bucket = bucket;
        this.key = key;
        this.uploadId = uploadId;
        this.etags = List.copyOf(etags);
        this.rows = rows;
        this.bytes = bytes;
        this.upload = upload;
    }

    @Override
    public String toString() {
        return "s3://" + bucket + "/" + key + " (upload " + uploadId + ", " + etags.size() + " parts, " + rows + " rows, " + bytes
                + " bytes)";
    }
}
