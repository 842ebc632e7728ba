package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import software.amazon.awssdk.services.s3.model.MultipartUpload;

/** Streams that are never closed: garbage collected, in a killed JVM, in a JVM that exits. */
class CleanupTest {
    @Test
    void aStreamLeftToTheGarbageCollectorIsAborted() throws Exception {
        String bucket = S3Test.newBucket("gc");
        openAndForget(bucket, "forgotten");
        S3Test.waitFor("the upload to appear", Duration.ofSeconds(30), () -> !S3Test.uploads(bucket).isEmpty());
        S3Test.waitFor("the Cleaner to abort the upload", Duration.ofSeconds(60), () -> {
            System.gc();
            return S3Test.uploads(bucket).isEmpty();
        });
        assertFalse(S3Test.exists(bucket, "forgotten"), "never completed");
    }

    private static void openAndForget(String bucket, String key) throws Exception {
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
        out.write(S3Test.data(PART + 100, 5)); // part 1 is handed off: a multipart upload starts
    }

    @Test
    void aKilledJvmLeavesOnlyUploadsThatAbortCleans() throws Exception {
        String bucket = S3Test.newBucket("killed");
        Process child = S3Test.startChild("hold", bucket, "held", S3Test.endpoint());
        try {
            awaitReady(child);
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        } finally {
            child.destroyForcibly();
        }
        List<MultipartUpload> left = S3Test.uploads(bucket);
        assertEquals(1, left.size(), "the killed JVM's upload stays");
        assertFalse(S3Test.exists(bucket, "held"), "nothing was completed");
        for (MultipartUpload u : left) {
            S3Test.s3().abortMultipartUpload(b -> b.bucket(bucket).key(u.key()).uploadId(u.uploadId()));
        }
        assertTrue(S3Test.uploads(bucket).isEmpty(), "abort cleans it");
    }

    @Test
    void aJvmThatExitsNormallyLeavesNoUpload() throws Exception {
        String bucket = S3Test.newBucket("exits");
        Process child = S3Test.startChild("exit", bucket, "open-at-exit", S3Test.endpoint());
        try {
            awaitReady(child);
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, child.exitValue());
        } finally {
            child.destroyForcibly();
        }
        assertTrue(S3Test.uploads(bucket).isEmpty(), "the shutdown hook aborted the open upload");
        assertFalse(S3Test.exists(bucket, "open-at-exit"));
    }

    private static void awaitReady(Process child) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertEquals("READY", line, "child JVM output");
    }
}
