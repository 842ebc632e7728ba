package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The lifecycle and error rules, each with its exception type. */
class LifecycleTest {
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3Test.newBucket("lifecycle");
    }

    private static S3NativeOutputStream open(String key) throws IOException {
        return new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
    }

    @Test
    void closeTwiceReturnsTheSameResult() throws Exception {
        S3NativeOutputStream out = open("close-twice");
        out.write(new byte[] {1, 2, 3});
        UploadResult first = out.closeAndGetResult();
        out.close();
        assertSame(first, out.closeAndGetResult());
        assertSame(first, out.getResult());
        assertEquals(1, S3Test.s3().listObjectsV2(b -> b.bucket(bucket).prefix("close-twice")).keyCount());
        assertEquals(first.getStatistics(), out.getStatistics());
    }

    @Test
    void writeAfterCloseIsIOException() throws Exception {
        S3NativeOutputStream out = open("write-after-close");
        out.close();
        assertThrows(IOException.class, () -> out.write(1));
        assertThrows(IOException.class, () -> out.write(new byte[10], 0, 10));
        assertThrows(IOException.class, () -> out.write(ByteBuffer.allocate(3)));
        out.flush(); // a no-op on a closed stream
    }

    @Test
    void abortDiscardsAndCloseNeverCompletes() throws Exception {
        S3NativeOutputStream out = open("aborted");
        out.write(S3Test.data(PART + 10, 3)); // part 1 goes up: an upload exists
        S3Test.waitFor("part 1", java.time.Duration.ofSeconds(30), () -> !S3Test.uploads(bucket).isEmpty());
        out.abort();
        assertTrue(out.isAborted());
        assertThrows(IOException.class, out::close);
        assertThrows(IOException.class, () -> out.write(1));
        out.abort(); // again: nothing
        assertFalse(S3Test.exists(bucket, "aborted"));
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.key().equals("aborted")));
        assertTrue(out.getStatistics().getBytesWritten() >= PART);
    }

    @Test
    void abortAfterCloseDoesNothing() throws Exception {
        S3NativeOutputStream out = open("abort-after-close");
        out.write(7);
        out.close();
        out.abort();
        assertArrayEquals(new byte[] {7}, S3Test.get(bucket, "abort-after-close"));
    }

    @Test
    void flushNeverCutsAPart() throws Exception {
        S3NativeOutputStream out = open("flush");
        byte[] chunk = S3Test.data(1024 * 1024, 4);
        for (int i = 0; i < 4; i++) {
            out.write(chunk);
            out.write(42);
            out.flush();
        }
        assertEquals(4L * (chunk.length + 1), out.getStatistics().getBytesWritten(), "flush hands write(int) bytes over");
        UploadResult r = out.closeAndGetResult();
        assertEquals(0, r.getStatistics().getPartsUploaded());
        assertEquals(1, r.getStatistics().getSinglePuts());
    }

    @Test
    void badArgumentsAreIllegalArgumentException() throws Exception {
        try (S3NativeOutputStream out = open("bad-args")) {
            assertThrows(IllegalArgumentException.class, () -> out.write(null, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> out.write(null, 0, 0));
            assertThrows(IllegalArgumentException.class, () -> out.write(new byte[4], -1, 2));
            assertThrows(IllegalArgumentException.class, () -> out.write(new byte[4], 0, -2));
            assertThrows(IllegalArgumentException.class, () -> out.write(new byte[4], 3, 2));
            assertThrows(IllegalArgumentException.class, () -> out.write(new byte[4], Integer.MAX_VALUE, 2));
            assertThrows(IllegalArgumentException.class, () -> out.write((ByteBuffer) null));
            out.write(new byte[4], 4, 0); // an empty range at the end is fine
            out.write(new byte[] {5}, 0, 1); // the stream still works after argument errors
        }
        assertArrayEquals(new byte[] {5}, S3Test.get(bucket, "bad-args"));
        assertThrows(IllegalArgumentException.class,
                () -> new S3NativeOutputStream(bucket, "", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings()));
        assertThrows(IllegalArgumentException.class,
                () -> new S3NativeOutputStream(null, "k", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings()));
    }

    @Test
    void badSettingIsIllegalArgumentNamingIt() {
        Map<String, String> s = new HashMap<>(S3Test.settings());
        s.put("fs.s3a.native.part.size", "1M");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.PUBLISH, s));
        assertTrue(e.getMessage().contains("fs.s3a.native.part.size"), e.getMessage());
    }

    @Test
    void unsupportedSettingHasItsOwnException() {
        Map<String, String> s = new HashMap<>(S3Test.settings());
        s.put("fs.s3a.acl.default", "PublicRead");
        UnsupportedSettingException e = assertThrows(UnsupportedSettingException.class,
                () -> new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.PUBLISH, s));
        assertEquals("fs.s3a.acl.default", e.getSetting());
    }

    @Test
    void missingBucketIsFileNotFound() throws Exception {
        S3NativeOutputStream out = new S3NativeOutputStream("no-such-bucket-s3native", "k", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
        out.write(1);
        FileNotFoundException e = assertThrows(FileNotFoundException.class, out::close);
        assertTrue(e.getMessage().contains("NoSuchBucket"), e.getMessage());
        // Every later call fails; a second close does not report success.
        assertThrows(IOException.class, out::close);
        assertThrows(IOException.class, () -> out.write(2));
    }

    @Test
    void forbiddenIsAccessDenied() throws Exception {
        String key = "forbidden-" + System.nanoTime();
        S3Test.addFaultRule("{\"match\": {\"path_contains\": \"" + key + "\"}, \"action\": \"status\", \"status\": 403,"
                + " \"code\": \"AccessDenied\", \"count\": -1}");
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings(S3Test.faultProxy()));
        out.write(new byte[10]);
        AccessDeniedException e = assertThrows(AccessDeniedException.class, out::close);
        assertTrue(e.getMessage().contains("AccessDenied"), e.getMessage());
    }

    @Test
    void statisticsOfTheWriterAndTheProcess() throws Exception {
        Statistics before = S3NativeOutputStream.globalStatistics();
        S3NativeOutputStream out = open("stats");
        out.write(new byte[1000]);
        assertEquals(1000, out.getStatistics().getBytesWritten());
        out.close();
        Statistics after = S3NativeOutputStream.globalStatistics();
        assertTrue(after.getBytesWritten() >= before.getBytesWritten() + 1000);
        assertTrue(after.getWritersClosed() >= before.getWritersClosed() + 1);
        assertTrue(after.getPutObjectRequests() >= before.getPutObjectRequests() + 1);
        assertEquals(Statistics.NAMES.size(), after.asMap().size());
        assertTrue(after.getBufferPeakBytes() >= 1000, "a part buffer held the bytes: " + after);
        assertEquals(0, out.getStatistics().getBufferPeakBytes(), "buffer figures are process-wide only");
    }
}
