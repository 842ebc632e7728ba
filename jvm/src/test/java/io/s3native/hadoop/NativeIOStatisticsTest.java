package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.junit.jupiter.api.Test;

/**
 * The IOStatistics of a native stream and of the filesystem after it closed, against stock
 * S3A writing the same file on the same Hadoop line: every name S3A's stream has, and every
 * write counter S3A's filesystem counts, with the values of what was written.
 */
class NativeIOStatisticsTest {
    /** The filesystem counters S3A counts for a write (its requests, its stream's merge). */
    private static final List<String> WRITE_COUNTERS = List.of("stream_write_bytes", "stream_write_total_data",
            "stream_write_block_uploads", "files_created", "object_put_bytes", "object_put_request_completed",
            "object_multipart_initiated", "multipart_upload_completed", "store_io_request",
            "committer_bytes_uploaded", "committer_magic_files_created");

    private static final int BIG = 2 * 5 * 1024 * 1024 + 1000; // three 5 MiB parts

    private static final class Written {
        final IOStatisticsSnapshot stream;
        final Map<String, Long> fsDelta;
        final IOStatistics fsAfter;

        Written(IOStatisticsSnapshot stream, Map<String, Long> fsDelta, IOStatistics fsAfter) {
            this.stream = stream;
            this.fsDelta = fsDelta;
            this.fsAfter = fsAfter;
        }
    }

    private static Written write(FileSystem fs, String bucket, String key, int size) throws Exception {
        IOStatisticsSnapshot before = new IOStatisticsSnapshot(((IOStatisticsSource) fs).getIOStatistics());
        FSDataOutputStream out = fs.create(new Path("s3a://" + bucket + "/" + key));
        out.write(HadoopS3.data(size, size));
        out.close();
        IOStatisticsSnapshot stream = new IOStatisticsSnapshot(((IOStatisticsSource) out.getWrappedStream()).getIOStatistics());
        IOStatistics after = ((IOStatisticsSource) fs).getIOStatistics();
        Map<String, Long> delta = new TreeMap<>();
        after.counters().forEach((k, v) -> {
            long d = v - before.counters().getOrDefault(k, 0L);
            if (d != 0) {
                delta.put(k, d);
            }
        });
        return new Written(stream, delta, after);
    }

    private static Set<String> keys(IOStatistics s) {
        Set<String> k = new TreeSet<>();
        s.counters().keySet().forEach(n -> k.add("counter " + n));
        s.gauges().keySet().forEach(n -> k.add("gauge " + n));
        s.minimums().keySet().forEach(n -> k.add("minimum " + n));
        s.maximums().keySet().forEach(n -> k.add("maximum " + n));
        s.meanStatistics().keySet().forEach(n -> k.add("mean " + n));
        return k;
    }

    @Test
    void streamAndFileSystemStatisticsShowWhatStockS3AShows() throws Exception {
        String stockBucket = HadoopS3.newBucket("stats-s");
        String nativeBucket = HadoopS3.newBucket("stats-n");
        FileSystem stock = HadoopS3.fs(stockBucket, HadoopS3.conf(false));
        NativeS3AFileSystem ours = (NativeS3AFileSystem) HadoopS3.fs(nativeBucket, HadoopS3.conf(true));
        String[][] files = {{"plain/small", "1000", "1"}, {"plain/big", String.valueOf(BIG), "3"},
                {RequestCostTest.magicKey(), String.valueOf(BIG), "3"}};
        for (String[] f : files) {
            int size = Integer.parseInt(f[1]);
            long blocks = Long.parseLong(f[2]);
            boolean magic = f[0].contains("__magic");
            Written s = write(stock, stockBucket, f[0], size);
            Written n = write(ours, nativeBucket, f[0], size);
            String what = f[0] + ": stock " + s.fsDelta + "\n ours " + n.fsDelta;
            System.out.println(what);
            // The stream: every name S3A's block output stream has (what .pending files carry).
            Set<String> missing = keys(s.stream);
            missing.removeAll(keys(n.stream));
            assertEquals(Set.of(), missing, f[0] + ": names stock S3A's stream has and ours lacks");
            assertEquals(size, n.stream.counters().get("stream_write_bytes"), f[0]);
            assertEquals(size, n.stream.counters().get("stream_write_total_data"), f[0]);
            assertEquals(blocks, n.stream.counters().get("stream_write_block_uploads"), f[0]);
            // The filesystem: every write counter stock counts, counted by ours too.
            for (String c : WRITE_COUNTERS) {
                if (s.fsDelta.getOrDefault(c, 0L) > 0) {
                    assertTrue(n.fsDelta.getOrDefault(c, 0L) > 0, c + " missing from ours: " + what);
                }
            }
            assertEquals(size, n.fsDelta.get("stream_write_bytes"), what);
            // S3A's store counts a stream's blocks twice (its merge's incrementCounter, then the
            // stream's statistics aggregated), its metric once: as stock, not as the block count.
            assertEquals(s.fsDelta.get("stream_write_block_uploads"), n.fsDelta.get("stream_write_block_uploads"), what);
            assertEquals(1L, n.fsDelta.get("files_created"), what);
            assertEquals(magic ? 1L : 0L, n.fsDelta.getOrDefault("committer_magic_files_created", 0L), what);
            assertEquals(blocks > 1 && !magic ? 1L : 0L, n.fsDelta.getOrDefault("multipart_upload_completed", 0L), what);
            // The native ones, next to S3A's.
            assertTrue(n.fsAfter.counters().containsKey("s3native.budget_blocked_us"), what);
            assertTrue(n.fsAfter.maximums().containsKey("s3native.part_queue_wait_p99_us"), what);
            assertTrue(n.fsAfter.maximums().containsKey("s3native.part_queue_wait_p50_us"), what);
            assertTrue(n.fsAfter.meanStatistics().containsKey("s3native.part_upload_time_us"), what);
        }
        long parts = ours.getIOStatistics().counters().get("s3native.parts_uploaded");
        assertEquals(6L, parts, "two multipart files of three parts");
        assertEquals(3, ours.getNativeCreateCount());
        stock.close();
        ours.close();
    }

    @Test
    void anAbortedStreamIsCountedOnce() throws Exception {
        String bucket = HadoopS3.newBucket("stats-abort");
        NativeS3AFileSystem fs = HadoopS3.nativeFs(bucket);
        FSDataOutputStream out = fs.create(new Path("s3a://" + bucket + "/aborted"));
        out.write(HadoopS3.data(6 * 1024 * 1024, 3));
        out.abort();
        out.close();
        IOStatistics stream = ((IOStatisticsSource) out.getWrappedStream()).getIOStatistics();
        assertEquals(1L, stream.counters().get("op_abort"));
        assertEquals(6L * 1024 * 1024, fs.getIOStatistics().counters().get("stream_write_bytes"), "merged once");
        assertEquals(0L, fs.getIOStatistics().counters().get("files_created") - 1, "counted as S3A counts a create");
        fs.close();
    }
}
