package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** 16 threads, each writing 16 streams at once (interleaved), all read back intact. */
class ConcurrencyTest {
    @Test
    void sixteenThreadsTimesSixteenStreams() throws Exception {
        String bucket = S3Test.newBucket("concurrent");
        int threads = 16;
        int streams = 16;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<UploadResult>>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int thread = t;
            futures.add(pool.submit(() -> {
                S3NativeOutputStream[] outs = new S3NativeOutputStream[streams];
                byte[][] data = new byte[streams][];
                for (int s = 0; s < streams; s++) {
                    // Stream 0 of every 4th thread spans two parts; the others are single PUTs.
                    int size = (s == 0 && thread % 4 == 0) ? PART + 4321 : 20_000 + 997 * s + thread;
                    data[s] = S3Test.data(size, thread * 1000L + s);
                    outs[s] = new S3NativeOutputStream(bucket, "t" + thread + "/s" + s, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
                }
                int[] pos = new int[streams];
                boolean more = true;
                while (more) {
                    more = false;
                    for (int s = 0; s < streams; s++) {
                        int n = Math.min(8191, data[s].length - pos[s]);
                        if (n > 0) {
                            outs[s].write(data[s], pos[s], n);
                            pos[s] += n;
                            more = true;
                        }
                    }
                }
                List<UploadResult> results = new ArrayList<>();
                for (int s = 0; s < streams; s++) {
                    results.add(outs[s].closeAndGetResult());
                    assertArrayEquals(data[s], S3Test.get(bucket, "t" + thread + "/s" + s));
                }
                return results;
            }));
        }
        pool.shutdown();
        int total = 0;
        for (Future<List<UploadResult>> f : futures) {
            total += f.get(5, TimeUnit.MINUTES).size();
        }
        assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
        assertEquals(threads * streams, total);
        assertTrue(S3Test.uploads(bucket).isEmpty(), "no upload left open");
    }
}
