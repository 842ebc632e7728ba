package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Reads copy each byte once on the way to Java: the test hook {@code readCopiedBytes}
 * (native/src/reader.rs, feature {@code test-hooks}) counts the bytes copied out of a native
 * reader's buffers, into slices by the reader and straight into Java memory by the JNI layer.
 * Reading n bytes into a {@code byte[]} (stream read and pread) or a heap ByteBuffer adds n
 * to the JNI layer's count and nothing to the reader's (no native staging slice before the
 * array: that was the second copy); into a direct ByteBuffer, n to the reader's (its memory
 * is the slice) and nothing to the JNI layer's.
 */
@Tag("hooks")
class ReadCopyTest {
    /** The two counts now: {reader into slices, JNI layer into Java memory}. */
    private static long[] copied() throws IOException {
        return new long[] {NativeHooks.readCopiedBytes(true), NativeHooks.readCopiedBytes(false)};
    }

    private static void assertCopied(long[] before, long intoSlices, long intoJava, String what) throws IOException {
        long[] now = copied();
        assertEquals(intoSlices, now[0] - before[0], what + ": bytes the reader copied into a slice");
        assertEquals(intoJava, now[1] - before[1], what + ": bytes copied straight into Java memory");
    }

    @Test
    void everyReadKindCopiesEachByteOnce() throws IOException {
        Native.init();
        String bucket = S3Test.newBucket("read-copy");
        byte[] data = S3Test.data(3 * 1024 * 1024 + 17, 5);
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            out.write(data);
        }
        try (S3NativeInputStream in = new S3NativeInputStream(bucket, "k", S3Test.settings())) {
            byte[] all = new byte[data.length];
            long[] before = copied();
            int done = 0;
            while (done < all.length) {
                int n = in.read(all, done, Math.min(700_001, all.length - done));
                done += n;
            }
            assertArrayEquals(data, all);
            assertCopied(before, 0, data.length, "byte[] stream reads");

            byte[] some = new byte[1_000_000];
            before = copied();
            in.readFullyAt(123, some, 0, some.length);
            assertArrayEquals(Arrays.copyOfRange(data, 123, 123 + some.length), some);
            assertCopied(before, 0, some.length, "byte[] preads");

            for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.allocateDirect(500_000), ByteBuffer.allocate(500_000)}) {
                before = copied();
                while (b.hasRemaining()) {
                    in.readAt(2_000_000L + b.position(), b);
                }
                b.flip();
                byte[] got = new byte[b.remaining()];
                b.get(got);
                assertArrayEquals(Arrays.copyOfRange(data, 2_000_000, 2_500_000), got);
                assertCopied(before, b.isDirect() ? 500_000 : 0, b.isDirect() ? 0 : 500_000, (b.isDirect() ? "direct" : "heap") + " ByteBuffer");
            }
        }
    }
}
