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
 * (native/src/reader.rs, feature {@code test-hooks}) counts every byte copied out of a native
 * reader's buffers into caller memory, by the reader or by the JNI layer, so reading n bytes
 * into a {@code byte[]} (stream read and pread), a direct and a heap ByteBuffer adds exactly
 * n: no native staging buffer between the reader's buffers and the Java array.
 */
@Tag("hooks")
class ReadCopyTest {
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
            long before = NativeHooks.readCopiedBytes();
            int done = 0;
            while (done < all.length) {
                int n = in.read(all, done, Math.min(700_001, all.length - done));
                done += n;
            }
            assertArrayEquals(data, all);
            assertEquals(data.length, NativeHooks.readCopiedBytes() - before, "byte[] stream reads: one copy");

            byte[] some = new byte[1_000_000];
            before = NativeHooks.readCopiedBytes();
            in.readFullyAt(123, some, 0, some.length);
            assertArrayEquals(Arrays.copyOfRange(data, 123, 123 + some.length), some);
            assertEquals(some.length, NativeHooks.readCopiedBytes() - before, "byte[] preads: one copy");

            for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.allocateDirect(500_000), ByteBuffer.allocate(500_000)}) {
                before = NativeHooks.readCopiedBytes();
                while (b.hasRemaining()) {
                    in.readAt(2_000_000L + b.position(), b);
                }
                b.flip();
                byte[] got = new byte[b.remaining()];
                b.get(got);
                assertArrayEquals(Arrays.copyOfRange(data, 2_000_000, 2_500_000), got);
                assertEquals(500_000, NativeHooks.readCopiedBytes() - before, (b.isDirect() ? "direct" : "heap") + " ByteBuffer: one copy");
            }
        }
    }
}
