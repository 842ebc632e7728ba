package io.s3native.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;

import io.s3native.S3NativeOutputStream;
import io.s3native.Statistics;

/**
 * One measured run of the benchmark harness (benches/harness/run.py) in a fresh JVM: writes
 * {@code files} files of {@code size} bytes from {@code threads} threads one way, after a
 * warm-up file of {@code warmup} bytes (default 1 MiB), and prints one line {@code RESULT {json}} with what it cost this process.
 *
 * <p>Ways ({@code way=}): {@code stream}, {@link S3NativeOutputStream} in Publish mode;
 * {@code fs}, a Hadoop {@link FileSystem} for s3a:// (stock S3A, or NativeS3AFileSystem when
 * {@code conf.fs.s3a.impl} names it). Every {@code conf.K=V} argument is a setting given to
 * both. Bytes are written in calls of at most {@code chunk} bytes (default 1 MiB) from one
 * prebuilt random buffer, the same for every way.
 *
 * <p>Figures: wall seconds of the writes (close included); CPU seconds (user + system) of the
 * whole process from /proc/self/stat, less the CPU of this harness's own sampler thread
 * (reported beside it as {@code harness_sampler_cpu_seconds}), and per thread name ({@code
 * thread_cpu_seconds}, see {@link ThreadCpu}: the JIT, GC, writers and s3native's runtime apart); local disk bytes written ({@code write_bytes} and
 * {@code cancelled_write_bytes} of /proc/self/io); peak RSS ({@code VmHWM} after resetting it at the start through
 * /proc/self/clear_refs); peak Java heap used and direct buffers (sampled every 10 ms);
 * s3native's peak part-buffer bytes; requests by kind (S3A's IOStatistics counters and
 * s3native's statistics, as deltas over the measured writes). All are read when the clock
 * stops. Then a listing checks every file exists with its size. Any error (a write, the
 * verification) prints its stack trace and exits with status 1.
 */
public final class WriteWorkload {
    private static final int SOURCE = 8 << 20;

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable t) {
            // Worker and S3A pool threads are not daemons: leave at once, with the cause.
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void run(String[] args) throws Exception {
        Map<String, String> a = new HashMap<>();
        Map<String, String> conf = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are key=value, got '" + arg + "'");
            }
            String k = arg.substring(0, eq), v = arg.substring(eq + 1);
            if (k.startsWith("conf.")) {
                conf.put(k.substring(5), v);
            } else {
                a.put(k, v);
            }
        }
        String way = need(a, "way");
        String bucket = need(a, "bucket");
        String prefix = need(a, "prefix");
        int files = Integer.parseInt(need(a, "files"));
        long size = Long.parseLong(need(a, "size"));
        int threads = Integer.parseInt(need(a, "threads"));
        int chunk = (int) Math.min(size, Long.parseLong(a.getOrDefault("chunk", String.valueOf(1 << 20))));

        byte[] source = new byte[SOURCE];
        long x = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < SOURCE; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            for (int j = 0; j < 8; j++) {
                source[i + j] = (byte) (x >>> (8 * j));
            }
        }

        Configuration hconf = new Configuration();
        conf.forEach(hconf::set);
        hconf.setBoolean("fs.s3a.impl.disable.cache", true);
        URI root = URI.create("s3a://" + bucket + "/");
        // The stream way loads no Hadoop client until the clock has stopped (verification).
        FileSystem fs = way.equals("fs") ? FileSystem.newInstance(root, hconf) : null;
        Writer writer;
        if (way.equals("stream")) {
            writer = key -> new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, conf);
        } else if (way.equals("fs")) {
            writer = key -> fs.create(new Path("/" + key), true);
        } else {
            throw new IllegalArgumentException("way is stream or fs, got '" + way + "'");
        }

        // Warm-up: one file down the same path (client, connections, TLS, JIT); not measured.
        long warmup = Long.parseLong(a.getOrDefault("warmup", String.valueOf(1 << 20)));
        try (OutputStream out = writer.open(prefix + "/warmup")) {
            for (long left = warmup; left > 0; left -= Math.min(chunk, left)) {
                out.write(source, 0, (int) Math.min(chunk, left));
            }
        }

        Map<String, Long> s3aBefore = fs == null ? Map.of() : counters(fs);
        Statistics nativeBefore = S3NativeOutputStream.globalStatistics();
        Files.writeString(Paths.get("/proc/self/clear_refs"), "5");
        Sampler sampler = new Sampler();
        sampler.start();
        long[] io0 = procIo();
        double cpu0 = cpuSeconds();
        double samplerCpu0 = sampler.cpuSeconds();
        ThreadCpu threads0 = ThreadCpu.start();
        long t0 = System.nanoTime();

        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            done.add(pool.submit(() -> {
                for (int f = first; f < files; f += threads) {
                    try (OutputStream out = writer.open(prefix + "/f" + f)) {
                        long at = (long) f * 4096 % SOURCE; // as examples/bench_worker.rs
                        for (long left = size; left > 0; ) {
                            int n = (int) Math.min(Math.min(chunk, left), SOURCE - at);
                            out.write(source, (int) at, n);
                            left -= n;
                            at = (at + n) % SOURCE;
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        long t1 = System.nanoTime();
        double cpu1 = cpuSeconds();
        double samplerCpu = sampler.cpuSeconds() - samplerCpu0;
        Map<String, Double> byThread = threads0.since();
        long[] io1 = procIo();
        long peakRss = statusKiB("VmHWM") * 1024;
        sampler.stop();
        pool.shutdown();

        Map<String, Long> requests = new TreeMap<>();
        Map<String, Long> s3aAfter = fs == null ? Map.of() : counters(fs);
        s3aAfter.forEach((k, v) -> {
            long d = v - s3aBefore.getOrDefault(k, 0L);
            if (d != 0 && (k.startsWith("object_") || k.startsWith("multipart_") || k.startsWith("store_io_"))) {
                requests.put("s3a." + k, d);
            }
        });
        Statistics nativeAfter = S3NativeOutputStream.globalStatistics();
        Map<String, Long> nb = nativeBefore.asMap();
        nativeAfter.asMap().forEach((k, v) -> {
            if (k.startsWith("requests.") && v - nb.get(k) != 0) {
                requests.put("s3native." + k.substring(9), v - nb.get(k));
            }
        });

        try (FileSystem lister = fs != null ? fs : FileSystem.newInstance(root, hconf)) {
            verify(lister, bucket, prefix, files, size);
        }

        StringBuilder json = new StringBuilder("{");
        field(json, "seconds", (t1 - t0) / 1e9);
        field(json, "bytes", (double) files * size);
        // The process's CPU less this harness's own sampler thread (MXBean calls every 10 ms:
        // 10-15% of a 2 GiB stream write's CPU when profiled, in every JVM variant alike; the
        // Rust worker has no such thread). Both are reported.
        field(json, "cpu_seconds", cpu1 - cpu0 - samplerCpu);
        field(json, "harness_sampler_cpu_seconds", samplerCpu);
        field(json, "disk_write_bytes", io1[0] - io0[0]);
        field(json, "disk_cancelled_write_bytes", io1[1] - io0[1]);
        field(json, "peak_rss_bytes", peakRss);
        field(json, "heap_peak_bytes", sampler.heap.get());
        field(json, "direct_peak_bytes", sampler.direct.get());
        field(json, "native_buffer_peak_bytes", nativeAfter.getBufferPeakBytes());
        field(json, "budget_blocked_seconds", (nativeAfter.getBudgetBlockedMicros() - nativeBefore.getBudgetBlockedMicros()) / 1e6);
        field(json, "retries", nativeAfter.getRetries() - nativeBefore.getRetries());
        json.append("\"thread_cpu_seconds\":{");
        byThread.forEach((k, v) -> json.append('"').append(k.replace("\\", "\\\\").replace("\"", "\\\"")).append("\":").append(v).append(','));
        if (!byThread.isEmpty()) {
            json.setLength(json.length() - 1);
        }
        json.append("},");
        json.append("\"requests\":{");
        requests.forEach((k, v) -> json.append('"').append(k).append("\":").append(v).append(','));
        if (!requests.isEmpty()) {
            json.setLength(json.length() - 1);
        }
        json.append("}}");
        System.out.println("RESULT " + json);
    }

    private interface Writer {
        OutputStream open(String key) throws IOException;
    }

    private static String need(Map<String, String> a, String k) {
        String v = a.get(k);
        if (v == null) {
            throw new IllegalArgumentException("missing argument " + k + "=...");
        }
        return v;
    }

    private static void field(StringBuilder json, String name, double v) {
        json.append('"').append(name).append("\":").append(v).append(',');
    }

    private static Map<String, Long> counters(FileSystem fs) {
        Map<String, Long> m = new HashMap<>();
        if (fs instanceof IOStatisticsSource) {
            IOStatistics s = ((IOStatisticsSource) fs).getIOStatistics();
            if (s != null) {
                m.putAll(s.counters());
            }
        }
        return m;
    }

    /** Every file is there with its size; anything else fails the run. */
    private static void verify(FileSystem fs, String bucket, String prefix, int files, long size) throws IOException {
        int seen = 0;
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(new Path("s3a://" + bucket + "/" + prefix), true);
        while (it.hasNext()) {
            LocatedFileStatus st = it.next();
            if (st.getPath().getName().equals("warmup")) {
                continue;
            }
            if (st.getLen() != size) {
                fail(st.getPath() + " has " + st.getLen() + " bytes, expected " + size);
            }
            seen++;
        }
        if (seen != files) {
            fail("found " + seen + " files under " + prefix + ", expected " + files);
        }
    }

    private static void fail(String why) throws IOException {
        throw new IOException("verification failed: " + why);
    }

    /** utime + stime of this process, seconds (USER_HZ is 100 on Linux). */
    static double cpuSeconds() throws IOException {
        String stat = Files.readString(Paths.get("/proc/self/stat"), StandardCharsets.US_ASCII);
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    }

    /** {write_bytes, cancelled_write_bytes} of /proc/self/io: bytes this process dirtied for
     *  storage, and of those the ones dropped before reaching it (files deleted first). */
    static long[] procIo() throws IOException {
        long[] v = {-1, -1};
        for (String line : Files.readAllLines(Paths.get("/proc/self/io"))) {
            if (line.startsWith("write_bytes:")) {
                v[0] = Long.parseLong(line.substring(12).trim());
            } else if (line.startsWith("cancelled_write_bytes:")) {
                v[1] = Long.parseLong(line.substring(22).trim());
            }
        }
        if (v[0] < 0 || v[1] < 0) {
            throw new IOException("/proc/self/io lacks write_bytes or cancelled_write_bytes");
        }
        return v;
    }

    static long statusKiB(String field) throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").trim());
            }
        }
        throw new IOException("/proc/self/status has no " + field);
    }

    /** Peak Java heap used and direct buffer bytes, sampled every 10 ms. */
    private static final class Sampler implements Runnable {
        final AtomicLong heap = new AtomicLong();
        final AtomicLong direct = new AtomicLong();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread = new Thread(this, "bench-sampler");
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final List<BufferPoolMXBean> pools = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);

        void start() {
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join();
        }

        /** CPU seconds (user + system) the sampler thread has used so far (0 if unsupported). */
        double cpuSeconds() {
            return Math.max(0, ManagementFactory.getThreadMXBean().getThreadCpuTime(thread.getId())) / 1e9;
        }

        @Override
        public void run() {
            while (running.get()) {
                heap.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                long d = 0;
                for (BufferPoolMXBean p : pools) {
                    if (p.getName().equals("direct")) {
                        d += p.getMemoryUsed();
                    }
                }
                direct.accumulateAndGet(d, Math::max);
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }
}
