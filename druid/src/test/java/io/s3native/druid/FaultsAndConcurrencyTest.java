package io.s3native.druid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.s3native.S3NativeOutputStream;
import io.s3native.Statistics;
import org.apache.druid.storage.StorageConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * Injected faults on part uploads (the fault proxy), and several "tasks" writing at once
 * through connectors of one JVM, which share its one memory budget.
 */
class FaultsAndConcurrencyTest {
    private static final int MIB = 1 << 20;

    @TempDir
    File tmp;

    private final DruidHarness.CollectingEmitter emitter = new DruidHarness.CollectingEmitter();

    private StorageConnector connector(String bucket, String endpoint) {
        Properties p = DruidHarness.properties(bucket, "faults", endpoint);
        p.setProperty(DruidHarness.PREFIX + ".maxRetry", "1");
        return DruidHarness.connector(DruidHarness.injector(p, emitter), tmp);
    }

    private static void writeInPieces(OutputStream out, byte[] content) throws IOException {
        for (int off = 0; off < content.length; off += 64 * 1024) {
            out.write(content, off, Math.min(64 * 1024, content.length - off));
        }
    }

    @Test
    void aPartFailingOnceIsRetriedAndTheFileIsIdentical() throws IOException {
        String bucket = LocalS3.newBucket("retried");
        LocalS3.clearProxy();
        try {
            LocalS3.proxy("POST", "/__fault/rules", "{\"match\": {\"method\": \"PUT\", \"part_number\": 2, \"path_contains\": \"" + bucket
                    + "\"}, \"action\": \"status\", \"status\": 500, \"count\": 1}");
            StorageConnector c = connector(bucket, LocalS3.faultProxy());
            byte[] content = LocalS3.data(11 * MIB, 7);
            try (OutputStream out = c.write("part_0")) {
                writeInPieces(out, content);
            }
            assertArrayEquals(content, LocalS3.get(bucket, "faults/part_0"));
            assertTrue(LocalS3.proxy("GET", "/__fault/log?path_contains=" + bucket, null).contains("\"fault\": \"status\""));
        } finally {
            LocalS3.clearProxy();
        }
    }

    @Test
    void aPartFailingBeyondTheRetriesFailsTheWriteLeavingNoUploadAndSaysSo() throws IOException {
        String bucket = LocalS3.newBucket("failed");
        LocalS3.clearProxy();
        try {
            LocalS3.proxy("POST", "/__fault/rules", "{\"match\": {\"method\": \"PUT\", \"part_number\": 2, \"path_contains\": \"" + bucket
                    + "\"}, \"action\": \"status\", \"status\": 500, \"count\": -1}");
            StorageConnector c = connector(bucket, LocalS3.faultProxy());
            byte[] content = LocalS3.data(16 * MIB, 8);
            IOException e = assertThrows(IOException.class, () -> {
                try (OutputStream out = c.write("part_1")) {
                    writeInPieces(out, content);
                }
            });
            String m = e.getMessage();
            assertTrue(m.contains("s3://" + bucket + "/faults/part_1"), m);
            assertTrue(m.contains("aborted") && m.contains("no multipart upload is left"), m);
            assertTrue(m.contains("UploadPart 2"), m);
            assertFalse(m.contains(LocalS3.secretKey()), m);
            assertNull(LocalS3.get(bucket, "faults/part_1"), "nothing at the key");
            assertEquals(List.of(), LocalS3.openUploads(bucket), "no multipart upload left");
        } finally {
            LocalS3.clearProxy();
        }
    }

    @Test
    void tasksWritingAtOnceShareOneBudgetAndAllFinish() throws Exception {
        String bucket = LocalS3.newBucket("tasks");
        // The budget is process-wide: the first writer of this JVM fixed it (64 MiB in every
        // test of this module). 6 tasks x 2 files of 12 MiB need more than that at once.
        StorageConnector[] tasks = new StorageConnector[6];
        for (int t = 0; t < tasks.length; t++) {
            Properties p = DruidHarness.properties(bucket, "query/task_" + t, LocalS3.endpoint());
            tasks[t] = DruidHarness.connector(DruidHarness.injector(p, emitter), tmp);
        }
        long budget = S3NativeOutputStream.checkSettings(bucket, Collections.emptyMap()).number("memory_budget");
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < tasks.length; t++) {
            final int task = t;
            Thread th = new Thread(() -> {
                try {
                    for (int f = 0; f < 2; f++) {
                        try (OutputStream out = tasks[task].write("part_" + f)) {
                            writeInPieces(out, LocalS3.data(12 * MIB, task * 10L + f));
                        }
                    }
                } catch (Throwable x) {
                    failures.add(x);
                }
            }, "task-" + t);
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join(120_000);
            assertFalse(th.isAlive(), th.getName() + " finished");
        }
        assertEquals(List.of(), failures);
        for (int t = 0; t < tasks.length; t++) {
            for (int f = 0; f < 2; f++) {
                try (InputStream in = tasks[t].read("part_" + f)) {
                    assertArrayEquals(LocalS3.data(12 * MIB, t * 10L + f), in.readAllBytes(), "task " + t + " file " + f);
                }
            }
        }
        Statistics global = S3NativeOutputStream.globalStatistics();
        // The admission rule lets a writer holding nothing take its first 1 MiB chunk even when
        // the budget is spent, so nothing deadlocks: at most one chunk per task beyond it.
        long bound = budget + (long) tasks.length * MIB;
        assertTrue(global.getBufferPeakBytes() <= bound, "peak " + global.getBufferPeakBytes() + " within the budget " + budget);
        assertTrue(budget <= 64L * MIB, "the budget of druid.s3native.memoryBudget: " + budget);
    }
}
