package io.s3native.bench.druid;

import org.apache.druid.frame.Frame;
import org.apache.druid.storage.StorageConnector;

import java.io.File;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * MSQ's output-heavy durable-storage workload through one Druid line's storage connector, in
 * this JVM alone ({@link Line}: druid-s3native on Druid 37, or druid-s3-extensions 29.0.0).
 *
 * <p>{@code workers} writer threads (MSQ workers) each write frame files of {@code rowsPerPage}
 * rows, as MSQ's DurableStorageOutputChannelFactory does: Druid's FrameFileWriter over
 * {@code Channels.newChannel(connector.write(path))} (LZ4-compressed frames of at most 1 MB,
 * MSQ's frame size, then the footer and trailer), under
 * {@code controller_<q>/stage_0/worker_<w>/taskId_<t>/part_<n>}, until the worker's share of
 * {@code bytes} is written (the last file only the frames the share has left), then its {@code __success} file (the task id, a few bytes: a small
 * output). Every process first writes one file of 3/10 of those frames per worker (warm-up: JIT,
 * client, connections), not measured.
 *
 * <p>Prints {@code RESULT <json>}: wall seconds of the measured part, bytes, files, the
 * process's CPU seconds (OperatingSystemMXBean), local disk bytes ({@code /proc/self/io}
 * write_bytes and cancelled_write_bytes; the connector's temp directory's peak size, sampled
 * every 20 ms, and the bytes staged in it), peak RSS (VmHWM), s3native's peak part-buffer bytes
 * (the peaks over the whole process, warm-up included; the rest over the measured part),
 * and requests by kind (s3native's own counters; Druid 29's AWS SDK v1 client through a
 * request handler counting each request the client sent); MEASURE_START and MEASURE_END around
 * the measured part let the harness count the server's requests. Then it verifies every file: the
 * directory lists them all and each ends with the trailer this process wrote, read back by
 * {@code readRange} at the length written.
 *
 * <p>Arguments {@code name=value}: endpoint, region, access_key, secret_key, bucket, prefix,
 * bytes, workers (2), rows_per_page (500000), chunk (5 MiB), temp_dir, retries (10), and the
 * s3native-only budget and parts_in_flight; handshake=true waits for a line on stdin after
 * MEASURE_START and after MEASURE_END.
 */
public final class DruidWriteBench {
    static final int FRAME_BYTES = 1_000_000; // MSQ's frame size (WorkerMemoryParameters)

    private DruidWriteBench() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        for (String s : argv) {
            int i = s.indexOf('=');
            if (i < 0) {
                throw new IllegalArgumentException("expected name=value, got " + s);
            }
            a.put(s.substring(0, i), s.substring(i + 1));
        }
        long bytes = Long.parseLong(a.get("bytes"));
        int workers = Integer.parseInt(a.getOrDefault("workers", "2"));
        int rowsPerPage = Integer.parseInt(a.getOrDefault("rows_per_page", "500000"));
        File tempDir = new File(a.get("temp_dir"));
        Files.createDirectories(tempDir.toPath());
        String query = "controller_bench";

        StorageConnector connector = Line.connector(a, tempDir);
        // One file's frames (rowsPerPage rows), built before anything is measured; every file
        // writes them again (compressing each frame as it goes, as MSQ does).
        List<Frame> frames = Line.frames(0, rowsPerPage, FRAME_BYTES);

        Tail sized = new Tail(OutputStream.nullOutputStream());
        Line.writeFrameFile(sized, frames);
        long fileBytes = sized.count;

        ExecutorService pool = Executors.newFixedThreadPool(workers);
        // The temp directory's peak over the process (warm-up included), like VmHWM and
        // s3native's buffer peak; the bytes staged there only over the measured part.
        TempSampler temp = new TempSampler(tempDir.toPath());
        temp.start();
        // Warm-up: one file per worker, of 3/10 of a file's frames (past one chunk at the default
        // rowsPerPage, so the multipart path is warm too).
        List<Frame> warm = frames.subList(0, Math.max(1, frames.size() * 3 / 10));
        runWorkers(pool, workers, w -> {
            writeFile(connector, "warmup/worker_" + w + "/part_0", warm);
            return 0L;
        });
        Map<String, Long> req0 = Line.requests();
        temp.startMeasuring();
        boolean handshake = Boolean.parseBoolean(a.getOrDefault("handshake", "false"));
        java.io.BufferedReader stdin = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("MEASURE_START"); // the harness counts the server's requests from here
        System.out.flush();
        if (handshake) {
            stdin.readLine(); // the harness noted where the server's log is, and says go
        }
        long[] io0 = procIo();
        double cpu0 = cpuSeconds();
        long t0 = System.nanoTime();

        long share = bytes / workers;
        List<List<Written>> written = runWorkers(pool, workers, w -> {
            List<Written> out = new ArrayList<>();
            String dir = query + "/stage_0/worker_" + w + "/taskId_" + taskId(w);
            long done = 0;
            for (int n = 0; done < share; n++) {
                // Whole files of rowsPerPage rows; the last one only the frames the share has left.
                long left = share - done;
                int m = left >= fileBytes ? frames.size() : (int) Math.round((double) left / fileBytes * frames.size());
                if (m == 0) {
                    break;
                }
                Written f = writeFile(connector, dir + "/part_" + n, frames.subList(0, m));
                done += f.bytes;
                out.add(f);
            }
            // The worker's success marker (a small output).
            byte[] id = taskId(w).getBytes(StandardCharsets.UTF_8);
            try (OutputStream os = connector.write(dir + "/__success")) {
                os.write(id);
            }
            out.add(new Written(dir + "/__success", id.length, Arrays.copyOfRange(id, Math.max(0, id.length - 16), id.length)));
            return out;
        });

        long t1 = System.nanoTime();
        System.out.println("MEASURE_END"); // to here (the verification's reads are not counted)
        System.out.flush();
        if (handshake) {
            stdin.readLine(); // likewise: the verification's requests come after
        }
        double cpu1 = cpuSeconds();
        long[] io1 = procIo();
        temp.stopSampling();
        long peakRss = statusKiB("VmHWM") * 1024;
        Map<String, Long> req1 = Line.requests();
        pool.shutdown();

        Map<String, Long> requests = new TreeMap<>();
        req1.forEach((k, v) -> {
            long d = v - req0.getOrDefault(k, 0L);
            if (d != 0) {
                requests.put(k, d);
            }
        });
        long total = 0;
        int files = 0;
        for (List<Written> ws : written) {
            for (Written f : ws) {
                total += f.bytes;
                files++;
            }
        }
        verify(connector, query, written);

        StringBuilder json = new StringBuilder("{");
        field(json, "line", Line.NAME);
        field(json, "seconds", (t1 - t0) / 1e9);
        field(json, "bytes", total);
        field(json, "files", files);
        field(json, "frames_per_file", frames.size());
        field(json, "file_bytes", fileBytes);
        field(json, "cpu_seconds", cpu1 - cpu0);
        field(json, "disk_write_bytes", io1[0] - io0[0]);
        field(json, "disk_cancelled_write_bytes", io1[1] - io0[1]);
        field(json, "temp_dir_peak_bytes", temp.peak.get());
        field(json, "temp_dir_written_bytes", temp.seenBytes());
        field(json, "peak_rss_bytes", peakRss);
        field(json, "native_buffer_peak_bytes", Line.bufferPeakBytes());
        json.append("\"file_sizes\":[");
        for (List<Written> ws : written) {
            for (Written f : ws) {
                json.append(f.bytes).append(',');
            }
        }
        json.setLength(json.length() - 1);
        json.append("],");
        json.append("\"requests\":{");
        requests.forEach((k, v) -> json.append('"').append(k).append("\":").append(v).append(','));
        if (!requests.isEmpty()) {
            json.setLength(json.length() - 1);
        }
        json.append("}}");
        System.out.println("RESULT " + json);
        System.out.flush();
        System.exit(0); // the connectors' non-daemon threads (SDK, runtime) do not hold the JVM
    }

    static String taskId(int w) {
        return "query-bench-worker" + w + "_0";
    }

    /** A file written: its path, length and last (up to) 16 bytes (the frame file's trailer). */
    record Written(String path, long bytes, byte[] tail) {
    }

    interface WorkerTask<T> {
        T run(int worker) throws Exception;
    }

    static <T> List<T> runWorkers(ExecutorService pool, int workers, WorkerTask<T> task) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int ww = w;
            fs.add(pool.submit(() -> task.run(ww)));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            out.add(f.get());
        }
        return out;
    }

    static Written writeFile(StorageConnector c, String path, List<Frame> frames) throws IOException {
        Tail out = new Tail(c.write(path));
        Line.writeFrameFile(out, frames); // closes `out`
        return new Written(path, out.count, out.tail());
    }

    /** Every worker's directory lists its files; each file ends with the trailer written. */
    static void verify(StorageConnector c, String query, List<List<Written>> written) throws IOException {
        for (List<Written> ws : written) {
            String full = ws.get(0).path;
            String dir = full.substring(0, full.lastIndexOf('/'));
            List<String> listed = new ArrayList<>();
            for (Iterator<String> it = c.listDir(dir); it.hasNext(); ) {
                listed.add(it.next());
            }
            if (listed.size() != ws.size()) {
                throw new IllegalStateException(dir + ": listed " + listed.size() + " files, wrote " + ws.size());
            }
            for (Written f : ws) {
                int n = f.tail.length;
                byte[] got;
                try (InputStream in = c.readRange(f.path, f.bytes - n, n)) {
                    got = in.readAllBytes();
                }
                if (!Arrays.equals(got, f.tail)) {
                    throw new IllegalStateException(f.path + ": the last " + n + " bytes at length " + f.bytes
                            + " differ from those written");
                }
            }
        }
    }

    /** Counts bytes and keeps the last 16 of them. */
    static final class Tail extends FilterOutputStream {
        long count;
        final byte[] ring = new byte[16];

        Tail(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            ring[(int) (count++ % 16)] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            for (int i = Math.max(off, off + len - 16); i < off + len; i++) {
                ring[(int) ((count + i - off) % 16)] = b[i];
            }
            count += len;
        }

        byte[] tail() {
            int n = (int) Math.min(16, count);
            byte[] t = new byte[n];
            for (int i = 0; i < n; i++) {
                t[i] = ring[(int) ((count - n + i) % 16)];
            }
            return t;
        }
    }

    /** The temp directory's size every 20 ms: the peak, and every file's largest size seen. */
    static final class TempSampler extends Thread {
        final Path dir;
        final AtomicLong peak = new AtomicLong();
        final Map<String, Long> seen = new java.util.concurrent.ConcurrentHashMap<>();
        volatile boolean stop;

        TempSampler(Path dir) {
            super("temp-dir-sampler");
            this.dir = dir;
            setDaemon(true);
        }

        @Override
        public void run() {
            while (!stop) {
                sample();
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void sample() {
            long sum = 0;
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) s::iterator) {
                    try {
                        if (Files.isRegularFile(p)) {
                            long n = Files.size(p);
                            sum += n;
                            seen.merge(p.toString(), n, Math::max);
                        }
                    } catch (IOException e) {
                        // deleted between listing and size
                    }
                }
            } catch (IOException | java.io.UncheckedIOException e) {
                // a folder deleted while walking: the next sample sees the rest
            }
            peak.accumulateAndGet(sum, Math::max);
        }

        void stopSampling() throws InterruptedException {
            stop = true;
            join();
            sample();
        }

        /** Forget the files seen so far (the warm-up's): {@link #seenBytes} counts those staged after. */
        void startMeasuring() {
            sample();
            seen.clear();
        }

        long seenBytes() {
            return seen.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    static double cpuSeconds() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime() / 1e9;
    }

    /** /proc/self/io: write_bytes, cancelled_write_bytes. */
    static long[] procIo() throws IOException {
        long[] r = new long[2];
        for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
            if (line.startsWith("write_bytes:")) {
                r[0] = Long.parseLong(line.substring(12).trim());
            } else if (line.startsWith("cancelled_write_bytes:")) {
                r[1] = Long.parseLong(line.substring(22).trim());
            }
        }
        return r;
    }

    static long statusKiB(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).replace("kB", "").trim());
            }
        }
        return -1;
    }

    static void field(StringBuilder json, String name, Object v) {
        json.append('"').append(name).append("\":");
        if (v instanceof String) {
            json.append('"').append(v).append('"');
        } else {
            json.append(v);
        }
        json.append(',');
    }
}
