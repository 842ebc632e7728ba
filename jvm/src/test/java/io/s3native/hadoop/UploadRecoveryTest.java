package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.hadoop.util.VersionInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scenarios of Hadoop's ITestUploadRecovery (a PUT, an UploadPart and a
 * CompleteMultipartUpload failing during plain and magic writes, the write recovering), with
 * the faults injected by the project's fault proxy (tests/support/fault_proxy.py) instead of
 * inside the AWS SDK, which native requests never pass through. Every scenario runs on
 * {@link NativeS3AFileSystem} (fs.s3a.native.fallback=fail) and on stock S3AFileSystem, both
 * through the proxy, and checks what must hold after: the data read back is what was written,
 * the proxy's log shows the failed request and its retry, the magic commit (Hadoop's own
 * MagicS3GuardCommitter, task and job commit) succeeds, and a fault that never clears fails
 * the write with an IOException and leaves no multipart upload behind.
 *
 * <p>Not covered: the part failures of ITestUploadRecovery.testCommitOperations happen in
 * S3A's CommitOperations.uploadFileToPendingCommit (the staging committers' upload of a local
 * file), which never involves the native writer; its Complete failure is covered for magic
 * files by jobCommitCompleteFailingOnceIsRetried and for plain files by
 * completeFailingOnceIsRetried.
 *
 * <p>HadoopS3.conf allows fs.s3a.retry.limit=2 retries: a native request is sent at most 3
 * times. Stock S3A retries in two layers (the AWS SDK, fs.s3a.attempts.maximum, and S3A's
 * invoker, fs.s3a.retry.limit), so only "failed, then retried" is asserted for it, not counts.
 */
class UploadRecoveryTest {
    private static final int PART = 5 * 1024 * 1024; // fs.s3a.multipart.size of HadoopS3.conf
    private static final String NATIVE = "native";
    private static final String STOCK = "stock";

    private final List<FileSystem> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(HadoopS3::closeAll);
    }

    /** A bucket of its own and the filesystem of {@code route} on it, through the fault proxy. */
    private final class Store {
        final String bucket;
        final Configuration conf;
        final FileSystem fs;
        final boolean isNative;

        Store(String route) throws IOException {
            isNative = route.equals(NATIVE);
            bucket = HadoopS3.newBucket("recovery-" + (isNative ? "n" : "s"));
            conf = HadoopS3.conf(isNative);
            if (isNative) {
                conf.set("fs.s3a.native.fallback", "fail");
            }
            conf.set("fs.s3a.committer.name", "magic");
            conf.set("fs.s3a.committer.uuid", UUID.randomUUID().toString());
            fs = HadoopS3.fs(bucket, conf);
            opened.add(fs);
        }

        Path path(String key) {
            return new Path("s3a://" + bucket + "/" + key);
        }

        /** The path-style request path of {@code key}, for rules and the log. */
        String wire(String key) {
            return "/" + bucket + "/" + key;
        }

        /** Create, write and close {@code path}, checking the stream is the route's. */
        void write(Path path, byte[] data) throws IOException {
            try (FSDataOutputStream out = fs.create(path, true)) {
                assertEquals(isNative, out.getWrappedStream() instanceof NativeS3AOutputStream, "route of " + path);
                out.write(data);
            }
        }

        void assertContent(String key, byte[] expected) throws IOException {
            assertArrayEquals(expected, HadoopS3.read(fs, path(key)), "content of " + key);
        }

        void assertNoUploads(String prefix) {
            assertEquals(List.of(), HadoopS3.uploads(bucket, prefix), "multipart uploads left under " + prefix);
        }

        /** On the native route, the file(s) really went native (no silent fallback). */
        void assertWroteNatively() {
            if (isNative) {
                assertTrue(((NativeS3AFileSystem) fs).getNativeCreateCount() > 0, "native creates");
            }
        }
    }

    /** The (fault, status) outcomes of the logged {@code operation}s on paths containing {@code wirePath}. */
    private static List<String> outcomes(String wirePath, String operation) throws IOException {
        List<String> out = new ArrayList<>();
        for (HadoopS3.Logged e : HadoopS3.logged(wirePath)) {
            if (e.operation().equals(operation)) {
                out.add(e.fault() + " " + e.status());
            }
        }
        return out;
    }

    /**
     * The native route sends exactly the failed attempts then one success; stock S3A may send
     * more (see the class comment), so for it: the failures first, then the success last.
     */
    private static void assertRetried(Store s, String wirePath, String operation, List<String> failures)
            throws IOException {
        List<String> seen = outcomes(wirePath, operation);
        List<String> expected = new ArrayList<>(failures);
        expected.add("null 200");
        if (s.isNative) {
            assertEquals(expected, seen, operation + " of " + wirePath);
        } else {
            assertTrue(seen.size() >= expected.size() && seen.subList(0, failures.size()).equals(failures)
                    && seen.get(seen.size() - 1).equals("null 200"), operation + " of " + wirePath + ": " + seen);
        }
    }

    /** A rule action that forwards unchanged (a delay of 0 ms), to keep a request from later rules. */
    private static final String PASS = "\"action\": \"delay\", \"delay_ms\": 0, \"count\": -1";

    private static String rule(String match, String action) {
        return "{\"match\": {" + match + "}, " + action + "}";
    }

    // ---- plain files ----------------------------------------------------------------------

    /** ITestUploadRecovery.testPutRecovery: the single PUT of a small file fails once (after S3 stored it). */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NATIVE, STOCK})
    void singlePutFailingOnceIsRetried(String route) throws Exception {
        Store s = new Store(route);
        String key = "plain/small.bin";
        HadoopS3.addRule(rule("\"method\": \"PUT\", \"query_lacks\": \"partNumber\", \"path_contains\": \"" + s.wire(key) + "\"",
                "\"action\": \"status_after_forward\", \"status\": 500, \"count\": 1"));
        byte[] data = HadoopS3.data(1000, 1);
        s.write(s.path(key), data);
        s.assertWroteNatively();
        s.assertContent(key, data);
        assertRetried(s, s.wire(key), "PutObject", List.of("status_after_forward 500"));
    }

    /** Part uploads fail: part 2 with a 500, part 1 with the connection closed after S3 stored it. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NATIVE, STOCK})
    void partFailuresAreRetried(String route) throws Exception {
        Store s = new Store(route);
        String key = "plain/parts.bin";
        String on = "\"method\": \"PUT\", \"path_contains\": \"" + s.wire(key) + "\", \"part_number\": ";
        HadoopS3.addRule(rule(on + 2, "\"action\": \"status\", \"status\": 500, \"count\": 1"));
        HadoopS3.addRule(rule(on + 1, "\"action\": \"drop\", \"count\": 1"));
        byte[] data = HadoopS3.data(2 * PART + 1000, 2);
        s.write(s.path(key), data);
        s.assertWroteNatively();
        s.assertContent(key, data);
        assertRetried(s, s.wire(key), "UploadPart 2", List.of("status 500"));
        assertRetried(s, s.wire(key), "UploadPart 1", List.of("drop null"));
        s.assertNoUploads("plain/");
    }

    static Stream<Arguments> completeFaults() {
        return Stream.of(NATIVE, STOCK).flatMap(route -> Stream.of(
                Arguments.of(route, "\"action\": \"status\", \"status\": 500", "status 500"),
                Arguments.of(route, "\"action\": \"drop\"", "drop null")));
    }

    /**
     * ITestUploadRecovery.testCommitOperations' second half, for a plain file: Complete fails
     * once, with a 500, or with the connection closed after S3 completed the upload (the retry
     * then completes an upload already completed, which S3 and moto answer 200).
     */
    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("completeFaults")
    void completeFailingOnceIsRetried(String route, String action, String outcome) throws Exception {
        Store s = new Store(route);
        String key = "plain/completed.bin";
        HadoopS3.addRule(rule("\"method\": \"POST\", \"query_has\": \"uploadId\", \"path_contains\": \"" + s.wire(key) + "\"",
                action + ", \"count\": 1"));
        byte[] data = HadoopS3.data(PART + 100, 3);
        s.write(s.path(key), data);
        s.assertWroteNatively();
        s.assertContent(key, data);
        assertRetried(s, s.wire(key), "CompleteMultipartUpload", List.of(outcome));
        s.assertNoUploads("plain/");
    }

    static Stream<Arguments> plainFaults() {
        List<Arguments> out = new ArrayList<>();
        for (String route : List.of(NATIVE, STOCK)) {
            out.add(Arguments.of(route, "PutObject"));
            out.add(Arguments.of(route, "UploadPart"));
            out.add(Arguments.of(route, "CompleteMultipartUpload"));
        }
        return out.stream();
    }

    /** A fault that never clears: the write fails with an IOException, no upload and no object is left. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("plainFaults")
    void plainFaultThatNeverClears(String route, String operation) throws Exception {
        Store s = new Store(route);
        String key = "plain/never-" + operation + ".bin";
        String where = "\"path_contains\": \"" + s.wire(key) + "\", ";
        String match = switch (operation) {
            case "PutObject" -> where + "\"method\": \"PUT\", \"query_lacks\": \"partNumber\"";
            case "UploadPart" -> where + "\"method\": \"PUT\", \"part_number\": 2";
            default -> where + "\"method\": \"POST\", \"query_has\": \"uploadId\"";
        };
        HadoopS3.addRule(rule(match, "\"action\": \"status\", \"status\": 500, \"count\": -1"));
        byte[] data = HadoopS3.data(operation.equals("PutObject") ? 1000 : 2 * PART + 1, 4);
        IOException e = assertThrows(IOException.class, () -> s.write(s.path(key), data));
        s.assertWroteNatively();
        String logged = operation.equals("UploadPart") ? "UploadPart 2" : operation;
        List<String> attempts = outcomes(s.wire(key), logged);
        // Both name the key. Native names the S3 operation ("UploadPart 2 s3://b/k failed:
        // InternalError: ...") in a plain IOException; stock S3A names its own action ("Writing
        // Object on k", "upload part #2 upload ID .. on k", "Completing multipart upload on k")
        // in an AWSStatus500Exception (an AWSServiceIOException), and sends more attempts (3
        // SDK attempts for each of S3A's 3, so 9, on 3.3.4, 3.4.1 and 3.5.0 alike).
        assertTrue(e.getMessage().contains(key), "names the key: " + e);
        if (s.isNative) {
            assertTrue(e.getMessage().contains(logged + " s3://" + s.bucket + "/" + key), "names the operation: " + e);
            assertEquals(3, attempts.size(), "1 attempt + fs.s3a.retry.limit=2 retries: " + attempts);
        } else {
            assertTrue(attempts.size() >= 2, "retried: " + attempts);
        }
        assertTrue(attempts.stream().allMatch("status 500"::equals), attempts.toString());
        s.assertNoUploads("plain/");
        assertFalse(s.fs.exists(s.path(key)), "no object at " + key);
    }

    // ---- magic files ----------------------------------------------------------------------

    /** One job with one task attempt of Hadoop's magic committer, writing under {@code dest}. */
    private static final class MagicJob {
        final Store s;
        final JobContext job;
        final TaskAttemptContext task;
        final MagicS3GuardCommitter jobCommitter;
        final MagicS3GuardCommitter taskCommitter;

        MagicJob(Store s, String dest, int jobNumber) throws IOException {
            this.s = s;
            JobID id = JobID.forName("job_202611300001_" + String.format("%04d", jobNumber));
            Configuration conf = new Configuration(s.conf);
            conf.set("mapreduce.job.id", id.toString());
            job = new JobContextImpl(conf, id);
            task = new TaskAttemptContextImpl(conf, new TaskAttemptID(id.getJtIdentifier(), id.getId(), TaskType.MAP, 0, 0));
            jobCommitter = new MagicS3GuardCommitter(s.path(dest), task);
            jobCommitter.setupJob(job);
            taskCommitter = new MagicS3GuardCommitter(s.path(dest), task);
            taskCommitter.setupTask(task);
        }

        /** The magic path of {@code name} in the task attempt's work directory. */
        Path file(String name) {
            return new Path(taskCommitter.getWorkPath(), name);
        }

        /** The path-style request path of {@code name}'s magic key (its marker; + ".pending"). */
        String magicWire(String name) {
            return file(name).toUri().getPath().replaceFirst("^/", "/" + s.bucket + "/");
        }

        void write(String name, byte[] data) throws IOException {
            try (FSDataOutputStream out = s.fs.create(file(name), true)) {
                assertEquals(s.isNative, out.getWrappedStream() instanceof NativeS3AOutputStream, "route of " + name);
                assertTrue(out.hasCapability("fs.s3a.capability.magic.output.stream"), "magic stream for " + name);
                out.write(data);
            }
        }

        void commit() throws IOException {
            taskCommitter.commitTask(task);
            jobCommitter.commitJob(job);
        }

        void abort() throws IOException {
            taskCommitter.abortTask(task);
            jobCommitter.abortJob(job, JobStatus.State.FAILED);
        }
    }

    /**
     * ITestUploadRecovery.testMagicWriteRecovery: a part upload of a magic file fails once (a
     * one-part file, as there), and a three-part file has part 2 fail with a 500 and part 1
     * lose its connection after S3 stored it; task and job commit then publish both intact.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NATIVE, STOCK})
    void magicPartFailuresAreRetried(String route) throws Exception {
        Store s = new Store(route);
        MagicJob j = new MagicJob(s, "out", 1);
        // The upload is on the final key (out/NAME); the marker's path has __magic.. between.
        String part = "\"method\": \"PUT\", \"part_number\": ";
        HadoopS3.addRule(rule(part + "1, \"path_contains\": \"" + s.wire("out/small.bin") + "\"",
                "\"action\": \"status_after_forward\", \"status\": 500, \"count\": 1"));
        HadoopS3.addRule(rule(part + "2, \"path_contains\": \"" + s.wire("out/big.bin") + "\"",
                "\"action\": \"status\", \"status\": 503, \"code\": \"SlowDown\", \"count\": 1"));
        HadoopS3.addRule(rule(part + "1, \"path_contains\": \"" + s.wire("out/big.bin") + "\"",
                "\"action\": \"drop\", \"count\": 1"));
        byte[] small = HadoopS3.data(1000, 5);
        byte[] big = HadoopS3.data(2 * PART + 7, 6);
        j.write("small.bin", small);
        j.write("big.bin", big);
        s.assertWroteNatively();
        assertRetried(s, s.wire("out/small.bin"), "UploadPart 1", List.of("status_after_forward 500"));
        assertRetried(s, s.wire("out/big.bin"), "UploadPart 2", List.of("status 503"));
        assertRetried(s, s.wire("out/big.bin"), "UploadPart 1", List.of("drop null"));
        j.commit();
        s.assertContent("out/small.bin", small);
        s.assertContent("out/big.bin", big);
        s.assertNoUploads("out/");
    }

    /** The marker PUT and the .pending PUT of a magic file each fail once: both retried, the commit publishes the file. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NATIVE, STOCK})
    void markerAndPendingFailingOnceAreRetried(String route) throws Exception {
        Store s = new Store(route);
        MagicJob j = new MagicJob(s, "out", 2);
        String marker = j.magicWire("m.bin");
        String put = "\"method\": \"PUT\", \"query_lacks\": \"partNumber\", \"path_contains\": ";
        // First match wins: the .pending fails once, then passes (a delay of 0 ms is a
        // pass-through rule), so the marker rule (whose path is a prefix of the .pending's)
        // only ever sees the marker, whichever of the two is written first (stock S3A 3.3
        // writes the .pending first, 3.4+ and native the marker first).
        HadoopS3.addRule(rule(put + "\"" + marker + ".pending\"", "\"action\": \"status\", \"status\": 500, \"count\": 1"));
        HadoopS3.addRule(rule(put + "\"" + marker + ".pending\"", PASS));
        HadoopS3.addRule(rule(put + "\"" + marker + "\"", "\"action\": \"status_after_forward\", \"status\": 500, \"count\": 1"));
        byte[] data = HadoopS3.data(1000, 7);
        j.write("m.bin", data);
        s.assertWroteNatively();
        List<String> markerPuts = new ArrayList<>();
        List<String> pendingPuts = new ArrayList<>();
        for (HadoopS3.Logged e : HadoopS3.logged(marker)) {
            if (e.operation().equals("PutObject")) {
                String fault = "delay".equals(e.fault()) ? null : e.fault(); // PASS
                (e.path().endsWith(".pending") ? pendingPuts : markerPuts).add(fault + " " + e.status());
            }
        }
        if (s.isNative) {
            assertEquals(List.of("status_after_forward 500", "null 200"), markerPuts, "marker PUTs");
            assertEquals(List.of("status 500", "null 200"), pendingPuts, ".pending PUTs");
        } else {
            assertEquals("status_after_forward 500", markerPuts.get(0), "marker PUTs " + markerPuts);
            assertEquals("null 200", markerPuts.get(markerPuts.size() - 1), "marker PUTs " + markerPuts);
            assertEquals("status 500", pendingPuts.get(0), ".pending PUTs " + pendingPuts);
            assertEquals("null 200", pendingPuts.get(pendingPuts.size() - 1), ".pending PUTs " + pendingPuts);
        }
        j.commit();
        s.assertContent("out/m.bin", data);
        s.assertNoUploads("out/");
    }

    /**
     * ITestUploadRecovery.testCommitOperations: job commit's CompleteMultipartUpload of a
     * magic file fails once; S3A's committer (the same code on both routes) retries it and
     * the data the native writer uploaded is published intact.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {NATIVE, STOCK})
    void jobCommitCompleteFailingOnceIsRetried(String route) throws Exception {
        Store s = new Store(route);
        MagicJob j = new MagicJob(s, "out", 3);
        byte[] data = HadoopS3.data(PART + 11, 8);
        j.write("c.bin", data);
        s.assertWroteNatively();
        HadoopS3.addRule(rule("\"method\": \"POST\", \"query_has\": \"uploadId\", \"path_contains\": \"" + s.wire("out/c.bin") + "\"",
                "\"action\": \"status_after_forward\", \"status\": 500, \"count\": 1"));
        j.commit();
        s.assertContent("out/c.bin", data);
        assertRetried(s, s.wire("out/c.bin"), "CompleteMultipartUpload", List.of("status_after_forward 500"));
        s.assertNoUploads("out/");
    }

    static Stream<Arguments> magicFaults() {
        List<Arguments> out = new ArrayList<>();
        for (String route : List.of(NATIVE, STOCK)) {
            out.add(Arguments.of(route, "UploadPart"));
            out.add(Arguments.of(route, "marker"));
            out.add(Arguments.of(route, ".pending"));
        }
        return out.stream();
    }

    /**
     * A fault that never clears during a magic write (a part, the marker PUT or the .pending
     * PUT): close fails with an IOException and the upload on the final key is aborted, so
     * nothing is left once the task and job are aborted.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("magicFaults")
    void magicFaultThatNeverClears(String route, String what) throws Exception {
        Store s = new Store(route);
        MagicJob j = new MagicJob(s, "out", 4);
        String name = "never.bin";
        String marker = j.magicWire(name);
        String put = "\"method\": \"PUT\", \"query_lacks\": \"partNumber\", \"path_contains\": ";
        String fail = "\"action\": \"status\", \"status\": 500, \"count\": -1";
        switch (what) {
            case "UploadPart" -> HadoopS3.addRule(rule("\"method\": \"PUT\", \"part_number\": 2, \"path_contains\": \""
                    + s.wire("out/" + name) + "\"", fail));
            case "marker" -> {
                // The .pending passes (PASS) so the marker rule, whose path is a prefix of the
                // .pending's, sees the marker only.
                HadoopS3.addRule(rule(put + "\"" + marker + ".pending\"", PASS));
                HadoopS3.addRule(rule(put + "\"" + marker + "\"", fail));
            }
            default -> HadoopS3.addRule(rule(put + "\"" + marker + ".pending\"", fail));
        }
        IOException e = assertThrows(IOException.class, () -> j.write(name, HadoopS3.data(2 * PART + 3, 9)));
        s.assertWroteNatively();
        String magicKey = marker.substring(s.bucket.length() + 2);
        // As in plainFaultThatNeverClears: both name the failed key; native with the S3
        // operation and which magic object it was, stock with "Writing Object on".
        String failedKey = switch (what) {
            case "UploadPart" -> "out/" + name;
            case "marker" -> magicKey;
            default -> magicKey + ".pending";
        };
        assertTrue(e.getMessage().contains(failedKey), "names " + failedKey + ": " + e);
        if (s.isNative) {
            String op = switch (what) {
                case "UploadPart" -> "UploadPart 2";
                case "marker" -> "PutObject (magic marker)";
                default -> "PutObject (.pending)";
            };
            assertTrue(e.getMessage().contains(op + " s3://" + s.bucket + "/" + failedKey), "names " + op + ": " + e);
        }
        // The writer aborted the upload on the final key itself.
        s.assertNoUploads("out/");
        // No .pending, so a task commit would find nothing of this file. Stock S3A 3.3 differs
        // for a failing marker: it writes the .pending before the marker, so the .pending of
        // an upload it then aborted stays, where a task commit would load it as a pending
        // commit. Native writes the marker first on every line.
        boolean pendingFirst = !s.isNative && VersionInfo.getVersion().startsWith("3.3.");
        assertEquals(pendingFirst && what.equals("marker") ? List.of(magicKey + ".pending") : List.of(),
                HadoopS3.keys(s.bucket, magicKey + ".pending"), ".pending left");
        // What was written before the failing PUT stays until the task attempt is aborted (on
        // both routes: S3A deletes nothing on that failure either): the marker before a
        // failing .pending, or on stock 3.3 the .pending before a failing marker.
        List<String> left = what.equals("UploadPart") ? List.of()
                : pendingFirst ? (what.equals("marker") ? List.of(magicKey + ".pending") : List.of())
                : (what.equals(".pending") ? List.of(magicKey) : List.of());
        assertEquals(left, HadoopS3.keys(s.bucket, magicKey),
                "objects at " + magicKey + "*");
        List<String> attempts = new ArrayList<>();
        for (HadoopS3.Logged l : HadoopS3.logged(s.wire(failedKey))) {
            if (l.path().endsWith(failedKey) && l.operation().equals(what.equals("UploadPart") ? "UploadPart 2" : "PutObject")) {
                attempts.add(l.fault() + " " + l.status());
            }
        }
        assertTrue(attempts.stream().allMatch("status 500"::equals), attempts.toString());
        if (s.isNative) {
            assertEquals(3, attempts.size(), "1 attempt + fs.s3a.retry.limit=2 retries: " + attempts);
        } else {
            assertTrue(attempts.size() >= 2, "retried: " + attempts);
        }
        j.abort();
        s.assertNoUploads("out/");
        assertEquals(List.of(), HadoopS3.keys(s.bucket, magicKey), "marker or .pending left after the abort");
        assertFalse(s.fs.exists(s.path("out/" + name)), "nothing published");
    }
}
