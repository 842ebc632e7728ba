package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InterruptedIOException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import software.amazon.awssdk.core.sync.RequestBody;

/**
 * Thread.interrupt() during a blocked write or close: InterruptedIOException with the flag
 * still set, never a reported success. The server is slowed by the fault proxy's delay action
 * (on this test's keys only) and the writer may have one part in flight.
 */
class InterruptTest {
    private static Map<String, String> slowSettings() {
        Map<String, String> s = new HashMap<>(S3Test.settings(S3Test.faultProxy()));
        s.put("fs.s3a.native.parts.in.flight", "1");
        return s;
    }

    private static void slowParts(String key) throws Exception {
        S3Test.addFaultRule("{\"match\": {\"method\": \"PUT\", \"query_has\": \"partNumber\", \"path_contains\": \"" + key
                + "\"}, \"action\": \"delay\", \"delay_ms\": 15000, \"count\": 4}");
    }

    /** Run {@code body} on a new thread, interrupt it once blocked, return what it threw and its flag. */
    private static Throwable interruptWhileBlocked(ThrowingRunnable body, AtomicBoolean flagAfter) throws Exception {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        }, "blocked-writer");
        t.start();
        // Let it block on the slow part (it cannot finish within this time).
        Thread.sleep(2000);
        assertTrue(t.isAlive(), "the call should still be blocked");
        long start = System.nanoTime();
        t.interrupt();
        t.join(10_000);
        assertFalse(t.isAlive(), "the interrupted call returned");
        assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() < 10_000);
        return thrown.get();
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /**
     * A vectored read waiting for the memory budget (held by a writer whose part uploads
     * slowly) ends at a Thread.interrupt() with InterruptedIOException and the flag set, not
     * when the budget frees up. In a child JVM: the budget is process-wide.
     */
    @Test
    void interruptEndsAVectoredReadWaitingForTheBudget() throws Exception {
        String bucket = S3Test.newBucket("interrupt-vectored");
        String key = "interrupt-vectored-" + System.nanoTime();
        S3Test.s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(S3Test.data(12 << 20, 4)));
        slowParts(key + "-w");
        String out = S3Test.runChild("vectored-interrupt", bucket, key, S3Test.faultProxy());
        assertTrue(out.contains("INTERRUPTED true") && !out.contains("NOT INTERRUPTED"), out);
    }

    /**
     * While a stream read holds the native reader (its GET slowed by the proxy), the reader's
     * statistics come at once, and close() stops a vectored read in flight: its next range
     * fails with InterruptedIOException at once (not after its slow GET), and the thread that
     * takes it keeps its interrupt flag clear (no one interrupted it).
     */
    @Test
    void closeStopsAVectoredReadWhileAStreamReadHoldsTheReader() throws Exception {
        String bucket = S3Test.newBucket("stop-vectored");
        String key = "stop-vectored-" + System.nanoTime();
        int len = 2 * 1024 * 1024;
        S3Test.s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(S3Test.data(len, 3)));
        S3Test.addFaultRule("{\"match\": {\"method\": \"GET\", \"path_contains\": \"" + key
                + "\"}, \"action\": \"delay\", \"delay_ms\": 8000, \"count\": 4}");
        S3NativeInputStream in = S3NativeInputStream.open(bucket, key, S3Test.settings(S3Test.faultProxy()), null,
                S3NativeInputStream.ReadPolicy.RANDOM, len, null);
        S3NativeInputStream.VectoredRead read = in.readRanges(new long[] {len - 1000}, new int[] {1000});
        AtomicReference<Throwable> streamRead = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                in.read(new byte[100], 0, 100);
            } catch (Throwable e) {
                streamRead.set(e);
            }
        }, "blocked-reader");
        t.start();
        Thread.sleep(1500);
        assertTrue(t.isAlive(), "the stream read should still wait for its slow GET");
        try {
            long start = System.nanoTime();
            assertNotNull(in.getS3AStatistics());
            long statsMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertTrue(statsMs < 3000, "the statistics waited " + statsMs + " ms for the stream read");
            start = System.nanoTime();
            in.close();
            Throwable e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                    () -> read.next(new ByteBuffer[] {ByteBuffer.allocate(1000)}), "the stopped range must not be delivered");
            long stopMs = Duration.ofNanos(System.nanoTime() - start).toMillis();
            assertInstanceOf(InterruptedIOException.class, e);
            assertTrue(e.getMessage().contains("closed with ranges in flight"), e.getMessage());
            assertTrue(stopMs < 3000, "the stop waited " + stopMs + " ms");
            assertFalse(Thread.currentThread().isInterrupted(), "a stop sets no interrupt flag");
        } finally {
            Thread.interrupted();
            read.close();
            t.join(30_000);
        }
        assertFalse(t.isAlive());
    }

    @Test
    void interruptDuringABlockedWrite() throws Exception {
        String bucket = S3Test.newBucket("interrupt");
        String key = "interrupted-write-" + System.nanoTime();
        slowParts(key);
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, slowSettings());
        AtomicBoolean flag = new AtomicBoolean();
        Throwable e = interruptWhileBlocked(() -> {
            byte[] chunk = new byte[1024 * 1024];
            for (int i = 0; i < 30; i++) { // part 1 in flight (slow), part 2 full: the write blocks
                out.write(chunk);
            }
        }, flag);
        assertNotNull(e, "the write must not succeed");
        assertInstanceOf(InterruptedIOException.class, e);
        assertTrue(flag.get(), "interrupt flag set again");
        // The stream is failed: a later close (not interrupted itself) says so and never completes.
        Thread.interrupted();
        IOException again = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, out::close);
        assertFalse(again instanceof InterruptedIOException, "only the interrupted call reports the interrupt: " + again);
        assertTrue(again.getMessage().contains("failed earlier") && again.getMessage().contains("interrupted"),
                "the close names the earlier interrupt: " + again.getMessage());
        Thread.interrupted();
        assertFalse(S3Test.exists(bucket, key), "an interrupted writer never completes");
    }

    @Test
    void interruptDuringABlockedClose() throws Exception {
        String bucket = S3Test.newBucket("interrupt-close");
        String key = "interrupted-close-" + System.nanoTime();
        slowParts(key);
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, slowSettings());
        out.write(new byte[PART + 10]);
        AtomicBoolean flag = new AtomicBoolean();
        Throwable e = interruptWhileBlocked(out::close, flag);
        assertInstanceOf(InterruptedIOException.class, e);
        assertTrue(flag.get(), "interrupt flag set again");
        assertFalse(S3Test.exists(bucket, key), "an interrupted close never completes");
    }

    @Test
    void abortFromAnotherThreadDoesNotWaitForABlockedWrite() throws Exception {
        String bucket = S3Test.newBucket("abort-blocked");
        String key = "abort-blocked-" + System.nanoTime();
        slowParts(key);
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, slowSettings());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicLong failedAt = new java.util.concurrent.atomic.AtomicLong();
        Thread t = new Thread(() -> {
            try {
                byte[] chunk = new byte[1024 * 1024];
                for (int i = 0; i < 30; i++) {
                    out.write(chunk);
                }
            } catch (Throwable x) {
                failedAt.set(System.nanoTime());
                thrown.set(x);
            }
        });
        t.start();
        Thread.sleep(2000);
        assertTrue(t.isAlive());
        long start = System.nanoTime();
        // The blocked write fails at once; the abort itself waits for the slow part still
        // sending (its answer is 15 s away), then aborts.
        out.abort();
        t.join(30_000);
        assertFalse(t.isAlive());
        long failedMs = (failedAt.get() - start) / 1_000_000;
        assertTrue(failedMs < 5_000, "the blocked write failed " + failedMs + " ms after the abort started");
        assertInstanceOf(IOException.class, thrown.get());
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class, out::close);
        assertFalse(S3Test.exists(bucket, key));
    }
}
