package io.s3native.bench;

import io.s3native.parquet.NativeParquetWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * One measured run of the Parquet encoder bench ({@code benches/harness/parquet_bench.py}),
 * the JVM route: the same Arrow IPC files as the Rust worker ({@code examples/parquet_worker.rs})
 * are read into Arrow Java's off-heap buffers first (record batches, as an engine holds them);
 * then each becomes one Parquet file on S3 through {@link NativeParquetWriter} in PUBLISH mode,
 * its batches exported by reference through the Arrow C stream interface
 * ({@code Data.exportArrayStream}), {@code threads} files at a time. Prints one line
 * {@code RESULT {json}} with the Rust worker's figures and arguments (see its header): wall and
 * process CPU seconds of the timed part, peak RSS above the RSS when the clock started
 * ({@code VmHWM} reset through /proc/self/clear_refs), rows and output bytes.
 */
public final class ParquetEncodeWorkload {
    private static final Pattern ROWS = Pattern.compile("\"rows\":(\\d+)");
    private static final Pattern SIZE = Pattern.compile("\"file_size\":(\\d+)");

    private ParquetEncodeWorkload() {}

    /** One input file held in memory: its schema and record batches (buffers retained). */
    private record Input(Schema schema, List<ArrowRecordBatch> batches) {}

    /** An ArrowReader over batches already in memory: each load points the root at the next one. */
    private static final class InMemory extends ArrowReader {
        private final Schema schema;
        private final List<ArrowRecordBatch> batches;
        private int next;

        InMemory(BufferAllocator allocator, Schema schema, List<ArrowRecordBatch> batches) {
            super(allocator);
            this.schema = schema;
            this.batches = batches;
        }

        @Override
        public boolean loadNextBatch() throws IOException {
            if (next == batches.size()) {
                return false;
            }
            new VectorLoader(getVectorSchemaRoot()).load(batches.get(next++));
            return true;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {}

        @Override
        protected Schema readSchema() {
            return schema;
        }
    }

    private static Input load(BufferAllocator allocator, String path) throws IOException {
        try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ);
                ArrowFileReader reader = new ArrowFileReader(ch, allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            List<ArrowRecordBatch> batches = new ArrayList<>();
            while (reader.loadNextBatch()) {
                batches.add(new VectorUnloader(root).getRecordBatch());
            }
            if (batches.isEmpty()) {
                throw new IOException(path + ": no batches");
            }
            return new Input(root.getSchema(), batches);
        }
    }

    /** One file; returns {rows, bytes}. */
    private static long[] write(BufferAllocator allocator, String bucket, String key, Input in, int batches,
            Map<String, String> conf, String options) throws IOException {
        List<ArrowRecordBatch> chosen = in.batches().subList(0, Math.min(batches, in.batches().size()));
        try (InMemory reader = new InMemory(allocator, in.schema(), chosen);
                ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
            Data.exportArrayStream(allocator, reader, stream);
            try (NativeParquetWriter w = NativeParquetWriter.open(bucket, key, "PUBLISH", conf, options, stream.memoryAddress())) {
                w.writeAll();
                String result = w.finish();
                return new long[] {field(ROWS, result), field(SIZE, result)};
            }
        }
    }

    private static long field(Pattern p, String json) throws IOException {
        Matcher m = p.matcher(json);
        if (!m.find()) {
            throw new IOException("no " + p + " in the writer's result " + json);
        }
        return Long.parseLong(m.group(1));
    }

    private static long statusBytes(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.split("\\s+")[1]) * 1024;
            }
        }
        throw new IOException(field + " not in /proc/self/status");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = new LinkedHashMap<>();
        Map<String, String> conf = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("arguments are key=value, got " + arg);
            }
            String k = arg.substring(0, eq);
            (k.startsWith("conf.") ? conf : a).put(k.startsWith("conf.") ? k.substring(5) : k, arg.substring(eq + 1));
        }
        String bucket = a.get("bucket");
        String prefix = a.get("prefix");
        int threads = Math.max(1, Integer.parseInt(a.getOrDefault("threads", "1")));
        int warmupBatches = Integer.parseInt(a.getOrDefault("warmup_batches", "32"));
        String options = a.getOrDefault("options", "{}");
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

        try (BufferAllocator allocator = new RootAllocator()) {
            List<Input> inputs = new ArrayList<>();
            for (String path : a.get("inputs").split(",")) {
                inputs.add(load(allocator, path));
            }
            if (warmupBatches > 0) {
                write(allocator, bucket, prefix + "/warmup.parquet", inputs.get(0), warmupBatches, conf, options);
            }

            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
            long rss0 = statusBytes("VmRSS:");
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            AtomicInteger next = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, inputs.size()));
            List<Future<long[]>> done = new ArrayList<>();
            for (int t = 0; t < Math.min(threads, inputs.size()); t++) {
                done.add(pool.submit(() -> {
                    long[] sum = new long[2];
                    for (int i; (i = next.getAndIncrement()) < inputs.size(); ) {
                        long[] r = write(allocator, bucket, String.format("%s/part-%05d.parquet", prefix, i), inputs.get(i),
                                Integer.MAX_VALUE, conf, options);
                        sum[0] += r[0];
                        sum[1] += r[1];
                    }
                    return sum;
                }));
            }
            long rows = 0;
            long bytes = 0;
            for (Future<long[]> f : done) {
                long[] r = f.get();
                rows += r[0];
                bytes += r[1];
            }
            pool.shutdown();
            double wall = (System.nanoTime() - t0) / 1e9;
            double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
            long peak = Math.max(0, statusBytes("VmHWM:") - rss0);
            System.out.printf("RESULT {\"route\": \"jvm\", \"seconds\": %.6f, \"cpu_seconds\": %.6f, "
                            + "\"peak_rss_over_start_bytes\": %d, \"start_rss_bytes\": %d, \"rows\": %d, \"output_bytes\": %d, "
                            + "\"files\": %d, \"threads\": %d}%n",
                    wall, cpu, peak, rss0, rows, bytes, inputs.size(), threads);
            for (Input in : inputs) {
                in.batches().forEach(ArrowRecordBatch::close);
            }
        }
    }
}
