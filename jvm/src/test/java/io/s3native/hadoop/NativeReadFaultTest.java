package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Hadoop stream of {@link NativeS3AFileSystem} under faults on its GETs, injected by the
 * project's fault proxy (tests/support/fault_proxy.py; HadoopS3.conf routes through it): a 500,
 * a connection reset mid-body and a slow answer end in the right bytes after the native
 * client's retries (the proxy's log shows the fault and the retry); a fault that never clears
 * is an IOException naming the key. And 0- and 1-byte objects through every read kind, as
 * stock S3A answers them.
 */
class NativeReadFaultTest {
    /** Fetched whole by one GET (below the native small-object size, 256 KiB here). */
    private static final int SMALL = 200_003;
    /** Read through read-ahead in ranged GETs (512 KiB blocks here). */
    private static final int LARGE = 2 * 1024 * 1024 + 5;

    private static String bucket;
    private static FileSystem stock;
    private static NativeS3AFileSystem ours;

    @BeforeAll
    static void setUp() throws IOException {
        bucket = HadoopS3.newBucket("read-faults");
        Configuration stockConf = HadoopS3.conf(false);
        stockConf.set("fs.s3a.input.stream.type", "classic");
        stock = HadoopS3.fs(bucket, stockConf);
        Configuration conf = HadoopS3.conf(true);
        conf.set("fs.s3a.input.stream.type", "classic"); // the native reader follows it: as stock
        conf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        // Small sizes: small objects whole and larger ones by read-ahead, without large objects.
        conf.set("fs.s3a.native.read.small.object.size", "256K");
        conf.set("fs.s3a.native.read.block.size", "512K");
        ours = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
    }

    @AfterAll
    static void tearDown() {
        HadoopS3.closeAll(stock, ours);
    }

    private static void put(Path p, byte[] data) throws IOException {
        try (FSDataOutputStream out = stock.create(p, true)) {
            out.write(data);
        }
    }

    private static String rule(String key, String action) {
        return "{\"match\": {\"method\": \"GET\", \"path_contains\": \"/" + bucket + "/" + key + "\"}, " + action + "}";
    }

    /** The outcomes ("fault status") of the proxied GETs of {@code key}, in order. */
    private static List<String> gets(String key) throws IOException {
        List<String> out = new ArrayList<>();
        for (HadoopS3.Logged e : HadoopS3.logged("/" + bucket + "/" + key)) {
            if (e.operation().equals("GetObject")) {
                out.add(e.fault() + " " + e.status());
            }
        }
        return out;
    }

    /** Stream-read all of {@code p} natively in 100,000-byte reads. */
    private static byte[] readAll(Path p, int len) throws IOException {
        try (FSDataInputStream in = ours.open(p)) {
            assertTrue(in.getWrappedStream() instanceof NativeS3AInputStream);
            byte[] b = new byte[len];
            int done = 0;
            while (done < len) {
                int n = in.read(b, done, Math.min(100_000, len - done));
                assertTrue(n > 0, "read at " + done);
                done += n;
            }
            assertEquals(-1, in.read());
            return b;
        }
    }

    @Test
    void faultsOnGetsEndInTheRightBytes() throws IOException {
        assumeTrue(HadoopS3.PROXY != null, "needs the fault proxy (S3NATIVE_TEST_FAULT_PROXY)");
        String[][] faults = {
            {"status-500.bin", "\"action\": \"status\", \"status\": 500", "status 500"},
            {"reset-mid-body.bin", "\"action\": \"truncate\"", "truncate 206"},
            {"slow.bin", "\"action\": \"delay\", \"delay_ms\": 700", "delay 206"},
        };
        for (String[] f : faults) {
            for (int len : new int[] {SMALL, LARGE}) {
                String key = len + "-" + f[0];
                byte[] data = HadoopS3.data(len, key.hashCode());
                put(new Path("/" + key), data);
                HadoopS3.addRule(rule(key, f[1] + ", \"count\": 1"));
                assertArrayEquals(data, readAll(new Path("/" + key), len), key);
                List<String> seen = gets(key);
                assertEquals(1, seen.stream().filter(f[2]::equals).count(), key + ": one GET met the fault " + seen);
                if (len == SMALL) { // one (ranged) GET of the whole object, and its retry
                    assertEquals(f[2].startsWith("delay") ? List.of(f[2]) : List.of(f[2], "null 206"), seen, key);
                }
            }
        }
    }

    @Test
    void aFaultThatNeverClearsIsAnIOExceptionNamingTheKey() throws IOException {
        assumeTrue(HadoopS3.PROXY != null, "needs the fault proxy (S3NATIVE_TEST_FAULT_PROXY)");
        String key = "always-500.bin";
        put(new Path("/" + key), HadoopS3.data(SMALL, 9));
        HadoopS3.addRule(rule(key, "\"action\": \"status\", \"status\": 500, \"count\": -1"));
        try (FSDataInputStream in = ours.open(new Path("/" + key))) {
            IOException e = assertThrows(IOException.class, () -> in.readFully(0, new byte[10]));
            assertTrue(e.getMessage().contains(key), e.getMessage());
        }
        assertEquals(3, gets(key).size(), "fs.s3a.retry.limit=2: three attempts " + gets(key));
    }

    /** The read kinds of a Hadoop stream, each returning what it read and its return values. */
    private static String kinds(FSDataInputStream in, boolean byteBuffers) throws IOException {
        StringBuilder out = new StringBuilder();
        out.append("read()=").append(in.read()).append(' ').append(in.read());
        in.seek(0);
        byte[] b = new byte[4];
        out.append(" read(byte[])=").append(in.read(b, 0, 4)).append(':').append(b[0]).append(' ').append(in.read(b, 0, 4));
        b = new byte[4];
        out.append(" pread=").append(in.read(0, b, 0, 4)).append(':').append(b[0]).append(' ').append(in.read(1, b, 0, 4));
        byte[] one = new byte[1];
        try {
            in.readFully(0, one);
            out.append(" readFully(1)=").append(one[0]);
        } catch (EOFException e) {
            out.append(" readFully(1)=EOF");
        }
        in.readFully(0, new byte[0]);
        out.append(" available=").append(in.available());
        if (byteBuffers) {
            // ByteBuffer reads (stock S3A has none): the same answers as the byte[] ones.
            in.seek(0);
            for (ByteBuffer buf : new ByteBuffer[] {ByteBuffer.allocate(4), ByteBuffer.allocateDirect(4)}) {
                int n = in.read(buf);
                out.append(" bb=").append(n).append(n > 0 ? ":" + buf.get(0) : "");
                in.seek(0);
            }
            ByteBuffer p = ByteBuffer.allocate(4);
            int n = in.read(0, p);
            out.append(" bbpread=").append(n).append(n > 0 ? ":" + p.get(0) : "");
        }
        return out.toString();
    }

    @Test
    void zeroAndOneByteObjectsThroughEveryReadKind() throws IOException {
        put(new Path("/zero"), new byte[0]);
        put(new Path("/one"), new byte[] {42});
        for (String name : new String[] {"zero", "one"}) {
            Path p = new Path("/" + name);
            String fromStock;
            try (FSDataInputStream in = stock.open(p)) {
                fromStock = kinds(in, false);
            }
            try (FSDataInputStream in = ours.open(p)) {
                assertTrue(in.getWrappedStream() instanceof NativeS3AInputStream);
                assertEquals(fromStock, kinds(in, false), name + ": native vs stock");
            }
            try (FSDataInputStream in = ours.open(p)) {
                String all = kinds(in, true);
                String expected = name.equals("zero")
                        ? " bb=-1 bb=-1 bbpread=-1"
                        : " bb=1:42 bb=1:42 bbpread=1:42";
                assertTrue(all.endsWith(expected), name + ": " + all);
            }
        }
    }
}
