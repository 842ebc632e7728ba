package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Tests that need the native test hooks (cargo feature {@code test-hooks}): they run against a
 * hook-enabled build ({@code make test} runs them with {@code -Ds3native.library.path} set to
 * one); every other test runs against the release library the jar ships, which has no hooks.
 */
@Tag("hooks")
class HooksTest {
    @Test
    void aPanicBecomesAnException() throws Exception {
        Native.init();
        IOException e = assertThrows(IOException.class, NativeHooks::panicForTest);
        assertTrue(e.getMessage().contains("deliberate panic 1"), e.getMessage());
        // The JVM and the library still work: a write round trip succeeds and is counted.
        long closedBefore = S3NativeOutputStream.globalStatistics().getWritersClosed();
        String bucket = S3Test.newBucket("after-panic");
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            out.write(new byte[] {4, 2});
        }
        assertArrayEquals(new byte[] {4, 2}, S3Test.get(bucket, "k"));
        assertEquals(closedBefore + 1, S3NativeOutputStream.globalStatistics().getWritersClosed());
    }
}
