package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * Hadoop's per-thread FileSystem.Statistics after writes, as Spark reads them for a task's
 * outputMetrics.bytesWritten (SparkHadoopUtil.getFSBytesWrittenOnThreadCallback: the sum over
 * FileSystem.getAllStatistics() of the calling thread's bytesWritten), against stock S3A
 * writing the same files on the same Hadoop line: the bytes of each file, once, on the thread
 * that wrote and closed it and on no other.
 */
class ThreadStatisticsTest {
    private static final int BIG = 2 * 5 * 1024 * 1024 + 1000; // three 5 MiB parts

    /** What Spark's callback sums for the calling thread: bytesWritten of every scheme's statistics. */
    @SuppressWarnings("deprecation") // getAllStatistics: what Spark calls, on every Hadoop line
    private static long threadBytesWritten() {
        long sum = 0;
        for (FileSystem.Statistics s : FileSystem.getAllStatistics()) {
            sum += s.getThreadStatistics().getBytesWritten();
        }
        return sum;
    }

    @SuppressWarnings("deprecation")
    private static long allThreadsBytesWritten() {
        long sum = 0;
        for (FileSystem.Statistics s : FileSystem.getAllStatistics()) {
            sum += s.getBytesWritten();
        }
        return sum;
    }

    /** {bytes on the writing thread, on this thread, on all threads} for one create/write/close on a worker thread. */
    private static long[] write(ExecutorService worker, FileSystem fs, String bucket, String key, int size) throws Exception {
        long hereBefore = threadBytesWritten();
        long allBefore = allThreadsBytesWritten();
        long onWorker = worker.submit(() -> {
            long before = threadBytesWritten();
            try (FSDataOutputStream out = fs.create(new Path("s3a://" + bucket + "/" + key))) {
                byte[] data = HadoopS3.data(size, size);
                int half = size / 2; // two write calls, as a task's writer makes many
                out.write(data, 0, half);
                out.write(data, half, size - half);
            }
            return threadBytesWritten() - before;
        }).get();
        return new long[] {onWorker, threadBytesWritten() - hereBefore, allThreadsBytesWritten() - allBefore};
    }

    @Test
    void theWritingThreadCountsEachFileOnceAsStockS3ADoes() throws Exception {
        String stockBucket = HadoopS3.newBucket("tstats-s");
        String nativeBucket = HadoopS3.newBucket("tstats-n");
        FileSystem stock = HadoopS3.fs(stockBucket, HadoopS3.conf(false));
        NativeS3AFileSystem ours = (NativeS3AFileSystem) HadoopS3.fs(nativeBucket, HadoopS3.conf(true));
        ExecutorService worker = Executors.newSingleThreadExecutor();
        try {
            String[][] files = {{"plain/empty", "0"}, {"plain/small", "1000"}, {"plain/big", String.valueOf(BIG)},
                    {RequestCostTest.magicKey(), String.valueOf(BIG)}};
            for (String[] f : files) {
                int size = Integer.parseInt(f[1]);
                long[] s = write(worker, stock, stockBucket, f[0], size);
                long[] n = write(worker, ours, nativeBucket, f[0], size);
                String what = f[0] + ": {writing thread, other thread, all threads} stock " + list(s) + ", ours " + list(n);
                // What Spark reads: the file's bytes on the thread that wrote and closed it.
                assertEquals(List.of((long) size, 0L), list(s).subList(0, 2), what);
                assertEquals(List.of((long) size, 0L), list(n).subList(0, 2), what);
                // In all, the file once. (Stock S3A 3.3.4 adds a magic file's .pending PUT on its
                // transfer threads, which no task's metrics see; the native writer's own .pending
                // PUT is no write through the filesystem.)
                assertEquals(size, n[2], what);
            }
            assertEquals(files.length, ours.getNativeCreateCount(), "every file went through the native writer");
        } finally {
            worker.shutdownNow();
            HadoopS3.closeAll(stock, ours);
        }
    }

    private static List<Long> list(long[] a) {
        List<Long> l = new ArrayList<>();
        for (long v : a) {
            l.add(v);
        }
        return l;
    }
}
