package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import software.amazon.awssdk.core.sync.RequestBody;

/**
 * {@link S3NativeInputStream} as a plain InputStream (no Hadoop) against the local server:
 * the bytes of every read kind (array, direct buffer, pread, vectored delivered per range into
 * heap and direct buffers), EOF, a missing key, close twice and calls after close.
 */
class InputStreamTest {
    private static final int LEN = 9 * 1024 * 1024 + 123;
    private static String bucket;
    private static byte[] data;

    @BeforeAll
    static void put() {
        bucket = S3Test.newBucket("reader");
        data = S3Test.data(LEN, 5);
        S3Test.s3().putObject(b -> b.bucket(bucket).key("dir/obj"), RequestBody.fromBytes(data));
    }

    @Test
    void everyReadKindReturnsTheObjectsBytes() throws IOException {
        try (S3NativeInputStream in = new S3NativeInputStream(bucket, "dir/obj", S3Test.settings())) {
            assertEquals(LEN, in.getLength());
            assertTrue(in.getEtag().startsWith("\""), in.getEtag());
            byte[] all = in.readAllBytes();
            assertArrayEquals(data, all);
            assertEquals(-1, in.read());
            assertEquals(0, in.available());
            in.seek(1000);
            ByteBuffer direct = ByteBuffer.allocateDirect(3_000_000);
            while (direct.hasRemaining() && in.read(direct) > 0) {
                // fill
            }
            direct.flip();
            byte[] d = new byte[direct.remaining()];
            direct.get(d);
            assertArrayEquals(Arrays.copyOfRange(data, 1000, 3_001_000), d);
            byte[] p = new byte[500_000];
            in.readFullyAt(LEN - p.length, p, 0, p.length);
            assertArrayEquals(Arrays.copyOfRange(data, LEN - p.length, LEN), p);
            assertEquals(3_001_000, in.getPos(), "a pread does not move the position");
            assertThrows(EOFException.class, () -> in.readFullyAt(LEN - 10, new byte[11], 0, 11));
            assertThrows(EOFException.class, () -> in.seek(-1));
            in.unbuffer();
            assertEquals(data[3_001_000] & 0xff, in.read());
            assertTrue(((Long) in.getStatistics().get("bytes_read")) > LEN);
        }
    }

    @Test
    void vectoredRangesArriveEachInItsBuffer() throws IOException {
        long[] offsets = {5_000_000, 0, 100, 8_000_000, LEN - 1};
        int[] lengths = {2_000_000, 50, 70_000, 1_000_000, 1};
        ByteBuffer[] buffers = new ByteBuffer[offsets.length];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = i % 2 == 0 ? ByteBuffer.allocateDirect(lengths[i]) : ByteBuffer.allocate(lengths[i]);
        }
        Set<Integer> delivered = new HashSet<>();
        try (S3NativeInputStream in = S3NativeInputStream.open(bucket, "dir/obj", S3Test.settings(), null,
                S3NativeInputStream.ReadPolicy.RANDOM, -1, null);
                S3NativeInputStream.VectoredRead read = in.readRanges(offsets, lengths)) {
            int i;
            while ((i = read.next(buffers)) >= 0) {
                assertTrue(delivered.add(i), "range " + i + " delivered twice");
            }
            assertThrows(EOFException.class, () -> in.readRanges(new long[] {LEN - 1}, new int[] {2}));
        }
        assertEquals(Set.of(0, 1, 2, 3, 4), delivered);
        for (int i = 0; i < buffers.length; i++) {
            byte[] got = new byte[lengths[i]];
            buffers[i].get(got);
            assertArrayEquals(Arrays.copyOfRange(data, (int) offsets[i], (int) offsets[i] + lengths[i]), got, "range " + i);
        }
    }

    @Test
    void aMissingKeyAndAClosedStream() throws IOException {
        FileNotFoundException e = assertThrows(FileNotFoundException.class,
                () -> new S3NativeInputStream(bucket, "dir/missing", S3Test.settings()));
        assertTrue(e.getMessage().contains("dir/missing"), e.getMessage());
        S3NativeInputStream in = new S3NativeInputStream(bucket, "dir/obj", S3Test.settings());
        assertEquals(data[0] & 0xff, in.read());
        in.close();
        in.close();
        IOException closed = assertThrows(IOException.class, in::read);
        assertTrue(closed.getMessage().startsWith(S3NativeInputStream.STREAM_IS_CLOSED), closed.getMessage());
        assertThrows(IOException.class, () -> in.readAt(0, new byte[1], 0, 1));
        assertThrows(IOException.class, in::getStatistics);
    }
}
