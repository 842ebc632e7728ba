package io.s3native;

import java.io.IOException;

/**
 * Owns one native writer handle and frees it exactly once, when disposed and no call is using
 * it: at a successful close (the stream then answers from its result, so a closed writer holds
 * no native memory until garbage collection), or as the {@link java.lang.ref.Cleaner} action
 * of a stream that becomes unreachable (it holds no reference to the stream), which aborts an
 * upload that was not closed and never completes it; the Cleaner's thread, not a caller's,
 * then waits for that abort.
 */
final class NativeHandle implements Runnable {
    /** A call of a native object through its handle's pointer. */
    interface Call<T> {
        T run(long ptr) throws IOException;
    }

    /**
     * A Cleaner on its own daemon thread named {@code name}. Each kind of owner has its own, so
     * a writer's clean-up, which waits for an abort on the network, never delays freeing a
     * reader's, a listing's or a credential source's memory.
     */
    static java.lang.ref.Cleaner cleaner(String name) {
        return java.lang.ref.Cleaner.create(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    private long ptr;
    /** Frees {@code ptr}: {@link Native#free} for a writer, {@link Native#freeReader} for a reader. */
    private final java.util.function.LongConsumer free;
    private int calls;
    private boolean disposed;
    /** What a call on the freed writer reports: the native writer's own answer, taken before it was freed. */
    private IOException freedAnswer;

    NativeHandle(long ptr) {
        this(ptr, Native::free);
    }

    NativeHandle(long ptr, java.util.function.LongConsumer free) {
        this.ptr = ptr;
        this.free = free;
    }

    /** Start a call on the handle; pair with {@link #release()}. Throws the freed writer's answer once disposed. */
    synchronized long acquire() throws IOException {
        if (disposed) {
            IOException a = freedAnswer;
            throw new IOException(a != null ? a.getMessage() : "the stream is closed", a);
        }
        calls++;
        return ptr;
    }

    /** End a call; frees the handle if it was disposed meanwhile and this was the last call. */
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
        free.accept(p);
    }

    /**
     * Run {@code c} on the pointer between {@link #acquire()} and {@link #release()}, keeping
     * {@code owner} (the Java object whose Cleaner frees this handle) reachable meanwhile.
     */
    <T> T call(Call<T> c, Object owner) throws IOException {
        long p = acquire();
        try {
            return c.run(p);
        } finally {
            release();
            java.lang.ref.Reference.reachabilityFence(owner);
        }
    }

    /** True once disposed. */
    synchronized boolean isDisposed() {
        return disposed;
    }

    /**
     * No new calls ({@code answer}: what they report); free now, or when the last call in
     * progress ends.
     */
    void dispose(IOException answer) {
        long p;
        synchronized (this) {
            if (disposed) {
                return;
            }
            disposed = true;
            freedAnswer = answer;
            if (calls > 0 || ptr == 0) {
                return;
            }
            p = ptr;
            ptr = 0;
        }
        free.accept(p);
    }

    @Override
    public void run() {
        dispose(null);
    }
}
