package io.s3native;

/**
 * Owns one native writer handle: the {@link java.lang.ref.Cleaner} action of an
 * {@link S3NativeOutputStream}, which frees the writer once the stream is unreachable (it
 * holds no reference to the stream). The stream keeps itself reachable during each native
 * call ({@link java.lang.ref.Reference#reachabilityFence}), so the handle is never freed
 * while a call uses it. Freeing a writer that was not closed aborts its upload, never
 * completes it; the Cleaner's thread, not a caller's, waits for that abort.
 */
final class NativeHandle implements Runnable {
    /** The native writer; valid until {@link #run()}. */
    final long ptr;

    NativeHandle(long ptr) {
        this.ptr = ptr;
    }

    /** Free the native writer (the Cleaner calls this exactly once). */
    @Override
    public void run() {
        Native.free(ptr);
    }
}
