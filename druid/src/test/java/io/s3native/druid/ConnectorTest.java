package io.s3native.druid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.inject.Injector;
import org.apache.druid.java.util.emitter.service.ServiceMetricEvent;
import org.apache.druid.storage.StorageConnector;
import org.apache.druid.storage.StorageConnectorProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Properties;

/** Every method of the connector against its javadoc, through Druid's wiring, on the local server. */
class ConnectorTest {
    @TempDir
    File tmp;

    private final DruidHarness.CollectingEmitter emitter = new DruidHarness.CollectingEmitter();
    private String bucket;

    private StorageConnector connector(String prefix) {
        bucket = LocalS3.newBucket("contract");
        Injector injector = DruidHarness.injector(DruidHarness.properties(bucket, prefix, LocalS3.endpoint()), emitter);
        StorageConnectorProvider provider = injector.getInstance(DruidHarness.DURABLE);
        assertInstanceOf(S3NativeStorageConnectorProvider.class, provider, "druid.msq.intermediate.storage.type=s3native");
        return provider.createStorageConnector(tmp);
    }

    private static void write(StorageConnector c, String path, byte[] bytes) throws IOException {
        try (OutputStream out = c.write(path)) {
            out.write(bytes);
        }
    }

    /** Write a one-byte file at each path, from 4 threads. */
    private static void writeAll(StorageConnector c, List<String> paths) throws Exception {
        List<Thread> writers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 4; t++) {
            final int from = t;
            Thread th = new Thread(() -> {
                try {
                    for (int i = from; i < paths.size(); i += 4) {
                        write(c, paths.get(i), new byte[] {(byte) i});
                    }
                } catch (Throwable x) {
                    failures.add(x);
                }
            });
            th.start();
            writers.add(th);
        }
        for (Thread th : writers) {
            th.join();
        }
        assertEquals(List.of(), failures);
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try (InputStream i = in) {
            return i.readAllBytes();
        }
    }

    @Test
    void writeReadAndRangesUnderThePrefix() throws IOException {
        StorageConnector c = connector("durable/q1");
        byte[] small = LocalS3.data(1000, 1);
        byte[] large = LocalS3.data(12 * 1024 * 1024 + 17, 2);
        write(c, "stage_0/worker_0/part_0", small);
        write(c, "stage_0/worker_1/part_0", large);
        write(c, "empty", new byte[0]);

        assertArrayEquals(small, LocalS3.get(bucket, "durable/q1/stage_0/worker_0/part_0"), "keys are prefix/path");
        assertArrayEquals(large, readAll(c.read("stage_0/worker_1/part_0")));
        assertArrayEquals(new byte[0], readAll(c.read("empty")));
        assertArrayEquals(java.util.Arrays.copyOfRange(large, 5_000_000, 5_000_100), readAll(c.readRange("stage_0/worker_1/part_0", 5_000_000, 100)));
        int tail = FrameTrailer.LENGTH;
        assertArrayEquals(java.util.Arrays.copyOfRange(large, large.length - tail, large.length),
                readAll(c.readRange("stage_0/worker_1/part_0", large.length - tail, tail)));
        assertArrayEquals(java.util.Arrays.copyOfRange(large, 1, 9_000_001), readAll(c.readRange("stage_0/worker_1/part_0", 1, 9_000_000)));
        assertArrayEquals(new byte[0], readAll(c.readRange("stage_0/worker_0/part_0", 10, 0)));

        // One PutObject for the small output and for the empty one; multipart past chunkSize.
        List<ServiceMetricEvent> bytes = emitter.metrics(UploadMetrics.TOTAL_BYTES);
        assertEquals(3, bytes.size(), bytes.toString());
        assertEquals(1000L, bytes.get(0).getValue().longValue());
        assertEquals("true", bytes.get(0).getUserDims().get("singlePut"));
        assertEquals(1L, ((Number) bytes.get(0).getUserDims().get("requests")).longValue(), "small output: one request");
        assertEquals("false", bytes.get(1).getUserDims().get("singlePut"));
        assertFalse(((String) bytes.get(1).getUserDims().get("uploadId")).isEmpty());
        assertEquals((long) large.length, bytes.get(1).getValue().longValue());
        assertEquals("true", bytes.get(2).getUserDims().get("singlePut"));
        List<ServiceMetricEvent> partTimes = emitter.metrics(UploadMetrics.PART_TIME);
        assertEquals(1, partTimes.size(), "part times of the multipart upload only");
        assertEquals(3L, ((Number) partTimes.get(0).getUserDims().get("parts")).longValue(), "12 MiB in 5 MiB chunks");
        assertEquals(1, emitter.metrics(UploadMetrics.PART_QUEUED_TIME).size());
        assertEquals(3, emitter.metrics(UploadMetrics.TOTAL_TIME).size());
        assertEquals(3, emitter.metrics(UploadMetrics.BUDGET_BLOCKED_TIME).size());
        assertEquals(3, emitter.metrics(UploadMetrics.PART_QUEUE_SIZE).size());
    }

    @Test
    void aMissingPathIsAnIOExceptionNamingIt() throws IOException {
        StorageConnector c = connector("p");
        IOException e = assertThrows(IOException.class, () -> c.read("no/such/file"));
        assertInstanceOf(FileNotFoundException.class, e);
        assertTrue(e.getMessage().contains("p/no/such/file"), e.getMessage());
        e = assertThrows(IOException.class, () -> c.readRange("no/such/file", 0, 10));
        assertTrue(e.getMessage().contains("p/no/such/file"), e.getMessage());
        assertFalse(c.pathExists("no/such/file"));
    }

    @Test
    void pathExistsAndDeleteFile() throws IOException {
        StorageConnector c = connector("p/");
        write(c, "d/f", new byte[] {1});
        assertTrue(c.pathExists("d/f"));
        assertFalse(c.pathExists("d"), "a directory is no file");
        c.deleteFile("d/f");
        assertFalse(c.pathExists("d/f"));
        assertNull(LocalS3.get(bucket, "p/d/f"));
        c.deleteFile("d/f"); // deleting what is gone succeeds, as on S3
    }

    @Test
    void deleteFilesInBatchesAndDeleteRecursively() throws Exception {
        StorageConnector c = connector("q");
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 1_050; i++) {
            paths.add("stage_1/worker_" + (i % 3) + "/part_" + i);
        }
        writeAll(c, paths);
        write(c, "stage_10/keep", new byte[] {1});
        write(c, "stage_1.txt", new byte[] {1});

        c.deleteFiles(paths.subList(0, 1_020)); // two DeleteObjects requests
        assertFalse(c.pathExists(paths.get(0)));
        assertFalse(c.pathExists(paths.get(1_019)));
        assertTrue(c.pathExists(paths.get(1_020)));
        c.deleteFiles(List.of()); // nothing to delete

        c.deleteRecursively("stage_1");
        List<String> left = new ArrayList<>();
        c.listDir("").forEachRemaining(left::add);
        java.util.Collections.sort(left);
        assertEquals(List.of("stage_1.txt", "stage_10/keep"), left);
    }

    @Test
    void listDirIsLazyWithNamesRelativeToTheDirectory() throws Exception {
        StorageConnector c = connector("root");
        List<String> children = new ArrayList<>();
        for (int i = 0; i < 1_005; i++) {
            children.add("parent1/parent2/child" + i);
        }
        writeAll(c, children);
        write(c, "parent1/other", new byte[0]);
        Iterator<String> it = c.listDir("parent1/parent2");
        List<String> names = new ArrayList<>();
        it.forEachRemaining(names::add);
        assertEquals(1_005, names.size());
        assertTrue(names.contains("child0") && names.contains("child1004"), names.subList(0, 3).toString());
        assertThrows(NoSuchElementException.class, it::next);
        List<String> all = new ArrayList<>();
        c.listDir("parent1").forEachRemaining(all::add);
        assertEquals(1_006, all.size());
        assertTrue(all.contains("parent2/child7") && all.contains("other"), "joining dirName and the name gives the path");
        for (String n : all.subList(0, 5)) {
            assertTrue(c.pathExists("parent1/" + n), n);
        }
        assertFalse(c.listDir("nothing").hasNext());
    }

    @Test
    void settingsComeFromDruidPropertiesAndNoSecretIsShown() {
        String secret = LocalS3.secretKey();
        bucket = LocalS3.newBucket("props");
        Properties p = DruidHarness.properties(bucket, "x", "127.0.0.1:1");
        Injector injector = DruidHarness.injector(p, emitter);
        S3NativeStorageConnectorProvider provider = (S3NativeStorageConnectorProvider) injector.getInstance(DruidHarness.DURABLE);
        java.util.Map<String, String> s = provider.settings();
        assertEquals("http://127.0.0.1:1", s.get("fs.s3a.endpoint"), "druid.s3.protocol fills in the scheme");
        assertEquals("true", s.get("fs.s3a.path.style.access"));
        assertEquals("false", s.get("fs.s3a.connection.ssl.enabled"));
        assertEquals(LocalS3.region(), s.get("fs.s3a.endpoint.region"));
        assertEquals(Long.toString(5L << 20), s.get("fs.s3a.native.part.size"));
        assertEquals("3", s.get("fs.s3a.retry.limit"));
        assertEquals(Long.toString(64L << 20), s.get("fs.s3a.native.memory.budget"));
        assertEquals(secret, s.get("fs.s3a.secret.key"));
        assertFalse(provider.toString().contains(secret), provider.toString());
        assertFalse(injector.getInstance(S3NativeClientConfig.class).toString().contains(secret));

        // A bad chunkSize fails creating the connector, naming the Druid property.
        p.setProperty(DruidHarness.PREFIX + ".chunkSize", "1MiB");
        StorageConnectorProvider bad = DruidHarness.injector(p, emitter).getInstance(DruidHarness.DURABLE);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> bad.createStorageConnector(tmp));
        assertTrue(e.getMessage().contains("druid.msq.intermediate.storage.chunkSize"), e.getMessage());
        assertFalse(e.getMessage().contains(secret), e.getMessage());

        // Without keys: the default chain (and no key in the settings).
        p.setProperty(DruidHarness.PREFIX + ".chunkSize", "5MiB");
        p.remove("druid.s3.accessKey");
        p.remove("druid.s3.secretKey");
        S3NativeStorageConnectorProvider chain = (S3NativeStorageConnectorProvider) DruidHarness.injector(p, emitter).getInstance(DruidHarness.DURABLE);
        assertNull(chain.settings().get("fs.s3a.access.key"));
        assertTrue(chain.toString().contains("default chain"), chain.toString());
    }
}
