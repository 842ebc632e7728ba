package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider;
import org.junit.jupiter.api.Test;

/**
 * A site's provider class whose keys rotate every 1.5 s (no expiry), named in
 * {@code fs.s3a.aws.credentials.provider}, during a many-part upload slowed down by the
 * fault proxy (each part held 0.8 s, one part in flight): the native writer
 * ({@code fs.s3a.native.fallback=fail}) asks S3A's chain again as the keys age (at most once a
 * second without an expiry), so later parts are signed with newer keys, in order, and
 * nothing fails; stock S3A, which asks on every request, writes the same bytes the same way.
 */
class RotatingProviderTest {
    private static final int PART = 5 * 1024 * 1024;
    private static final int PARTS = 8;

    /** The provider class this line's S3A takes: SDK v1 on 3.3, v2 from 3.4. */
    private static String providerClass() {
        boolean v1 = Arrays.stream(SimpleAWSCredentialsProvider.class.getInterfaces())
                .anyMatch(i -> i.getName().equals("com.amazonaws.auth.AWSCredentialsProvider"));
        return v1 ? "io.s3native.sdkv1.RotatingCredentialsProviderV1" : RotatingCredentialsProvider.class.getName();
    }

    private static long generation(String keyId) {
        assertTrue(keyId != null && keyId.startsWith(RotatingCredentialsProvider.KEY_PREFIX), "signed by the provider: " + keyId);
        return Long.parseLong(keyId.substring(RotatingCredentialsProvider.KEY_PREFIX.length()));
    }

    /** Write {@code key} through a filesystem with the rotating provider; the UploadPart key ids in order. */
    private static List<String> write(boolean nativeFs, String bucket, String key, byte[] data) throws Exception {
        Configuration conf = HadoopS3.conf(nativeFs);
        conf.set("fs.s3a.aws.credentials.provider", providerClass());
        conf.set("fs.s3a.native.fallback", "fail");
        conf.set("fs.s3a.native.parts.in.flight", "1");
        conf.set("fs.s3a.fast.upload.active.blocks", "1");
        HadoopS3.addRule("{\"match\": {\"method\": \"PUT\", \"query_has\": \"partNumber\", \"path_contains\": \"" + key
                + "\"}, \"action\": \"delay\", \"delay_ms\": 800, \"count\": -1}");
        try (FileSystem fs = HadoopS3.fs(bucket, conf)) {
            Path path = new Path("s3a://" + bucket + "/" + key);
            try (FSDataOutputStream out = fs.create(path, true)) {
                assertEquals(nativeFs, out.getWrappedStream() instanceof NativeS3AOutputStream, "route");
                for (int off = 0; off < data.length; off += 1 << 20) {
                    out.write(data, off, Math.min(1 << 20, data.length - off));
                }
            }
            if (nativeFs) {
                assertEquals(1, ((NativeS3AFileSystem) fs).getNativeCreateCount());
                assertEquals(0, ((NativeS3AFileSystem) fs).getStockCreateCount());
            }
            assertArrayEquals(data, HadoopS3.read(fs, path), "content of " + key);
        }
        return HadoopS3.accessKeyIdsOf(key, "UploadPart");
    }

    @Test
    void laterPartsAreSignedWithTheRotatedKeys() throws Exception {
        String bucket = HadoopS3.newBucket("rotating");
        byte[] data = HadoopS3.data(PARTS * PART + 1000, 9);
        for (boolean nativeFs : new boolean[] {true, false}) {
            String key = "rotating-" + (nativeFs ? "native" : "stock") + "-" + System.nanoTime();
            List<String> ids = write(nativeFs, bucket, key, data);
            String what = (nativeFs ? "native" : "stock") + " UploadPart key ids " + ids;
            assertEquals(PARTS + 1, ids.size(), what);
            long first = generation(ids.get(0));
            long previous = first;
            for (String id : ids) {
                long g = generation(id);
                assertTrue(g >= previous, "parts signed with keys no older than the previous part's: " + what);
                previous = g;
            }
            assertTrue(previous >= first + 3, "the keys rotated at least 3 times during the upload: " + what);
            assertTrue(ids.stream().distinct().count() >= 3, what);
            assertFalse(HadoopS3.accessKeyIds(key).stream().anyMatch(k -> k == null || !k.startsWith(RotatingCredentialsProvider.KEY_PREFIX)),
                    "every request signed by the provider: " + HadoopS3.accessKeyIds(key));
        }
    }
}
