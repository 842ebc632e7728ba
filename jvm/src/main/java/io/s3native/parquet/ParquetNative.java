package io.s3native.parquet;

import java.io.IOException;
import java.util.Map;

/**
 * The Parquet writer's native methods (native/src/jni_parquet.rs). Package-private: users go
 * through {@link NativeParquetWriter}. Failures throw the exceptions
 * {@code io.s3native.Native.exception} builds from the native error kind.
 */
final class ParquetNative {
    private ParquetNative() {
    }

    /** Loads the library (the jar's, or {@code s3native.library.path}); throws naming why it cannot. */
    static void load() throws IOException {
        String failure = io.s3native.NativeLibrary.loadFailure();
        if (failure != null) {
            throw new IOException(failure);
        }
    }

    static native long open(String bucket, String key, String mode, String[] settings, long credentials, String optionsJson,
            long stream) throws IOException;

    static native long openMagic(String bucket, String magicKey, String uri, String layout, String etags, String[] settings,
            long credentials, String optionsJson, long stream) throws IOException;

    /** {@code batches}, {@code rows} (Long) and {@code ended} (Boolean) of this call. */
    static native Map<String, Object> writeNext(long handle, long maxBatches) throws IOException;

    /** The ParquetResult JSON. */
    static native String close(long handle) throws IOException;

    static native void abort(long handle) throws IOException;

    static native void free(long handle);
}
