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
 * Stock runs S3A's classic stream ({@code fs.s3a.input.stream.type=classic}), the one whose
 * counters InputStreamStatistics describes on every line; the analytics stream, the default
 * of 3.5.0, counts its cache and prefetches instead of them and promotes nothing at unbuffer.
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
        try (FSDataInputStream in = fs.openFile(path)
                .opt("fs.option.openfile.read.policy", "whole-file").withFileStatus(status).build().get()) {
            drain(in, 8192);
        }
    };

    /** openFile with the status, then sequential reads of 1000 bytes to the end. */
    private static final Reads SEQUENTIAL = (fs, path, status) -> {
        try (FSDataInputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            drain(in, 1000);
        }
    };

    /**
     * A positioned readFully of the whole object (of a part, S3A's GET runs from the position to
     * the end of its range and drains the rest at close, while the native reader fetches a
     * small object whole: bytes fetched and discarded differ by plan, not by counting).
     */
    private static final Reads PREAD = (fs, path, status) -> {
        try (FSDataInputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            in.readFully(0, new byte[SIZE]);
        }
    };

    /** What the metrics moved by between open and just after an unbuffer (set by UNBUFFER). */
    private static Map<String, Long> atUnbuffer;

    /** 1000 bytes, unbuffer (S3A promotes the counters so far), then the rest. */
    private static final Reads UNBUFFER = (fs, path, status) -> {
        Map<String, Long> before = metrics((S3AFileSystem) fs);
        try (FSDataInputStream in = fs.openFile(path).withFileStatus(status).build().get()) {
            in.readFully(new byte[1000]);
            in.unbuffer();
            atUnbuffer = diff(before, metrics((S3AFileSystem) fs));
            drain(in, 1000);
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
        org.apache.hadoop.conf.Configuration conf = HadoopS3.conf(nativeFs);
        // Both as S3A's classic stream (see the class comment; unknown before 3.4.2: no effect);
        // the native reader counts as the configured stream type counts.
        conf.set("fs.s3a.input.stream.type", "classic");
        try (FileSystem fs = HadoopS3.fs(bucket, conf)) {
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
    private static final Map<String, String> NOT_COMPARED = Map.of(
            "stream_read_closed", "S3A counts the HTTP body it still holds open at close; the native reader reads each"
                    + " GET body to its end and returns the connection to its pool, so none is open to close",
            "stream_read_remote_stream_drain", "S3A times draining that open body at close; nothing is open natively",
            "stream_read_seek_policy_changed", "S3A's stream counts setting its input policy in its constructor (1 a"
                    + " stream); the native reader's policy is fixed at open and never changes",
            "stream_read_operations_incomplete", "S3A counts read() calls answered with fewer bytes than asked; the"
                    + " native reader does not count them (yet: its statistics, native/src/reader)");

    private static void assertSameCounters(String what, Reads reads, long gets) throws Exception {
        assertSameCounters(what, reads, gets, Map.of());
    }

    /** As above; {@code alsoNotCompared}: what this read pattern counts otherwise, with the reason. */
    private static void assertSameCounters(String what, Reads reads, long gets, Map<String, String> alsoNotCompared)
            throws Exception {
        Map<String, Long> stock = counted(false, reads);
        Map<String, Long> ours = counted(true, reads);
        if (gets >= 0) {
            assertEquals(gets, stock.get(NativeS3AInputStream.ACTION_HTTP_GET_REQUEST), what + ": stock GETs " + stock);
            assertEquals(gets, ours.get(NativeS3AInputStream.ACTION_HTTP_GET_REQUEST), what + ": native GETs " + ours);
        }
        assertEquals((long) SIZE, ours.get("stream_read_bytes"), what + ": native bytes read " + ours);
        assertEquals((long) SIZE, ours.get("FileSystem.Statistics bytesRead"), what + ": native " + ours);
        List<String> differences = new ArrayList<>();
        for (String name : new java.util.TreeSet<>(union(stock, ours))) {
            if (NOT_COMPARED.containsKey(name) || alsoNotCompared.containsKey(name)) {
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

    /** An unbuffer adds the counters so far to the metrics (S3A's merge(false)); close the rest, once. */
    @Test
    void unbufferPromotesAsS3ADoes() throws Exception {
        counted(false, UNBUFFER);
        Map<String, Long> stock = atUnbuffer;
        counted(true, UNBUFFER);
        Map<String, Long> ours = atUnbuffer;
        for (String name : List.of("stream_read_bytes", "stream_read_unbuffered", NativeS3AInputStream.ACTION_HTTP_GET_REQUEST)) {
            assertEquals(stock.get(name), ours.get(name), name + " after unbuffer: stock " + stock + ", native " + ours);
        }
        assertEquals(1000L, ours.get("stream_read_bytes"), "native after unbuffer: " + ours);
        String plan = "after the unbuffer S3A GETs the rest from its position (2000 bytes) and counts what it"
                + " drains as read; the native reader GETs the small object whole again (3000)";
        assertSameCounters("reads around an unbuffer", UNBUFFER, 2, Map.of("stream_read_total_bytes", plan,
                "FileSystem.Statistics bytesRead", plan));
    }

    @Test
    void positionedReadCountsAsS3ADoes() throws Exception {
        assertSameCounters("a positioned read", PREAD, 1, Map.of("stream_read_operations", "S3A's readFully(position)"
                + " counts its inner read() calls as stream_read_operations too; the native reader counts a positioned"
                + " read as stream_read_fully_operations only (native/src/reader/s3a.rs)"));
    }
}
