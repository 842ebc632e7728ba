package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.s3a.S3AInstrumentation;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.junit.jupiter.api.Test;

/**
 * What a read counts in the filesystem's S3AInstrumentation metrics (what Hadoop's cost tests
 * read: ITestCommitOperationCost expects 1 {@code action_http_get_request} for loading a
 * {@code .pending} file), through stock S3AFileSystem and through {@link NativeS3AFileSystem},
 * counter by counter, after the same reads of the same object on the local server: S3A's
 * stream adds its counters to the metrics at close (S3AInstrumentation.InputStreamStatistics
 * #merge), and the native stream does the same by S3A's names (NativeS3AInputStream#close).
 */
class ReadCountersTest {
    /** A small file, fetched whole by both (a {@code .pending} file's size). */
    private static final int SIZE = 3000;

    /** One way of reading {@code path} ({@code status}: its FileStatus). */
    private interface Reads {
        void run(FileSystem fs, Path path, FileStatus status) throws Exception;
    }

    /** How the magic committer loads a .pending file (JsonSerialization.load): openFile, whole-file, with the status, read to the end. */
    private static final Reads PENDING_LOAD = (fs, path, status) -> {
        try (FSDataInputStream in = org.apache.hadoop.util.functional.FutureIO.awaitFuture(fs.openFile(path)
                .opt("fs.option.openfile.read.policy", "whole-file").withFileStatus(status).build())) {
            drain(in, 8192);
        }
    };

    /** open() (S3A: HEAD at open; not compared: see below), then sequential reads of 1000 bytes to the end. */
    private static final Reads SEQUENTIAL = (fs, path, status) -> {
        try (FSDataInputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            drain(in, 1000);
        }
    };

    /** A positioned readFully inside the object. */
    private static final Reads PREAD = (fs, path, status) -> {
        try (FSDataInputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            in.readFully(100, new byte[500]);
        }
    };

    private static long drain(FSDataInputStream in, int chunk) throws IOException {
        byte[] b = new byte[chunk];
        long total = 0;
        for (int n; (n = in.read(b, 0, b.length)) > 0; ) {
            total += n;
        }
        return total;
    }

    /**
     * The metrics a read moves: S3A's stream statistics (stream_read_*, stream_aborted) and the
     * GET timer, which S3A's stream promotes at close (the HEAD of an open without a status is
     * the filesystem's, counted at open, and not a stream's).
     */
    private static boolean readMetric(String name) {
        return name.startsWith("stream_read_") || name.equals("stream_aborted")
                || name.startsWith(NativeS3AInputStream.ACTION_HTTP_GET_REQUEST);
    }

    private static Map<String, Long> metrics(S3AFileSystem fs) {
        S3AInstrumentation inst = fs.getInstrumentation();
        Map<String, Long> m = new TreeMap<>();
        for (org.apache.hadoop.fs.s3a.Statistic st : org.apache.hadoop.fs.s3a.Statistic.values()) {
            for (String name : new String[] {st.getSymbol(), st.getSymbol() + ".failures"}) {
                if (readMetric(name) && inst.lookupMetric(name) instanceof MutableCounterLong) {
                    m.put(name, inst.getCounterValue(name));
                }
            }
        }
        return m;
    }

    private static Map<String, Long> diff(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        after.forEach((k, v) -> {
            long change = v - before.getOrDefault(k, 0L);
            if (change != 0) {
                d.put(k, change);
            }
        });
        return d;
    }

    /** The metrics {@code reads} of a fresh SIZE-byte file moved, and the filesystem's bytes read, on a filesystem of its own. */
    private static Map<String, Long> counted(boolean nativeFs, Reads reads) throws Exception {
        String bucket = HadoopS3.newBucket("readcount-" + (nativeFs ? "n" : "s"));
        try (FileSystem fs = HadoopS3.fs(bucket, HadoopS3.conf(nativeFs))) {
            Path path = new Path("s3a://" + bucket + "/dir/file.pending");
            try (FSDataOutputStream out = fs.create(path, true)) {
                out.write(HadoopS3.data(SIZE, 5));
            }
            FileStatus status = fs.getFileStatus(path);
            assertEquals(nativeFs, fs instanceof NativeS3AFileSystem, "filesystem " + fs.getClass());
            Map<String, Long> before = metrics((S3AFileSystem) fs);
            FileSystem.Statistics stats = FileSystem.getStatistics("s3a", fs.getClass());
            long bytes = stats.getBytesRead();
            long opens = nativeFs ? ((NativeS3AFileSystem) fs).getNativeOpenCount() : 0;
            reads.run(fs, path, status);
            if (nativeFs) {
                assertEquals(opens + 1, ((NativeS3AFileSystem) fs).getNativeOpenCount(), "read natively");
            }
            Map<String, Long> d = diff(before, metrics((S3AFileSystem) fs));
            d.put("FileSystem.Statistics bytesRead", stats.getBytesRead() - bytes);
            System.out.println((nativeFs ? "native" : "stock ") + " metrics moved: " + d);
            return d;
        }
    }

    /**
     * Counters S3A's stream has and the native one, by design, has not (or counts otherwise):
     * each with its reason. Everything else must move by the same amount on both.
     */
    private static final Map<String, String> NOT_COMPARED = Map.of();

    private static void assertSameCounters(String what, Reads reads, long gets) throws Exception {
        Map<String, Long> stock = counted(false, reads);
        Map<String, Long> ours = counted(true, reads);
        assertEquals(gets, stock.get(NativeS3AInputStream.ACTION_HTTP_GET_REQUEST), what + ": stock GETs " + stock);
        assertEquals(gets, ours.get(NativeS3AInputStream.ACTION_HTTP_GET_REQUEST), what + ": native GETs " + ours);
        List<String> differences = new ArrayList<>();
        for (String name : new java.util.TreeSet<>(union(stock, ours))) {
            if (NOT_COMPARED.containsKey(name)) {
                continue;
            }
            Long s = stock.get(name);
            Long n = ours.get(name);
            if (!java.util.Objects.equals(s, n)) {
                differences.add(name + ": stock " + s + ", native " + n);
            }
        }
        assertTrue(differences.isEmpty(), what + ": metrics differ by name:\n  " + String.join("\n  ", differences)
                + "\n  stock " + stock + "\n  native " + ours);
    }

    private static java.util.Set<String> union(Map<String, Long> a, Map<String, Long> b) {
        java.util.Set<String> s = new java.util.HashSet<>(a.keySet());
        s.addAll(b.keySet());
        return s;
    }

    /** ITestCommitOperationCost's .pending load: 1 GET, and the stream's counters, in S3A's metrics. */
    @Test
    void pendingLoadCountsAsS3ADoes() throws Exception {
        assertSameCounters("a .pending load", PENDING_LOAD, 1);
    }

    @Test
    void sequentialReadCountsAsS3ADoes() throws Exception {
        assertSameCounters("sequential reads", SEQUENTIAL, 1);
    }

    @Test
    void positionedReadCountsAsS3ADoes() throws Exception {
        assertSameCounters("a positioned read", PREAD, 1);
    }
}
