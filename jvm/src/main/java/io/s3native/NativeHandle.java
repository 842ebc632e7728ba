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
