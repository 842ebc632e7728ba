package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.RemoteFileChangedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.s3native.UnsupportedSettingException;

/**
 * An object overwritten while it is open, on {@link NativeS3AFileSystem} and on stock S3A (its
 * classic stream) on the same sequence, with S3A's change detection defaults
 * ({@code fs.s3a.change.detection.mode=server}, {@code source=etag}: GETs pinned to the ETag
 * found at open): every read kind fails with {@link RemoteFileChangedException} naming the
 * path, after {@code open} (a HEAD) and after {@code openFile} with the old file status (no
 * HEAD); {@code mode=none} reads the new version on both; {@code source=versionid} is not
 * native (stock S3A reads, or an error with {@code fs.s3a.native.fallback=fail}).
 */
class NativeReadChangeTest {
    private static final int LEN = 300_001;
    private static final byte[] FIRST = HadoopS3.data(LEN, 31);
    private static final byte[] SECOND = HadoopS3.data(LEN, 32);

    private static String bucket;
    private static FileSystem stock;
    private static FileSystem ours;

    @BeforeAll
    static void setUp() throws IOException {
        bucket = HadoopS3.newBucket("change");
        stock = fs(false, Map.of());
        ours = fs(true, Map.of());
    }

    @AfterAll
    static void tearDown() {
        HadoopS3.closeAll(stock, ours);
    }

    private static FileSystem fs(boolean nativeFs, Map<String, String> extra) throws IOException {
        Configuration conf = HadoopS3.conf(nativeFs);
        conf.set("fs.s3a.input.stream.type", "classic");
        if (nativeFs) {
            conf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        }
        extra.forEach(conf::set);
        return HadoopS3.fs(bucket, conf);
    }

    private static void put(Path p, byte[] data) throws IOException {
        try (FSDataOutputStream out = stock.create(p, true)) {
            out.write(data);
        }
    }

    private interface Read {
        void run(FSDataInputStream in) throws IOException;
    }

    private static final Map<String, Read> READS = Map.of(
            "read()", FSDataInputStream::read,
            "read(byte[])", in -> in.readFully(new byte[1000]),
            "pread", in -> in.readFully(5000, new byte[1000]),
            "read(ByteBuffer)", in -> {
                if (in.hasCapability("in:readbytebuffer")) {
                    in.read(ByteBuffer.allocate(1000));
                } else {
                    in.read(); // stock S3A has no ByteBuffer reads
                }
            });

    /** Write the first version at {@code p}, open it, overwrite it, then read: what the read throws. */
    private static IOException overwrittenWhileOpen(FileSystem fs, Path p, String name, Read read) throws IOException {
        put(p, FIRST);
        try (FSDataInputStream in = fs.open(p)) {
            assertEquals(fs == ours, in.getWrappedStream() instanceof NativeS3AInputStream, name);
            put(p, SECOND);
            return assertThrows(IOException.class, () -> read.run(in), name);
        }
    }

    @Test
    void everyReadOfAnObjectOverwrittenAfterOpenIsRemoteFileChanged() throws IOException {
        int n = 0;
        for (Map.Entry<String, Read> r : READS.entrySet()) {
            for (FileSystem fs : List.of(stock, ours)) {
                String who = r.getKey() + (fs == stock ? " stock" : " native");
                String name = "changed-" + n++ + (fs == stock ? "-stock" : "-native");
                IOException e = overwrittenWhileOpen(fs, new Path("/" + name), r.getKey(), r.getValue());
                assertInstanceOf(RemoteFileChangedException.class, e, who + ": " + e);
                assertTrue(e.getMessage().contains(name), who + " names the path: " + e.getMessage());
            }
        }
    }

    @Test
    void openFileWithTheOldStatusIsRemoteFileChangedAtTheFirstRead() throws Exception {
        for (FileSystem fs : List.of(stock, ours)) {
            Path p = new Path("/status" + (fs == stock ? "-stock" : "-native"));
            put(p, FIRST);
            FileStatus old = fs.getFileStatus(p);
            put(p, SECOND);
            try (FSDataInputStream in = fs.openFile(p).withFileStatus(old).build().get()) {
                IOException e = assertThrows(IOException.class, () -> in.readFully(0, new byte[100]));
                assertInstanceOf(RemoteFileChangedException.class, e, (fs == stock ? "stock" : "native") + ": " + e);
                if (fs == ours) {
                    assertEquals(1L, ((NativeS3AInputStream) in.getWrappedStream()).getIOStatistics().counters()
                            .get("stream_read_version_mismatches"));
                }
            }
        }
    }

    @Test
    void withChangeDetectionNoneBothReadTheNewVersion() throws IOException {
        Map<String, String> none = Map.of("fs.s3a.change.detection.mode", "none");
        try (FileSystem s = fs(false, none); FileSystem n = fs(true, none)) {
            for (FileSystem fs : List.of(s, n)) {
                Path p = new Path("/none" + (fs == s ? "-stock" : "-native"));
                put(p, FIRST);
                try (FSDataInputStream in = fs.open(p)) {
                    put(p, SECOND);
                    byte[] b = new byte[LEN];
                    in.readFully(0, b);
                    assertArrayEquals(SECOND, b, fs == s ? "stock" : "native");
                }
            }
        }
    }

    @Test
    void aVersionIdSourceIsReadByStockS3A() throws IOException {
        Path p = new Path("/versionid");
        put(p, FIRST);
        Map<String, String> byVersion = Map.of("fs.s3a.change.detection.source", "versionid");
        try (FileSystem n = fs(true, byVersion)) {
            UnsupportedSettingException e = assertThrows(UnsupportedSettingException.class, () -> n.open(p));
            assertEquals("fs.s3a.change.detection.source", e.getSetting(), e.getMessage());
        }
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.change.detection.source", "versionid");
        conf.set("fs.s3a.change.detection.mode", "none"); // moto's bucket has no versioning
        try (FileSystem n = HadoopS3.fs(bucket, conf)) {
            try (FSDataInputStream in = n.open(p)) {
                assertTrue(in.getWrappedStream() instanceof NativeS3AInputStream, "mode none checks nothing: native");
            }
        }
        conf.set("fs.s3a.change.detection.mode", "server");
        try (NativeS3AFileSystem n = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf)) {
            try (FSDataInputStream in = n.open(p)) {
                assertFalse(in.getWrappedStream() instanceof NativeS3AInputStream, "versionid: stock S3A");
            } catch (IOException e) {
                // stock S3A itself may refuse versionid on a bucket without versioning: it was asked
                assertTrue(n.getStockOpenCount() > 0, String.valueOf(e));
            }
            assertEquals(1, n.getStockOpenCount());
        }
    }
}
