package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.junit.jupiter.api.Test;

import io.s3native.UnsupportedSettingException;

/** Plain-path S3A semantics, the stream, fallback, and equality with stock S3A. */
class FileSystemTest {
    private final String bucket;

    FileSystemTest() throws Exception {
        bucket = HadoopS3.newBucket("fs");
    }

    private Path path(String key) {
        return new Path("s3a://" + bucket + "/" + key);
    }

    @Test
    void sameObjectsAsStockS3A() throws Exception {
        FileSystem stock = HadoopS3.fs(bucket, HadoopS3.conf(false));
        NativeS3AFileSystem ours = HadoopS3.nativeFs(bucket);
        int[] sizes = {0, 1, 1000, 6 * 1024 * 1024 + 3};
        for (int size : sizes) {
            byte[] data = HadoopS3.data(size, size);
            try (FSDataOutputStream out = stock.create(path("stock/f" + size))) {
                out.write(data);
            }
            try (FSDataOutputStream out = ours.create(path("native/f" + size))) {
                out.write(data);
            }
            assertArrayEquals(HadoopS3.read(stock, path("stock/f" + size)), HadoopS3.read(stock, path("native/f" + size)));
            assertArrayEquals(data, HadoopS3.read(ours, path("native/f" + size)));
        }
        assertEquals(sizes.length, ours.getNativeCreateCount());
        assertEquals(List.of(), HadoopS3.uploads(bucket, ""));
    }

    @Test
    void createChecksAsS3A() throws Exception {
        NativeS3AFileSystem fs = HadoopS3.nativeFs(bucket);
        Path f = path("sem/file");
        try (FSDataOutputStream out = fs.create(f)) {
            out.write(1);
            assertFalse(fs.exists(f), "visible only after close");
        }
        assertThrows(FileAlreadyExistsException.class, () -> fs.create(f, false));
        fs.mkdirs(path("sem/dir/sub"));
        assertThrows(FileAlreadyExistsException.class, () -> fs.create(path("sem/dir"), true));
        assertEquals(List.of(), HadoopS3.uploads(bucket, "sem/"), "no upload left by a refused create");
        // createNonRecursive under a file: what stock S3A does on this line (3.3.4 checks that the
        // parent is a directory and raises FileAlreadyExistsException; 3.4+ does not probe the parent).
        String stock = createNonRecursiveOutcome(HadoopS3.fs(bucket, HadoopS3.conf(false)), f);
        assertEquals(HadoopLine.createNonRecursiveProbesParent(getClass().getClassLoader())
                ? FileAlreadyExistsException.class.getName() : "created", stock, "stock S3A on this line");
        assertEquals(stock, createNonRecursiveOutcome(fs, f));
    }

    /** The class of what createNonRecursive of a child of {@code file} raises, or "created". */
    private static String createNonRecursiveOutcome(FileSystem fs, Path file) {
        try {
            fs.createNonRecursive(new Path(file, "child-" + System.nanoTime()), true, 4096, (short) 1, 1L << 26, null)
                    .close();
            return "created";
        } catch (IOException e) {
            return e.getClass().getName();
        }
    }

    @Test
    void parentMarkersFollowThePolicyLikeStock() throws Exception {
        for (boolean nativeFs : new boolean[] {false, true}) {
            FileSystem fs = HadoopS3.fs(bucket, HadoopS3.conf(nativeFs));
            String base = "markers-" + nativeFs + "/a/b";
            fs.mkdirs(path(base));
            try (FSDataOutputStream out = fs.create(path(base + "/f"))) {
                out.write(2);
            }
        }
        assertEquals(HadoopS3.keys(bucket, "markers-false/").toString().replace("markers-false", "X"),
                HadoopS3.keys(bucket, "markers-true/").toString().replace("markers-true", "X"));
    }

    @Test
    void streamLikeS3A() throws Exception {
        Configuration strict = HadoopS3.conf(true);
        strict.setBoolean("fs.s3a.downgrade.syncable.exceptions", false);
        NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, strict);
        try (FSDataOutputStream out = fs.create(path("stream/f"))) {
            assertTrue(out.hasCapability("fs.capability.outputstream.abortable"));
            assertTrue(out.hasCapability("iostatistics"));
            assertFalse(out.hasCapability("hflush"));
            assertFalse(out.hasCapability("hsync"));
            assertFalse(out.hasCapability("fs.s3a.capability.magic.output.stream"));
            assertThrows(UnsupportedOperationException.class, out::hflush);
            assertThrows(UnsupportedOperationException.class, out::hsync);
            out.write(new byte[100]);
            IOStatistics st = ((IOStatisticsSource) out.getWrappedStream()).getIOStatistics();
            assertEquals(100L, st.counters().get("stream_write_bytes"));
        }
        Configuration conf = HadoopS3.conf(true);
        conf.setBoolean("fs.s3a.downgrade.syncable.exceptions", true);
        FileSystem down = HadoopS3.fs(bucket, conf);
        try (FSDataOutputStream out = down.create(path("stream/g"))) {
            out.hflush();
            out.hsync();
        }
        FSDataOutputStream out = fs.create(path("stream/aborted"));
        out.write(new byte[6 * 1024 * 1024]);
        assertFalse(out.abort().alreadyClosed());
        out.close();
        assertFalse(fs.exists(path("stream/aborted")));
        assertEquals(List.of(), HadoopS3.uploads(bucket, "stream/"));
    }

    @Test
    void fileContextUsesTheNativeFileSystem() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        FileContext fc = FileContext.getFileContext(URI.create("s3a://" + bucket + "/"), conf);
        try (FSDataOutputStream out = fc.create(path("fc/f"), java.util.EnumSet.of(org.apache.hadoop.fs.CreateFlag.CREATE),
                org.apache.hadoop.fs.Options.CreateOpts.createParent())) {
            out.write(7);
            assertTrue(out.getWrappedStream() instanceof NativeS3AOutputStream, "native stream: " + out.getWrappedStream());
        }
        assertEquals(1, fc.getFileStatus(path("fc/f")).getLen());
    }

    private void expectStock(Configuration conf, String setting) throws Exception {
        NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        try (FSDataOutputStream out = fs.create(path("fallback/" + System.nanoTime()))) {
            assertFalse(out.getWrappedStream() instanceof NativeS3AOutputStream, setting + " must take the stock route");
            out.write(1);
        }
        assertEquals(0, fs.getNativeCreateCount());
        assertEquals(1, fs.getStockCreateCount());
    }

    @Test
    void fallbackTakesTheStockRoute() throws Exception {
        Configuration off = HadoopS3.conf(true);
        off.setBoolean("fs.s3a.native.enabled", false);
        expectStock(off, "fs.s3a.native.enabled");
        Configuration acl = HadoopS3.conf(true);
        acl.set("fs.s3a.bucket." + bucket + ".acl.default", "Private"); // per-bucket override
        expectStock(acl, "fs.s3a.acl.default");
        Configuration provider = HadoopS3.conf(true);
        provider.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider,"
                + "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
        NativeS3AFileSystem viaChain = (NativeS3AFileSystem) HadoopS3.fs(bucket, provider);
        assertEquals(null, viaChain.getFallbackSetting(), "simple keys after an empty temporary provider stay native");
    }

    @Test
    void aBadNativeValueFailsAtInitializeNamingTheKey() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.native.part.size", "12Q");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HadoopS3.fs(bucket, conf));
        assertTrue(e.getMessage().contains("fs.s3a.native.part.size"), e.getMessage());
        Configuration perBucket = HadoopS3.conf(true);
        perBucket.set("fs.s3a.bucket." + bucket + ".native.parts.in.flight", "0");
        e = assertThrows(IllegalArgumentException.class, () -> HadoopS3.fs(bucket, perBucket));
        assertTrue(e.getMessage().contains("native.parts.in.flight"), e.getMessage());
    }

    @Test
    void aSmallS3APartSizeIsRoundedUpAsS3ADoes() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.multipart.size", "5000000"); // S3A warns and uses 5 MiB
        conf.set("fs.s3a.native.fallback", "fail");
        NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        byte[] data = HadoopS3.data(6 * 1024 * 1024, 8);
        try (FSDataOutputStream out = fs.create(path("rounded/part-size"))) {
            out.write(data);
        }
        assertEquals(1, fs.getNativeCreateCount());
        assertArrayEquals(data, HadoopS3.read(fs, path("rounded/part-size")));
        fs.close();
        // The INFO line shows the core's effective part size, not the value as configured.
        String summary = NativeS3AFileSystem.writeSettingsSummary(
                io.s3native.S3NativeOutputStream.checkSettings(bucket, java.util.Map.of("fs.s3a.multipart.size", "5000000")));
        assertTrue(summary.matches(".*, part size 5 MiB, \\d+ parts in flight"), summary);
    }

    @Test
    void aCustomCredentialProviderWritesNativelyWithItsKeys() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.native.fallback", "fail");
        conf.set("fs.s3a.access.key", "AKIDCUSTOMPROVIDER");
        conf.set("fs.s3a.secret.key", "custom-secret-never-shown");
        conf.set("fs.s3a.aws.credentials.provider", TestCredentialsProvider.class.getName());
        int before = TestCredentialsProvider.CREATED.get();
        NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        assertTrue(TestCredentialsProvider.CREATED.get() > before, "S3A built the configured provider");
        assertEquals(null, fs.getFallbackSetting());
        String marker = "custom-provider-" + System.nanoTime();
        byte[] data = HadoopS3.data(6 * 1024 * 1024, 5); // two parts: Create, 2 x UploadPart, Complete
        try (FSDataOutputStream out = fs.create(path(marker))) {
            out.write(data);
        }
        assertEquals(1, fs.getNativeCreateCount());
        assertArrayEquals(data, HadoopS3.read(fs, path(marker)));
        // Every native request was signed with the provider's key (moto accepts any key).
        List<String> ops = HadoopS3.requests(marker);
        assertTrue(ops.containsAll(List.of("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")), ops.toString());
        assertEquals(java.util.Set.of("AKIDCUSTOMPROVIDER"), HadoopS3.accessKeyIds(marker));
        // A chain whose first provider has nothing (no session token) goes on to the next, as S3A's does.
        conf.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider,"
                + TestCredentialsProvider.class.getName());
        NativeS3AFileSystem chained = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        String marker2 = "custom-chain-" + System.nanoTime();
        try (FSDataOutputStream out = chained.create(path(marker2))) {
            out.write(new byte[] {1, 2, 3});
        }
        assertEquals(java.util.Set.of("AKIDCUSTOMPROVIDER"), HadoopS3.accessKeyIds(marker2));
        HadoopS3.closeAll(fs, chained);
    }

    /**
     * 3.4.1+: with S3A's in-memory magic tracker a magic file is still written natively (no
     * marker, no .pending: the pending commit is kept in S3A's tracker, as stock S3A does),
     * with fallback=fail. The committer life cycle over it is MagicCommitterTest's.
     */
    @Test
    void inMemoryMagicTrackerWritesNatively() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(InMemoryTracker.available(getClass().getClassLoader()),
                "this Hadoop line has no in-memory magic tracker");
        Configuration conf = HadoopS3.conf(true);
        conf.setBoolean("fs.s3a.committer.magic.track.commits.in.memory.enabled", true);
        conf.set("fs.s3a.native.fallback", "fail");
        NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
        Path magic = path("tracker/" + RequestCostTest.magicKey());
        try (FSDataOutputStream out = fs.create(magic)) {
            assertTrue(out.getWrappedStream() instanceof NativeS3AOutputStream, "magic file with the in-memory tracker");
            assertTrue(out.hasCapability("fs.s3a.capability.magic.output.stream"), "a magic stream");
            out.write(1);
        }
        assertEquals(1, fs.getNativeCreateCount());
        assertEquals(0, fs.getStockCreateCount());
        assertEquals(List.of(), HadoopS3.keys(bucket, "tracker/").stream().filter(k -> !k.endsWith("/")).toList(),
                "the in-memory tracker writes no marker and no .pending");
        assertEquals(1, HadoopS3.uploads(bucket, "tracker/").size(), "the upload waits for task and job commit");
        fs.close();
    }

    @Test
    void fallbackFailRaises() throws Exception {
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.acl.default", "Private");
        conf.set("fs.s3a.native.fallback", "fail");
        FileSystem fs = HadoopS3.fs(bucket, conf);
        UnsupportedSettingException e = assertThrows(UnsupportedSettingException.class, () -> fs.create(path("fail/f")));
        assertTrue(e.getSetting().contains("acl.default"), e.getSetting());
    }
}
