package io.s3native;

/**
 * Owns one native writer handle and frees it exactly once: when disposed and no call is
 * using it. Also the {@link java.lang.ref.Cleaner} action of an {@link S3NativeOutputStream}
 * (it holds no reference to the stream), so a stream that becomes unreachable without close
 * frees its writer, which aborts the upload and never completes it.
 */
final class NativeHandle implements Runnable {
    private final String describe;
    private long ptr;
    private int calls;
    private boolean disposed;
    private boolean freeInBackground;

    NativeHandle(long ptr, String describe) {
        this.ptr = ptr;
        this.describe = describe;
    }

    /** Start a call on the handle; pair with {@link #release()}. */
    synchronized long acquire() throws java.io.IOException {
        if (disposed) {
            throw new java.io.IOException("stream closed: " + describe);
        }
        calls++;
        return ptr;
    }

    /** End a call; frees the handle if it was disposed meanwhile. */
    void release() {
        long p;
        synchronized (this) {
            calls--;
            if (calls > 0 || !disposed || ptr == 0) {
                return;
            }
            p = ptr;
            ptr = 0;
        }
        free(p);
    }

    /**
     * Free on a background thread instead of the caller's: for a writer whose interrupted
     * call left an abort running, so the interrupted thread does not wait for it.
     */
    synchronized void freeInBackground() {
        freeInBackground = true;
    }

    private void free(long p) {
        boolean background;
        synchronized (this) {
            background = freeInBackground;
        }
        if (!background) {
            Native.free(p);
            return;
        }
        Thread t = new Thread(() -> Native.free(p), "s3native-free");
        t.setDaemon(true);
        t.start();
    }

    /** No new calls; free now, or when the last call in progress ends. */
    void dispose() {
        long p;
        synchronized (this) {
            disposed = true;
            if (calls > 0 || ptr == 0) {
                return;
            }
            p = ptr;
            ptr = 0;
        }
        free(p);
    }

    @Override
    public void run() {
        dispose();
    }
}
