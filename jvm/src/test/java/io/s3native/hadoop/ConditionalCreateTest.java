package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.EnumSet;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hadoop 3.5's conditional create ({@code fs.s3a.create.conditional.enabled}, default true):
 * in create-performance mode a {@code createNonRecursive} without OVERWRITE is written with
 * {@code If-None-Match: *}, and an object already at the path fails close with S3A's
 * {@code RemoteFileChangedException} (412). Each case runs on stock S3A and on
 * NativeS3AFileSystem and must end the same way: same outcome, same exception class, same
 * object left, same requests. Skipped on lines without the key (3.3, 3.4), where
 * NativeS3AFileSystem never sends the header.
 */
class ConditionalCreateTest {
    private static final int SMALL = 1000;
    /** Three parts of fs.s3a.multipart.size=5M: a multipart upload on both. */
    private static final int LARGE = 11 * 1024 * 1024;

    private static String bucket;

    @BeforeAll
    static void lineHasConditionalCreate() throws IOException {
        boolean has;
        try {
            org.apache.hadoop.fs.s3a.Constants.class.getField("FS_S3A_CONDITIONAL_CREATE_ENABLED");
            has = true;
        } catch (NoSuchFieldException e) {
            has = false;
        }
        Assumptions.assumeTrue(has, "this Hadoop line has no fs.s3a.create.conditional.enabled");
        bucket = HadoopS3.newBucket("conditional");
    }

    private static Configuration conf(boolean nativeFs, boolean conditional) {
        Configuration conf = HadoopS3.conf(nativeFs);
        conf.setBoolean("fs.s3a.create.conditional.enabled", conditional);
        conf.setBoolean("fs.s3a.create.performance", true);
        conf.set("fs.s3a.native.fallback", "fail");
        return conf;
    }

    /** How one write ended: the exception's class (null: it succeeded), what is at the path, the requests sent. */
    private record Outcome(String failure, String message, byte[] left, List<String> requests) {
    }

    private interface Creator {
        FSDataOutputStream create(FileSystem fs, Path p) throws IOException;
    }

    private static final Creator NON_RECURSIVE_NO_OVERWRITE = (fs, p) -> fs.createNonRecursive(p, FsPermission.getFileDefault(),
            EnumSet.of(CreateFlag.CREATE), 4096, (short) 1, 32 << 20, null);

    /**
     * On a fresh key: write {@code existing} first (stock S3A, unless null), then {@code size}
     * bytes with {@code creator} on the filesystem under test.
     */
    private static Outcome run(boolean nativeFs, boolean conditional, String name, byte[] existing, int size, Creator creator)
            throws Exception {
        String key = "cc/" + name + "-" + (nativeFs ? "native" : "stock");
        Path path = new Path("s3a://" + bucket + "/" + key);
        if (existing != null) {
            // Straight to the server, not through the proxy: its log (a bounded window) then
            // holds only the write under test for this key.
            Configuration direct = HadoopS3.conf(false);
            direct.set("fs.s3a.endpoint", HadoopS3.ENDPOINT);
            try (FileSystem stock = HadoopS3.fs(bucket, direct); FSDataOutputStream out = stock.create(path, true)) {
                out.write(existing);
            }
        }
        try (FileSystem fs = HadoopS3.fs(bucket, conf(nativeFs, conditional))) {
            if (nativeFs) {
                assertTrue(fs instanceof NativeS3AFileSystem, fs.getClass().getName());
            }
            String failure = null;
            String message = null;
            FSDataOutputStream out = creator.create(fs, path);
            try {
                out.write(HadoopS3.data(size, 7));
                out.close();
            } catch (IOException e) {
                failure = e.getClass().getName();
                message = e.getMessage();
            }
            if (nativeFs) {
                assertTrue(((NativeS3AFileSystem) fs).getNativeCreateCount() > 0, "the write was native");
            }
            // This run's bucket and key (path style): an earlier run, on another Hadoop line
            // against the same proxy, wrote the same keys in its own bucket.
            List<String> requests = HadoopS3.requests("/" + bucket + "/" + key);
            return new Outcome(failure, message, HadoopS3.read(fs, path), requests);
        }
    }

    private static void assertSame(Outcome stock, Outcome ours, String what) {
        System.out.println(what + " stock: " + stock.failure + " " + stock.message + " " + stock.requests + "\n"
                + what + " ours:  " + ours.failure + " " + ours.message + " " + ours.requests);
        assertEquals(stock.failure, ours.failure, what + ": the exception");
        assertArrayEquals(stock.left, ours.left, what + ": what is at the path");
        assertEquals(stock.requests, ours.requests, what + ": the requests");
    }

    @Test
    void smallFileOverAnExistingObjectFailsAsOnS3A() throws Exception {
        byte[] old = HadoopS3.data(300, 1);
        Outcome stock = run(false, true, "small-taken", old, SMALL, NON_RECURSIVE_NO_OVERWRITE);
        Outcome ours = run(true, true, "small-taken", old, SMALL, NON_RECURSIVE_NO_OVERWRITE);
        assertSame(stock, ours, "small over an object");
        assertEquals("org.apache.hadoop.fs.s3a.RemoteFileChangedException", ours.failure);
        assertArrayEquals(old, ours.left, "the object there stays");
        assertTrue(ours.message.contains("cc/small-taken-native"), ours.message);
        assertEquals(List.of("PutObject"), ours.requests, "no probe, one conditional PUT");
    }

    @Test
    void multipartFileOverAnExistingObjectFailsAsOnS3A() throws Exception {
        byte[] old = HadoopS3.data(300, 2);
        Outcome stock = run(false, true, "large-taken", old, LARGE, NON_RECURSIVE_NO_OVERWRITE);
        Outcome ours = run(true, true, "large-taken", old, LARGE, NON_RECURSIVE_NO_OVERWRITE);
        assertSame(stock, ours, "multipart over an object");
        assertEquals("org.apache.hadoop.fs.s3a.RemoteFileChangedException", ours.failure);
        assertArrayEquals(old, ours.left, "the object there stays");
        assertTrue(HadoopS3.uploads(bucket, "cc/large-taken-native").isEmpty(), "the upload is aborted");
    }

    @Test
    void anAbsentPathIsCreated() throws Exception {
        for (int size : new int[] {SMALL, LARGE}) {
            Outcome stock = run(false, true, "absent-" + size, null, size, NON_RECURSIVE_NO_OVERWRITE);
            Outcome ours = run(true, true, "absent-" + size, null, size, NON_RECURSIVE_NO_OVERWRITE);
            assertSame(stock, ours, "absent, " + size + " bytes");
            assertEquals(null, ours.failure);
            assertArrayEquals(HadoopS3.data(size, 7), ours.left);
        }
    }

    @Test
    void theStreamReportsTheConditionalCapabilityAsS3ADoes() throws Exception {
        for (boolean nativeFs : new boolean[] {false, true}) {
            Path path = new Path("s3a://" + bucket + "/cc/capability-" + nativeFs);
            try (FileSystem fs = HadoopS3.fs(bucket, conf(nativeFs, true))) {
                try (FSDataOutputStream out = NON_RECURSIVE_NO_OVERWRITE.create(fs, path)) {
                    assertTrue(out.hasCapability("fs.option.create.conditional.overwrite"), "nativeFs=" + nativeFs);
                }
                try (FSDataOutputStream out = fs.create(path, true)) {
                    assertFalse(out.hasCapability("fs.option.create.conditional.overwrite"), "nativeFs=" + nativeFs);
                }
            }
        }
    }

    /** With the key false, or through create() (which in performance mode always overwrites), the file is replaced. */
    @Test
    void withoutConditionalCreateTheObjectIsReplacedAsOnS3A() throws Exception {
        byte[] old = HadoopS3.data(300, 3);
        Outcome stock = run(false, false, "disabled", old, SMALL, NON_RECURSIVE_NO_OVERWRITE);
        Outcome ours = run(true, false, "disabled", old, SMALL, NON_RECURSIVE_NO_OVERWRITE);
        assertSame(stock, ours, "conditional create disabled");
        assertEquals(null, ours.failure);
        Creator createNoOverwrite = (fs, p) -> fs.create(p, false);
        stock = run(false, true, "create-no-overwrite", old, SMALL, createNoOverwrite);
        ours = run(true, true, "create-no-overwrite", old, SMALL, createNoOverwrite);
        assertSame(stock, ours, "create(path, false) in performance mode");
        assertEquals(null, ours.failure);
        assertNotNull(ours.left);
        assertArrayEquals(HadoopS3.data(SMALL, 7), ours.left, "replaced");
    }
    /**
     * Hadoop's AbstractContractCreateTest.testCreateFileOverExistingFileNoOverwrite as
     * ITestS3AContractCreate runs it in create-performance mode
     * ({@code fs.s3a.performance.flags=create}): a file, then the same path again with
     * overwrite false, through {@code create(path, false, ...)} and through the
     * {@code createFile(path).overwrite(false)} builder (not recursive). How each attempt ends
     * (nothing, or the exception's class, at create or at close) and what is left at the
     * path are stock S3A's.
     */
    @Test
    void contractCreateOverAnExistingFileEndsAsOnS3A() throws Exception {
        for (boolean builder : new boolean[] {false, true}) {
            String[] ends = new String[2];
            byte[][] left = new byte[2][];
            for (boolean nativeFs : new boolean[] {false, true}) {
                Configuration conf = HadoopS3.conf(nativeFs);
                conf.unset("fs.s3a.create.conditional.enabled"); // the line's default, as in Hadoop's test
                conf.set("fs.s3a.performance.flags", "create");
                conf.set("fs.s3a.native.fallback", "fail");
                Path path = new Path("s3a://" + bucket + "/contract/" + (builder ? "builder" : "create") + "-" + nativeFs);
                try (FileSystem fs = HadoopS3.fs(bucket, conf)) {
                    writeNoOverwrite(fs, path, HadoopS3.data(256, 1), builder);
                    String end = "ok";
                    try {
                        writeNoOverwrite(fs, path, HadoopS3.data(10 * 1024, 2), builder);
                    } catch (IOException e) {
                        end = e.getClass().getName();
                        System.out.println("builder=" + builder + " native=" + nativeFs + ": " + e);
                    }
                    ends[nativeFs ? 1 : 0] = end;
                    left[nativeFs ? 1 : 0] = HadoopS3.read(fs, path);
                    if (nativeFs && !builder) {
                        assertTrue(((NativeS3AFileSystem) fs).getNativeCreateCount() > 0, "the write was native");
                    }
                }
            }
            System.out.println("builder=" + builder + ": stock " + ends[0] + ", native " + ends[1]);
            assertEquals(ends[0], ends[1], "builder=" + builder + ": how the second write ends");
            assertArrayEquals(left[0], left[1], "builder=" + builder + ": what is left");
        }
    }

    private static void writeNoOverwrite(FileSystem fs, Path path, byte[] data, boolean builder) throws IOException {
        FSDataOutputStream out = builder
                ? fs.createFile(path).overwrite(false).replication((short) 1).bufferSize(1024).blockSize(1024).build()
                : fs.create(path, false, 1024, (short) 1, 1024);
        try {
            out.write(data, 0, data.length);
        } finally {
            out.close();
        }
    }
}
