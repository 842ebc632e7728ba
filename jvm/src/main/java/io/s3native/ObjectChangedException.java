package io.s3native;

import java.io.IOException;

/**
 * A read of an object that changed since it was opened: S3 answered {@code 412
 * PreconditionFailed} to a GET pinned to the ETag found at open ({@code If-Match}), or the
 * object's ETag was no longer the one of the caller's file status. The message names the key;
 * nothing of the new version was returned. Reopen the object to read the new version. The
 * Hadoop layer raises it as S3A's {@code RemoteFileChangedException}.
 */
public class ObjectChangedException extends IOException {
    private static final long serialVersionUID = 1L;

    /** S3's error code for a failed precondition, which the native side gives a changed object. */
    static final String PRECONDITION_FAILED = "PreconditionFailed";

    public ObjectChangedException(String message) {
        super(message);
    }
}
