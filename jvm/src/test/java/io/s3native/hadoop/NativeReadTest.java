package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.s3native.UnsupportedSettingException;

/**
 * Native reads through {@link NativeS3AFileSystem} against stock S3A on the same objects
 * (written by stock S3A): for each read kind the same calls on both filesystems return the
 * same bytes, and those are the bytes written; EOF, close and capability semantics; the
 * If-Match pin after an overwrite; a missing object; the fallback WARN and
 * {@code fs.s3a.native.fallback=fail}. Every native stream here is checked to have read
 * natively (its {@code stream_read_bytes}). Stock S3A reads through its classic stream on
 * every line.
 */
class NativeReadTest {
    /** Above the native reader's small-object size (8 MiB): read-ahead and ranged GETs. */
    private static final int LARGE = 12 * 1024 * 1024 + 4321;
    /** Fetched whole at the first read. */
    private static final int SMALL = 300_001;

    private static String bucket;
    private static FileSystem stock;
    private static NativeS3AFileSystem ours;
    private static byte[] large;
    private static byte[] small;

    @BeforeAll
    static void setUp() throws IOException {
        bucket = HadoopS3.newBucket("reads");
        Configuration stockConf = HadoopS3.conf(false);
        // S3A's classic stream on every line (3.4.3 and 3.5.0 default to the analytics one).
        stockConf.set("fs.s3a.input.stream.type", "classic");
        stock = HadoopS3.fs(bucket, stockConf);
        Configuration conf = HadoopS3.conf(true);
        conf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail"); // every open here must be native
        conf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: compared with stock's
        ours = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        large = HadoopS3.data(LARGE, 1);
        small = HadoopS3.data(SMALL, 2);
        put(stock, new Path("/large.bin"), large);
        put(stock, new Path("/small.parquet"), small);
        put(stock, new Path("/empty"), new byte[0]);
        put(stock, new Path("/one"), new byte[] {42});
    }

    @AfterAll
    static void tearDown() {
        HadoopS3.closeAll(stock, ours);
    }

    private static void put(FileSystem fs, Path p, byte[] data) throws IOException {
        try (FSDataOutputStream out = fs.create(p, true)) {
            out.write(data);
        }
    }

    /** The calls of one read kind, run the same way on a stream of either filesystem. */
    private interface Kind {
        byte[] read(FSDataInputStream in, boolean nativeStream) throws IOException;
    }

    /** Runs {@code kind} on both filesystems: equal bytes, the expected ones, and the native stream read natively. */
    private static void same(String what, Path p, byte[] expected, Kind kind) throws IOException {
        byte[] fromStock;
        try (FSDataInputStream in = stock.open(p)) {
            fromStock = kind.read(in, false);
        }
        byte[] fromNative;
        IOStatistics stats;
        long fsBefore = ours.getIOStatistics().counters().getOrDefault("stream_read_bytes", 0L);
        long threadBefore = bytesRead();
        try (FSDataInputStream in = ours.open(p)) {
            assertTrue(in.getWrappedStream() instanceof NativeS3AInputStream, what + ": " + in.getWrappedStream());
            fromNative = kind.read(in, true);
            stats = ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics();
        }
        assertArrayEquals(expected, fromStock, what + ": stock S3A");
        assertArrayEquals(fromStock, fromNative, what + ": native vs stock");
        assertEquals((long) expected.length, stats.counters().get("stream_read_bytes"), what + ": native bytes read " + stats);
        assertEquals(fsBefore + expected.length, ours.getIOStatistics().counters().get("stream_read_bytes"),
                what + ": merged into the filesystem's IOStatistics at close");
        assertEquals(threadBefore + expected.length, bytesRead(),
                what + ": FileSystem.Statistics bytesRead");
    }

    /** FileSystem.Statistics' bytes read of NativeS3AFileSystem (what Spark's input metrics read). */
    @SuppressWarnings("deprecation")
    private static long bytesRead() {
        return FileSystem.getStatistics("s3a", NativeS3AFileSystem.class).getBytesRead();
    }

    private static byte[] slice(byte[] b, long from, int len) {
        return Arrays.copyOfRange(b, (int) from, (int) from + len);
    }

    @Test
    void sequentialReadsIntoArraysAndSingleBytes() throws IOException {
        for (Path p : List.of(new Path("/large.bin"), new Path("/small.parquet"))) {
            byte[] expected = p.getName().equals("large.bin") ? large : small;
            same("read(byte[]) " + p, p, expected, (in, n) -> {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                byte[] buf = new byte[100_003];
                int r;
                while ((r = in.read(buf, 0, buf.length)) >= 0) {
                    out.write(buf, 0, r);
                }
                assertEquals(-1, in.read(), "read() at EOF");
                return out.toByteArray();
            });
            same("read() " + p, p, slice(expected, 0, 5000), (in, n) -> {
                byte[] b = new byte[5000];
                for (int i = 0; i < b.length; i++) {
                    b[i] = (byte) in.read();
                }
                return b;
            });
        }
    }

    @Test
    void seeksAndReadFullyAsParquetReadsAFooter() throws IOException {
        Path p = new Path("/large.bin");
        same("footer", p, concat(slice(large, LARGE - 8, 8), slice(large, LARGE - 70_000, 60_000), slice(large, 4, 1_000_000)),
                (in, n) -> {
                    byte[] tail = new byte[8];
                    in.seek(LARGE - 8);
                    for (int i = 0; i < 4; i++) {
                        tail[i] = (byte) in.read();
                    }
                    in.readFully(tail, 4, 4);
                    byte[] footer = new byte[60_000];
                    in.seek(LARGE - 70_000);
                    in.readFully(footer);
                    byte[] chunk = new byte[1_000_000];
                    in.seek(4);
                    in.readFully(chunk);
                    assertEquals(1_000_004, in.getPos());
                    return concat(tail, footer, chunk);
                });
    }

    @Test
    void positionedReadsAndRandomPatterns() throws IOException {
        Path p = new Path("/large.bin");
        Random r = new Random(7);
        long[] at = new long[40];
        int[] len = new int[at.length];
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        for (int i = 0; i < at.length; i++) {
            len[i] = 1 + r.nextInt(300_000);
            at[i] = r.nextInt(LARGE - len[i]);
            want.write(large, (int) at[i], len[i]);
        }
        same("preads and seeks", p, concat(want.toByteArray(), want.toByteArray()), (in, n) -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int i = 0; i < at.length; i++) {
                byte[] b = new byte[len[i]];
                in.readFully(at[i], b);
                out.write(b);
            }
            for (int i = 0; i < at.length; i++) {
                byte[] b = new byte[len[i]];
                in.seek(at[i]);
                in.readFully(b);
                out.write(b);
            }
            return out.toByteArray();
        });
    }

    @Test
    void byteBufferReadsHeapAndDirect() throws IOException {
        Path p = new Path("/large.bin");
        int n = 2_000_000;
        same("ByteBuffer reads", p, concat(slice(large, 0, n), slice(large, 0, n), slice(large, 5_000_000, n), slice(large, 9_000_000, n)),
                (in, isNative) -> {
                    if (!isNative) { // S3A's streams have no ByteBuffer reads: the same ranges through byte[]
                        assertFalse(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
                        byte[] a = new byte[n];
                        in.readFully(0, a);
                        byte[] b = new byte[n];
                        in.readFully(5_000_000, b);
                        byte[] c = new byte[n];
                        in.readFully(9_000_000, c);
                        return concat(a, a, b, c);
                    }
                    assertTrue(in.hasCapability(StreamCapabilities.READBYTEBUFFER));
                    assertTrue(in.hasCapability("in:preadbytebuffer"));
                    assertTrue(in.hasCapability(StreamCapabilities.UNBUFFER));
                    assertTrue(in.hasCapability("iostatistics"));
                    ByteBuffer heap = ByteBuffer.allocate(n);
                    while (heap.hasRemaining() && in.read(heap) >= 0) {
                        // fill
                    }
                    ByteBuffer direct = ByteBuffer.allocateDirect(n);
                    in.seek(0);
                    while (direct.hasRemaining() && in.read(direct) >= 0) {
                        // fill
                    }
                    ByteBuffer pread = ByteBuffer.allocateDirect(n);
                    in.readFully(5_000_000, pread);
                    ByteBuffer preadHeap = ByteBuffer.allocate(n);
                    in.readFully(9_000_000, preadHeap);
                    return concat(bytes(heap), bytes(direct), bytes(pread), bytes(preadHeap));
                });
    }

    @Test
    void eofCloseAvailableAndUnbufferAsS3A() throws Exception {
        for (FileSystem fs : List.of(stock, ours)) {
            String who = fs == stock ? "stock" : "native";
            try (FSDataInputStream in = fs.open(new Path("/empty"))) {
                assertEquals(-1, in.read(), who);
                assertEquals(-1, in.read(new byte[4], 0, 4), who);
                assertEquals(0, in.available(), who);
            }
            FSDataInputStream in = fs.open(new Path("/one"));
            assertEquals(1, in.available(), who);
            assertThrows(EOFException.class, () -> in.seek(-1), who);
            in.seek(5); // past the end: accepted, reads return -1
            assertEquals(-1, in.read(), who);
            assertThrows(EOFException.class, () -> in.readFully(0, new byte[2]), who);
            assertEquals(-1, in.read(3, new byte[1], 0, 1), who);
            in.seek(0);
            assertEquals(42, in.read(), who);
            in.unbuffer();
            assertEquals(42, in.read(0, new byte[1], 0, 1) == 1 ? 42 : -1, who);
            in.close();
            in.close(); // twice: nothing
            assertThrows(IOException.class, in::read, who);
            assertThrows(IOException.class, () -> in.seek(0), who);
            assertThrows(IOException.class, in::available, who);
            in.unbuffer(); // after close: nothing, as S3A
        }
    }

    @Test
    void openFileWithStatusAndPolicy() throws Exception {
        Path p = new Path("/small.parquet");
        org.apache.hadoop.fs.FileStatus st = ours.getFileStatus(p);
        try (FSDataInputStream in = ours.openFile(p).withFileStatus(st)
                .opt("fs.option.openfile.read.policy", "parquet, vector, random, adaptive").build().get()) {
            byte[] b = new byte[SMALL];
            in.readFully(0, b);
            assertArrayEquals(small, b);
            IOStatistics s = ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics();
            assertEquals(0L, s.counters().get("s3native.object_head_requests"), "the status's length and ETag: no HEAD " + s);
        }
    }

    @Test
    void openFileWithAStatusWithoutEtagSendsNoHeadAndPinsTheFirstGetsEtag() throws Exception {
        // Spark's file statuses are plain FileStatus: a length, no ETag.
        Path p = new Path("/small.parquet");
        org.apache.hadoop.fs.FileStatus st = ours.getFileStatus(p);
        org.apache.hadoop.fs.FileStatus plain = new org.apache.hadoop.fs.FileStatus(st.getLen(), false,
                st.getReplication(), st.getBlockSize(), st.getModificationTime(), st.getPath());
        try (FSDataInputStream in = ours.openFile(p).withFileStatus(plain)
                .opt("fs.option.openfile.read.policy", "parquet, vector, random, adaptive").build().get()) {
            byte[] b = new byte[SMALL];
            in.readFully(0, b);
            assertArrayEquals(small, b);
            NativeS3AInputStream n = (NativeS3AInputStream) in.getWrappedStream();
            IOStatistics s = n.getIOStatistics();
            assertEquals(0L, s.counters().get("s3native.object_head_requests"), "a status's length: no HEAD " + s);
            assertEquals(0L, s.counters().get("s3native.gets_whole"), "a columnar read: not fetched whole " + s);
            assertEquals(((org.apache.hadoop.fs.EtagSource) st).getEtag().replace("\"", ""),
                    n.in.getEtag().replace("\"", ""), "the first GET's ETag is pinned");
        }
    }

    /**
     * openFile with a declared length and no status on {@code fs}, sequential or random (as
     * options: stock S3A 3.3.4 knows neither key and answers the same with its HEAD).
     */
    private static FSDataInputStream declared(FileSystem fs, Path p, long length, String policy) throws Exception {
        return fs.openFile(p).opt("fs.option.openfile.read.policy", policy)
                .opt("fs.s3a.experimental.input.fadvise", policy)
                .opt("fs.option.openfile.length", Long.toString(length)).build().get();
    }

    /** A counter of the stream's IOStatistics (-1 when absent). */
    private static long counter(FSDataInputStream in, String name) {
        return ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics().counters().getOrDefault(name, -1L);
    }

    /**
     * openFile's length option without a status is trusted, as S3A trusts it (ITestS3AOpenCost):
     * no HEAD; reads stop at a shorter length; inside a longer one, readFully fails with
     * EOFException after one GET, a read further past the real end asks S3 and returns -1, and
     * each read past the real end of a fresh stream does the same. The stream's IOStatistics
     * count the open (action_file_opened, 0 ms without a HEAD). Stock S3A answers alike.
     */
    @Test
    void aDeclaredLengthWithoutAStatusIsTrustedAsS3ATrustsIt() throws Exception {
        Path p = new Path("/sixteen");
        byte[] text = "0123456789ABCDEF".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        put(stock, p, text);
        for (FileSystem fs : List.of(stock, ours)) {
            String who = fs.getClass().getName();
            boolean mine = fs == ours;
            try (FSDataInputStream in = declared(fs, p, 14, "sequential")) {
                if (mine) {
                    IOStatistics s = ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics();
                    assertEquals(1L, s.counters().get("action_file_opened"), s.toString());
                    assertEquals(0L, s.minimums().get("action_file_opened.min"), s.toString());
                    assertEquals(0L, s.maximums().get("action_file_opened.max"), s.toString());
                }
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                byte[] buf = new byte[5];
                for (int n; (n = in.read(buf)) > 0; ) {
                    got.write(buf, 0, n);
                }
                // Stock S3A 3.3.4 has no length option (it reads the object's 16 bytes); 3.4+ trust it.
                boolean knowsLength = mine || org.apache.hadoop.util.VersionInfo.getVersion().compareTo("3.4") >= 0;
                assertArrayEquals(Arrays.copyOf(text, knowsLength ? 14 : 16), got.toByteArray(), who);
                if (mine) {
                    assertEquals(0L, counter(in, "s3native.object_head_requests"));
                    assertEquals(1L, counter(in, "stream_read_opened"));
                }
            }
            try (FSDataInputStream in = declared(fs, p, 26, "sequential")) {
                byte[] out = new byte[26];
                assertThrows(EOFException.class, () -> in.readFully(0, out), who);
                assertArrayEquals(text, Arrays.copyOf(out, 16), who);
                in.seek(25);
                assertEquals(-1, in.read(), who);
                if (mine) {
                    assertEquals(2L, counter(in, "stream_read_opened"), "the readFully's GET and the read's");
                    assertEquals(0L, counter(in, "s3native.object_head_requests"));
                }
            }
            try (FSDataInputStream in = declared(fs, p, 26, "sequential")) {
                assertThrows(EOFException.class, () -> in.readFully(16, new byte[10]), who);
                if (mine) {
                    assertEquals(1L, counter(in, "stream_read_opened"));
                }
            }
            try (FSDataInputStream in = declared(fs, p, 26, "random")) {
                for (int i = 16; i < 26; i++) {
                    in.seek(i);
                    assertEquals(-1, in.read(), who + " at " + i);
                }
                if (mine) {
                    assertEquals(10L, counter(in, "action_http_get_request"), "a GET per read past the real end");
                }
            }
            try (FSDataInputStream in = declared(fs, p, 26, "random")) {
                byte[] buf = new byte[27];
                assertEquals(16, in.read(0, buf, 0, buf.length), who);
                assertEquals(-1, in.read(16, buf, 0, buf.length), who);
                if (mine) {
                    assertEquals(1L, counter(in, "action_http_get_request"), "no GET where the short answer ended");
                }
            }
        }
    }

    @Test
    void aDirectoryStatusFailsInBuildAsStock() throws Exception {
        Path p = new Path("/small.parquet");
        for (FileSystem fs : new FileSystem[] {stock, ours}) {
            org.apache.hadoop.fs.FileStatus st = fs.getFileStatus(p);
            org.apache.hadoop.fs.FileStatus dir = new org.apache.hadoop.fs.FileStatus(st.getLen(), true,
                    st.getReplication(), st.getBlockSize(), st.getModificationTime(), fs.makeQualified(p));
            String who = fs.getClass().getSimpleName();
            if (fs != ours && org.apache.hadoop.util.VersionInfo.getVersion().compareTo("3.4") < 0) {
                continue; // S3A 3.3.x ignores the status's directory flag and opens the object
            }
            // thrown by build() itself as S3A 3.4+ (hadoop-aws's ITestS3AContractOpen#testOpenFileDirectory)
            Throwable e = assertThrows(FileNotFoundException.class, () -> fs.openFile(p).withFileStatus(dir).build(), who);
            assertTrue(e.getMessage().contains("small.parquet"), who + ": " + e.getMessage());
        }
        assertEquals(0, ours.getStockOpenCount());
    }

    @Test
    void aMissingObjectIsFileNotFoundAtOpen() throws Exception {
        Path p = new Path("/no/such/object");
        FileNotFoundException e = assertThrows(FileNotFoundException.class, () -> ours.open(p));
        assertTrue(e.getMessage().contains("no/such/object"), e.getMessage());
        ExecutionException f = assertThrows(ExecutionException.class, () -> ours.openFile(p).build().get());
        assertTrue(f.getCause() instanceof FileNotFoundException, String.valueOf(f.getCause()));
        assertEquals(0, ours.getStockOpenCount());
    }

    @Test
    void anObjectOverwrittenAfterOpenFailsTheReadNamingTheKey() throws IOException {
        Path p = new Path("/overwritten.bin");
        byte[] first = HadoopS3.data(SMALL, 3);
        put(stock, p, first);
        try (FSDataInputStream in = ours.open(p)) { // HEAD: length and ETag of the first version
            put(stock, p, HadoopS3.data(SMALL, 4));
            IOException e = assertThrows(IOException.class, () -> in.readFully(0, new byte[100]));
            assertTrue(e.getMessage().contains("overwritten.bin"), e.getMessage());
        }
        try (FSDataInputStream in = ours.open(p)) { // a new open reads the new version
            byte[] b = new byte[SMALL];
            in.readFully(0, b);
            assertArrayEquals(HadoopS3.data(SMALL, 4), b);
        }
    }

    /** Records the WARN lines of NativeS3AFileSystem. */
    private static final class Warnings extends AppenderSkeleton {
        final List<String> lines = new ArrayList<>();

        @Override
        protected synchronized void append(LoggingEvent e) {
            if (e.getLevel().isGreaterOrEqual(Level.WARN)) {
                lines.add(e.getRenderedMessage());
            }
        }

        @Override
        public void close() {
        }

        @Override
        public boolean requiresLayout() {
            return false;
        }
    }

    @Test
    void readsDisabledFallBackWithOneWarnOrFail() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        conf.set(NativeS3AFileSystem.NATIVE_READ_ENABLED, "false");
        Warnings warnings = new Warnings();
        Logger log = Logger.getLogger(NativeS3AFileSystem.class);
        log.addAppender(warnings);
        try (NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf)) {
            for (int i = 0; i < 2; i++) {
                try (FSDataInputStream in = fs.open(new Path("/small.parquet"))) {
                    assertFalse(in.getWrappedStream() instanceof NativeS3AInputStream);
                    byte[] b = new byte[SMALL];
                    in.readFully(0, b);
                    assertArrayEquals(small, b);
                }
            }
            assertEquals(2, fs.getStockOpenCount());
            assertEquals(0, fs.getNativeOpenCount());
        } finally {
            log.removeAppender(warnings);
        }
        assertEquals(List.of("s3native: reading through stock S3A because of fs.s3a.native.read.enabled (bucket " + bucket + ")"),
                warnings.lines);
        conf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        try (FileSystem fs = HadoopS3.fs(bucket, conf)) {
            UnsupportedSettingException e = assertThrows(UnsupportedSettingException.class, () -> fs.open(new Path("/one")));
            assertEquals(NativeS3AFileSystem.NATIVE_READ_ENABLED, e.getSetting());
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        b.flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.write(p, 0, p.length);
        }
        return out.toByteArray();
    }
}
