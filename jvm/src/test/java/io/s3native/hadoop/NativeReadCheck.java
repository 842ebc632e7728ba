package io.s3native.hadoop;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.fs.FileSystem;

/**
 * For Hadoop's read contract tests on {@link NativeS3AFileSystem}: each test's filesystem adds
 * its native opens and native bytes read ({@code stream_read_bytes} merged from the native
 * streams at close); a class whose tests read anything must show native reads (with
 * {@code fs.s3a.native.fallback=fail} a stock open would have raised).
 */
final class NativeReadCheck {
    private final AtomicLong opens = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    void record(FileSystem fs) {
        if (fs instanceof NativeS3AFileSystem) {
            NativeS3AFileSystem n = (NativeS3AFileSystem) fs;
            opens.addAndGet(n.getNativeOpenCount());
            bytes.addAndGet(n.getNativeBytesRead());
            if (n.getStockOpenCount() != 0) {
                throw new AssertionError(n.getStockOpenCount() + " opens went to stock S3A");
            }
        }
    }

    void assertNative(String what) {
        if (opens.get() == 0 || bytes.get() == 0) {
            throw new AssertionError(what + ": no native reads (" + opens.get() + " native opens, " + bytes.get() + " bytes)");
        }
    }
}
