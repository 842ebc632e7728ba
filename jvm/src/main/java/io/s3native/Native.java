package io.s3native;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;

/**
 * The native methods (native/src/jni.rs) and the mapping of native error kinds to Java
 * exceptions. Package-private: users go through {@link S3NativeOutputStream}.
 */
final class Native {
    // Error kinds: s3native::ErrorKind's numeric values (never change).
    static final int INVALID_ARGUMENT = 1;
    static final int UNSUPPORTED = 2;
    static final int NOT_FOUND = 3;
    static final int ACCESS_DENIED = 4;
    static final int INTERRUPTED = 5;
    static final int STATE = 6;
    static final int TOO_LARGE = 7;
    static final int IO = 8;
    static final int INTERNAL = 9;

    static {
        NativeLibrary.load();
        // One hook per loaded copy of the library: abort what is still open when the JVM exits.
        Runtime.getRuntime().addShutdownHook(new Thread(Native::abortOpenUploadsQuietly, "s3native-abort-open-uploads"));
    }

    private Native() {
    }

    /** Makes sure the library is loaded and bound (class initialisation does the work). */
    static void init() {
    }

    private static void abortOpenUploadsQuietly() {
        try {
            abortOpenUploads();
        } catch (Throwable t) {
            System.err.println("s3native: aborting open uploads at JVM exit failed: " + t);
        }
    }

    /**
     * Called by the native code to build the exception for a failure; {@code s3Code} and
     * {@code setting} may be null.
     */
    static Throwable exception(int kind, String message, String s3Code, String setting) {
        switch (kind) {
            case INVALID_ARGUMENT:
                return new IllegalArgumentException(message);
            case UNSUPPORTED:
                return new UnsupportedSettingException(message, setting);
            case NOT_FOUND:
                return new FileNotFoundException(message);
            case ACCESS_DENIED:
                return new AccessDeniedException(null, null, message);
            case INTERRUPTED: {
                // The native side only reads the flag; make sure it is set when this surfaces.
                Thread.currentThread().interrupt();
                return new InterruptedIOException(message);
            }
            case INTERNAL:
                return new IOException("s3native internal error: " + message);
            default:
                return new IOException(message);
        }
    }

    static native long open(String bucket, String key, boolean deferred, String[] settings) throws IOException;

    /** layout: 0 = __magic (Hadoop 3.3), 1 = __magic_job- (3.4+); etags: 0 unquoted, 1 quoted, 2 objects. */
    static native long openMagic(String bucket, String magicKey, String uri, int layout, int etags, String[] settings)
            throws IOException;

    static native void write(long handle, byte[] b, int off, int len) throws IOException;

    static native void writeDirect(long handle, ByteBuffer direct, int position, int len) throws IOException;

    static native String close(long handle) throws IOException;

    static native void abort(long handle) throws IOException;

    static native void free(long handle);

    static native long[] statistics(long handle) throws IOException;

    static native long[] globalStatistics();

    static native void complete(String resultJson, String[] settings) throws IOException;

    static native void abortUpload(String resultJson, String[] settings) throws IOException;

    static native int abortOpenUploads();

    static native String[] parseResult(String json);

    static native long[] resultStatistics(String json);

    static native String version();

    static native void panicForTest();

    /** Benchmark baseline: upload {@code total} bytes through the Rust API alone (see jni.rs). */
    static native long benchRustUpload(String bucket, String key, String[] settings, long total, int chunk) throws IOException;
}
