package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/** Objects of every interesting size through the Java stream, read back with the AWS SDK. */
class RoundTripTest {
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3Test.newBucket("roundtrip");
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {0, 1, PART - 1, PART, PART + 1, 3 * PART + 12345})
    void sizes(int size) throws Exception {
        byte[] data = S3Test.data(size, size);
        String key = "size/" + size;
        UploadResult r;
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            // Uneven chunks, so parts are cut inside a write call.
            int off = 0;
            int chunk = 1;
            while (off < size) {
                int n = Math.min(chunk, size - off);
                out.write(data, off, n);
                off += n;
                chunk = chunk * 7 + 3;
            }
            r = out.closeAndGetResult();
        }
        assertArrayEquals(data, S3Test.get(bucket, key), "object content");
        assertEquals(size, r.getLength());
        assertEquals(bucket, r.getBucket());
        assertEquals(key, r.getKey());
        assertTrue(r.isCompleted());
        HeadObjectResponse head = S3Test.s3().headObject(b -> b.bucket(bucket).key(key));
        assertEquals(size, head.contentLength());
        int parts = size <= PART ? 0 : (size + PART - 1) / PART;
        if (parts == 0) {
            assertNull(r.getUploadId(), "data within one part is one PUT");
            assertEquals(1, r.getEtags().size());
            assertEquals(head.eTag(), r.getEtags().get(0));
            assertEquals(1, r.getStatistics().getSinglePuts());
        } else {
            assertTrue(r.isMultipart());
            assertEquals(parts, r.getEtags().size(), "one ETag per part");
            assertTrue(head.eTag().replace("\"", "").endsWith("-" + parts), "multipart ETag " + head.eTag());
            assertEquals(parts, r.getStatistics().getPartsUploaded());
        }
        assertEquals(size, r.getStatistics().getBytesWritten());
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.key().equals(key)), "no upload left open");
    }

    @Test
    void mixedWriteCalls() throws Exception {
        String key = "mixed";
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        byte[] pattern = S3Test.data(PART + 4096, 99);
        ByteBuffer direct = ByteBuffer.allocateDirect(700_000);
        UploadResult r;
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            int i = 0;
            int round = 0;
            while (expected.size() < 2 * PART + 777) {
                switch (round++ % 5) {
                    case 0: // single bytes through the small buffer, across its size
                        for (int k = 0; k < 3000; k++) {
                            byte b = pattern[i++ % pattern.length];
                            out.write(b);
                            expected.write(b);
                        }
                        break;
                    case 1: { // an array slice
                        int off = i % 1000;
                        int len = 333_333;
                        byte[] src = new byte[off + len + 17];
                        System.arraycopy(pattern, 0, src, 0, Math.min(pattern.length, src.length));
                        out.write(src, off, len);
                        expected.write(src, off, len);
                        break;
                    }
                    case 2: { // a heap ByteBuffer with an array offset and position
                        ByteBuffer heap = ByteBuffer.wrap(pattern, 1000, 500_000).slice();
                        heap.position(10);
                        byte[] copy = new byte[heap.remaining()];
                        heap.duplicate().get(copy);
                        out.write(heap);
                        assertFalse(heap.hasRemaining());
                        expected.write(copy);
                        break;
                    }
                    case 3: { // a direct ByteBuffer with a position
                        direct.clear();
                        direct.put(pattern, 0, direct.capacity());
                        direct.position(123);
                        byte[] copy = new byte[direct.remaining()];
                        direct.duplicate().get(copy);
                        out.write(direct);
                        assertFalse(direct.hasRemaining());
                        expected.write(copy);
                        break;
                    }
                    default: { // a read-only heap buffer (no accessible array)
                        ByteBuffer ro = ByteBuffer.wrap(pattern, 7, 4000).asReadOnlyBuffer();
                        byte[] copy = new byte[ro.remaining()];
                        ro.duplicate().get(copy);
                        out.write(ro);
                        expected.write(copy);
                        out.flush();
                    }
                }
            }
            r = out.closeAndGetResult();
        }
        byte[] want = expected.toByteArray();
        assertEquals(want.length, r.getLength());
        assertArrayEquals(want, S3Test.get(bucket, key));
        assertEquals(3, r.getEtags().size());
    }
}
