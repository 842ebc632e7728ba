package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Deferred uploads: closed here, completed or aborted in a second JVM process. */
class DeferredTest {
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3Test.newBucket("deferred");
    }

    private UploadResult deferred(String key, byte[] data) throws Exception {
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.DEFERRED, S3Test.settings())) {
            out.write(data);
            UploadResult r = out.closeAndGetResult();
            assertFalse(r.isCompleted());
            assertTrue(r.isMultipart());
            assertEquals(data.length, r.getLength());
            assertFalse(S3Test.exists(bucket, key), "a deferred upload is not visible before complete");
            assertTrue(S3Test.uploads(bucket).stream().anyMatch(u -> u.uploadId().equals(r.getUploadId())));
            return r;
        }
    }

    @Test
    void completeInAnotherJvm() throws Exception {
        byte[] data = S3Test.data(2 * PART + 100, 1);
        UploadResult r = deferred("complete-me", data);
        UploadResult back = UploadResult.fromJson(r.toJson());
        assertEquals(r, back);
        assertEquals(r.getEtags(), back.getEtags());
        File f = S3Test.tempFile(r.toJson());
        String out = S3Test.runChild("complete", f.getPath(), S3Test.endpoint());
        assertTrue(out.contains("COMPLETED complete-me"), out);
        assertArrayEquals(data, S3Test.get(bucket, "complete-me"));
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.uploadId().equals(r.getUploadId())));
        // Completing again succeeds (the object matches the result).
        S3NativeOutputStream.complete(r, S3Test.settings());
    }

    @Test
    void abortInAnotherJvm() throws Exception {
        UploadResult r = deferred("abort-me", S3Test.data(PART + 1, 2));
        File f = S3Test.tempFile(r.toJson());
        String out = S3Test.runChild("abort", f.getPath(), S3Test.endpoint());
        assertTrue(out.contains("ABORTED abort-me"), out);
        assertFalse(S3Test.exists(bucket, "abort-me"));
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.uploadId().equals(r.getUploadId())));
        // The upload is gone: completing it now fails (S3 answers NoSuchUpload, a
        // FileNotFoundException; moto answers 500, an IOException); aborting again is fine.
        assertThrows(IOException.class, () -> S3NativeOutputStream.complete(r, S3Test.settings()));
        S3NativeOutputStream.abort(r, S3Test.settings());
    }

    @Test
    void emptyDeferredUploadHasOnePart() throws Exception {
        UploadResult r = deferred("empty", new byte[0]);
        assertEquals(1, r.getEtags().size());
        S3NativeOutputStream.complete(r, S3Test.settings());
        assertEquals(0, S3Test.get(bucket, "empty").length);
    }

    @Test
    void badJsonIsIllegalArgument() {
        assertThrows(IllegalArgumentException.class, () -> UploadResult.fromJson("{\"bucket\": 1}"));
        assertThrows(IllegalArgumentException.class, () -> UploadResult.fromJson(null));
    }
}
