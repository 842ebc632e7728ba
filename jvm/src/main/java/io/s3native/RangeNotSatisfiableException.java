package io.s3native;

import java.io.EOFException;

/**
 * A read whose range starts at or past the object's real end: S3 answered 416
 * ({@code InvalidRange}). The reader was opened with a length longer than the object (a
 * declared length it trusted); the read is at the end of the file.
 */
public class RangeNotSatisfiableException extends EOFException {
    private static final long serialVersionUID = 1L;

    public RangeNotSatisfiableException(String message) {
        super(message);
    }
}
