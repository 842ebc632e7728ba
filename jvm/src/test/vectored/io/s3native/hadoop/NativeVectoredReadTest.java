package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.junit.jupiter.api.Test;

/**
 * Vectored reads (3.4+: src/test/vectored) through {@link NativeS3AFileSystem} against stock
 * S3A's classic stream on the same object: seeded batches of disjoint ranges (small holes that
 * coalesce, large ranges that split), into heap and direct buffers; every range's bytes equal
 * stock's and the object's, and the native stream counted its vectored reads.
 */
class NativeVectoredReadTest {
    private static final int LEN = 10 * 1024 * 1024 + 17;

    /** Sorted disjoint ranges: {@code count} of them, with holes from a few bytes to 2 MiB. */
    private static List<FileRange> ranges(Random r, int count) {
        List<FileRange> out = new ArrayList<>();
        long at = r.nextInt(1000);
        for (int i = 0; i < count && at < LEN; i++) {
            int len = (int) Math.min(LEN - at, 1 + r.nextInt(i % 5 == 0 ? 3_000_000 : 40_000));
            out.add(FileRange.createFileRange(at, len));
            at += len + (r.nextBoolean() ? r.nextInt(64) : r.nextInt(2 << 20));
        }
        return out;
    }

    private static List<byte[]> read(FSDataInputStream in, List<FileRange> ranges, IntFunction<ByteBuffer> allocate)
            throws Exception {
        in.readVectored(ranges, allocate);
        List<byte[]> out = new ArrayList<>();
        for (FileRange range : ranges) {
            ByteBuffer b = range.getData().get(60, TimeUnit.SECONDS);
            byte[] a = new byte[b.remaining()];
            b.get(a);
            out.add(a);
        }
        return out;
    }

    @Test
    void seededBatchesEqualStockAndTheObject() throws Exception {
        String bucket = HadoopS3.newBucket("vectored");
        Configuration stockConf = HadoopS3.conf(false);
        stockConf.set("fs.s3a.input.stream.type", "classic");
        Configuration nativeConf = HadoopS3.conf(true);
        nativeConf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: as stock
        nativeConf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        byte[] data = HadoopS3.data(LEN, 11);
        Path p = new Path("/v.bin");
        try (FileSystem stock = HadoopS3.fs(bucket, stockConf); FileSystem ours = HadoopS3.fs(bucket, nativeConf)) {
            try (FSDataOutputStream out = stock.create(p, true)) {
                out.write(data);
            }
            Random r = new Random(42);
            for (int batch = 0; batch < 4; batch++) {
                List<FileRange> ranges = ranges(r, 5 + r.nextInt(20));
                IntFunction<ByteBuffer> allocate = batch % 2 == 0 ? ByteBuffer::allocate : ByteBuffer::allocateDirect;
                List<byte[]> fromStock;
                try (FSDataInputStream in = stock.open(p)) {
                    fromStock = read(in, copy(ranges), allocate);
                }
                try (FSDataInputStream in = ours.open(p)) {
                    assertTrue(in.hasCapability("in:readvectored"));
                    List<byte[]> fromNative = read(in, copy(ranges), allocate);
                    IOStatistics s = ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics();
                    assertEquals(1L, s.counters().get("stream_read_vectored_operations"), s.toString());
                    assertEquals((long) ranges.size(), s.counters().get("stream_read_vectored_incoming_ranges"), s.toString());
                    for (int i = 0; i < ranges.size(); i++) {
                        FileRange range = ranges.get(i);
                        byte[] want = java.util.Arrays.copyOfRange(data, (int) range.getOffset(),
                                (int) range.getOffset() + range.getLength());
                        assertArrayEquals(want, fromStock.get(i), "stock, batch " + batch + " range " + i);
                        assertArrayEquals(fromStock.get(i), fromNative.get(i), "native, batch " + batch + " range " + i);
                    }
                }
            }
        }
    }

    /**
     * Inside a declared length longer than the object (openFile's length option, no status), a
     * range starting past the object's real end fails its future with S3A's
     * RangeNotSatisfiableEOFException (S3's 416), one running past it with an EOFException (the
     * native one in readFully's words), on both filesystems; a range past the declared length
     * fails the call.
     */
    @Test
    void rangesPastTheRealEndInsideADeclaredLengthFailTheirFuturesAsStock() throws Exception {
        String bucket = HadoopS3.newBucket("vectored-declen");
        Configuration stockConf = HadoopS3.conf(false);
        stockConf.set("fs.s3a.input.stream.type", "classic");
        Configuration nativeConf = HadoopS3.conf(true);
        nativeConf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: as stock
        nativeConf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        int len = 64 * 1024;
        long declared = len + 1024;
        byte[] data = HadoopS3.data(len, 6);
        Path p = new Path("/declen.bin");
        try (FileSystem stock = HadoopS3.fs(bucket, stockConf); FileSystem ours = HadoopS3.fs(bucket, nativeConf)) {
            try (FSDataOutputStream out = stock.create(p, true)) {
                out.write(data);
            }
            for (FileSystem fs : List.of(stock, ours)) {
                String who = fs.getClass().getName();
                try (FSDataInputStream in = fs.openFile(p).must("fs.option.openfile.length", Long.toString(declared)).build().get()) {
                    List<FileRange> past = List.of(FileRange.createFileRange(len, 100));
                    in.readVectored(past, ByteBuffer::allocate);
                    ExecutionException e = assertThrows(ExecutionException.class, () -> past.get(0).getData().get(60, TimeUnit.SECONDS), who);
                    assertTrue(e.getCause() instanceof org.apache.hadoop.fs.s3a.RangeNotSatisfiableEOFException, who + ": " + e.getCause());
                    assertTrue(e.getCause().getMessage().contains("416"), who + ": " + e.getCause().getMessage());

                    List<FileRange> across = List.of(FileRange.createFileRange(0, (int) declared));
                    in.readVectored(across, ByteBuffer::allocate);
                    e = assertThrows(ExecutionException.class, () -> across.get(0).getData().get(60, TimeUnit.SECONDS), who);
                    assertTrue(e.getCause() instanceof EOFException, who + ": " + e.getCause());
                    if (fs == ours) {
                        // readFully's words (as the contract test of later lines expects), the key named.
                        String m = e.getCause().getMessage();
                        assertTrue(m.contains(org.apache.hadoop.fs.FSExceptionMessages.EOF_IN_READ_FULLY) && m.contains("declen.bin"), m);
                    }

                    List<FileRange> beyond = List.of(FileRange.createFileRange(declared, 1));
                    assertThrows(EOFException.class, () -> in.readVectored(beyond, ByteBuffer::allocate), who);

                    List<FileRange> good = List.of(FileRange.createFileRange(len - 10, 10));
                    assertArrayEquals(java.util.Arrays.copyOfRange(data, len - 10, len), read(in, good, ByteBuffer::allocate).get(0), who);
                }
            }
        }
    }

    /**
     * Inside a declared length longer than the object, a range past the real end fails its own
     * future alone (EOFException: found only when its GET answers short or 416), and the other
     * ranges of the same call complete with their bytes, whether one GET covers them all or
     * each has its own.
     */
    @Test
    void aRangePastTheRealEndFailsAloneAndTheOtherRangesComplete() throws Exception {
        String bucket = HadoopS3.newBucket("vectored-alone");
        int len = 64 * 1024;
        byte[] data = HadoopS3.data(len, 7);
        Path p = new Path("/alone.bin");
        for (String hole : new String[] {"1M", "1"}) {
            Configuration nativeConf = HadoopS3.conf(true);
            nativeConf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
            nativeConf.set("fs.s3a.native.read.vectored.hole.size", hole);
            // The classic stream trusts a declared length; the analytics one (3.4.3+'s
            // default) sends a HEAD at open, and the range then fails at the call.
            nativeConf.set("fs.s3a.input.stream.type", "classic");
            try (FileSystem ours = HadoopS3.fs(bucket, nativeConf)) {
                try (FSDataOutputStream out = ours.create(p, true)) {
                    out.write(data);
                }
                try (FSDataInputStream in = ours.openFile(p).must("fs.option.openfile.length", Long.toString(len + 4096)).build().get()) {
                    // Range 0 starts past the real end; 1 and 2 lie inside it.
                    List<FileRange> ranges = List.of(FileRange.createFileRange(len + 100, 100), FileRange.createFileRange(0, 100),
                            FileRange.createFileRange(len - 100, 100));
                    in.readVectored(ranges, ByteBuffer::allocate);
                    ExecutionException e = assertThrows(ExecutionException.class, () -> ranges.get(0).getData().get(60, TimeUnit.SECONDS),
                            "hole " + hole);
                    assertTrue(e.getCause() instanceof EOFException, "hole " + hole + ": " + e.getCause());
                    for (int i = 1; i < ranges.size(); i++) {
                        FileRange r = ranges.get(i);
                        ByteBuffer b = r.getData().get(60, TimeUnit.SECONDS);
                        byte[] got = new byte[b.remaining()];
                        b.get(got);
                        int from = (int) r.getOffset();
                        assertArrayEquals(java.util.Arrays.copyOfRange(data, from, from + r.getLength()), got, "hole " + hole + ": range " + i);
                    }
                }
            }
        }
    }

    /**
     * A range past the end (one starting at the end, one ending a byte past it) makes
     * readVectored itself throw EOFException on both filesystems, before any range gets a
     * future; the stream stays usable for ranges inside the object.
     */
    @Test
    void aRangePastTheEndThrowsEofFromTheCallAsStock() throws Exception {
        String bucket = HadoopS3.newBucket("vectored-eof");
        Configuration stockConf = HadoopS3.conf(false);
        stockConf.set("fs.s3a.input.stream.type", "classic");
        Configuration nativeConf = HadoopS3.conf(true);
        nativeConf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: as stock
        nativeConf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        int len = 64 * 1024;
        byte[] data = HadoopS3.data(len, 5);
        Path p = new Path("/eof.bin");
        try (FileSystem stock = HadoopS3.fs(bucket, stockConf); FileSystem ours = HadoopS3.fs(bucket, nativeConf)) {
            try (FSDataOutputStream out = stock.create(p, true)) {
                out.write(data);
            }
            for (FileSystem fs : List.of(stock, ours)) {
                for (List<FileRange> bad : List.of(List.of(FileRange.createFileRange(len, 100)),
                        List.of(FileRange.createFileRange(0, len + 1)))) {
                    try (FSDataInputStream in = fs.open(p)) {
                        List<FileRange> ranges = copy(bad);
                        EOFException e = assertThrows(EOFException.class, () -> in.readVectored(ranges, ByteBuffer::allocate),
                                fs.getClass().getName());
                        if (fs == ours) {
                            // The native reader's end-of-file error, naming the range and the key.
                            assertTrue(e.getMessage().contains("eof.bin") && e.getMessage().contains("past the end"), e.getMessage());
                        }
                        assertNull(ranges.get(0).getData(), fs.getClass().getName());
                        List<FileRange> good = List.of(FileRange.createFileRange(len - 10, 10));
                        assertArrayEquals(java.util.Arrays.copyOfRange(data, len - 10, len), read(in, good, ByteBuffer::allocate).get(0));
                    }
                }
            }
        }
    }

    /**
     * close() and unbuffer() with ranges in flight stop them, on stock and native alike: every
     * future completes, and those not yet delivered fail with InterruptedIOException; a stream
     * opened again (after close) or the same stream (after unbuffer) then reads them whole.
     */
    @Test
    void closeAndUnbufferFailTheRangesInFlightAsStock() throws Exception {
        String bucket = HadoopS3.newBucket("vectored-stop");
        Configuration stockConf = HadoopS3.conf(false);
        stockConf.set("fs.s3a.input.stream.type", "classic");
        Configuration nativeConf = HadoopS3.conf(true);
        nativeConf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: as stock
        nativeConf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        byte[] data = HadoopS3.data(LEN, 6);
        Path p = new Path("/stop.bin");
        List<FileRange> wanted = List.of(FileRange.createFileRange(0, 1000), FileRange.createFileRange(3 << 20, 2 << 20),
                FileRange.createFileRange(LEN - 3_000_000, 3_000_000));
        try (FileSystem stock = HadoopS3.fs(bucket, stockConf); FileSystem ours = HadoopS3.fs(bucket, nativeConf)) {
            try (FSDataOutputStream out = stock.create(p, true)) {
                out.write(data);
            }
            for (FileSystem fs : List.of(stock, ours)) {
                for (boolean close : new boolean[] {true, false}) {
                    String what = fs.getClass().getSimpleName() + (close ? " close" : " unbuffer");
                    try (FSDataInputStream in = fs.open(p)) {
                        List<FileRange> ranges = copy(wanted);
                        in.readVectored(ranges, ByteBuffer::allocate);
                        if (close) {
                            in.close();
                        } else {
                            in.unbuffer();
                        }
                        int interrupted = 0;
                        for (FileRange r : ranges) {
                            try {
                                r.getData().get(60, TimeUnit.SECONDS);
                            } catch (ExecutionException e) {
                                assertTrue(e.getCause() instanceof InterruptedIOException, what + ": " + e.getCause());
                                interrupted++;
                            }
                        }
                        assertTrue(interrupted > 0, what + ": no range failed");
                        assertTrue(!Thread.currentThread().isInterrupted(), what);
                        if (!close) {
                            assertRangesEqual(data, wanted, read(in, copy(wanted), ByteBuffer::allocate), what + ", again");
                        }
                    }
                    try (FSDataInputStream in = fs.open(p)) {
                        assertRangesEqual(data, wanted, read(in, copy(wanted), ByteBuffer::allocate), what + ", reopened");
                    }
                }
            }
        }
    }

    private static void assertRangesEqual(byte[] data, List<FileRange> wanted, List<byte[]> got, String what) {
        for (int i = 0; i < wanted.size(); i++) {
            FileRange r = wanted.get(i);
            int from = (int) r.getOffset();
            assertArrayEquals(java.util.Arrays.copyOfRange(data, from, from + r.getLength()), got.get(i), what + ": range " + i);
        }
    }

    private static List<FileRange> copy(List<FileRange> ranges) {
        List<FileRange> out = new ArrayList<>();
        for (FileRange f : ranges) {
            out.add(FileRange.createFileRange(f.getOffset(), f.getLength()));
        }
        return out;
    }
}
