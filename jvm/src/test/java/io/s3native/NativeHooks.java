package io.s3native;

import java.io.IOException;

/**
 * The native test hooks (native/src/jni.rs, cargo feature {@code test-hooks}): only a
 * hook-enabled library has them, and only the tests declare them; the jar neither ships nor
 * declares them.
 */
final class NativeHooks {
    static {
        Native.init();
    }

    private NativeHooks() {
    }

    /** Panics inside the library: the panic must become an IOException. */
    static native void panicForTest() throws IOException;

    /**
     * Bytes copied out of native readers' buffers so far (ReadCopyTest): into slices by the
     * reader ({@code intoSlices}), else straight into Java memory by the JNI layer.
     */
    static native long readCopiedBytes(boolean intoSlices) throws IOException;

    /** Benchmark baseline: upload {@code total} bytes through the Rust API alone, in {@code chunk}-byte writes. */
    static native long benchRustUpload(String bucket, String key, String[] settings, long total, int chunk) throws IOException;
}
