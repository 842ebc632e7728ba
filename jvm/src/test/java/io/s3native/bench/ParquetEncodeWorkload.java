package io.s3native.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorBatchAppender;

/**
 * One measured run of the Parquet encoder bench ({@code benches/harness/parquet_bench.py}),
 * the JVM route: the same Arrow IPC files as the Rust worker ({@code examples/parquet_worker.rs})
 * are read into Arrow Java's off-heap buffers first, each batch copied out of the IPC body into
 * vectors of its own (one allocation per buffer, as Spark's ArrowWriter holds them: an IPC body
 * aligns its buffers to 8 bytes only, where arrow-rs wants 16 for decimals, and the Rust worker's
 * IPC reader realigns them before its clock starts too); then each becomes one Parquet file on S3 through {@link NativeParquetWriter} in PUBLISH mode,
 * its batches exported by reference through the Arrow C stream interface
 * ({@code Data.exportArrayStream}), {@code threads} files at a time. Prints one line
 * {@code RESULT {json}} with the Rust worker's figures and arguments (see its header): wall and
 * process CPU seconds of the timed part, peak RSS above the RSS when the clock started
 * ({@code VmHWM} reset through /proc/self/clear_refs), rows and output bytes; and, to show where
 * the CPU goes, {@code thread_cpu_seconds}: the timed part's CPU per thread name (trailing digits
 * dropped, so "GC Thread#0" and "GC Thread#1" add up as "GC Thread#"), {@code minor_faults} and
 * {@code thread_minor_faults}: the timed part's minor page faults in the process and per thread
 * name (first touches of memory, each a kernel entry on the thread that touched it), and {@code
 * misaligned_buffers}: the input's fixed-width data buffers whose address is not a multiple of
 * their value width (capped at 16 bytes), which the native side copies before encoding, since
 * arrow-rs needs that alignment (Java's vectors share one allocation between validity and data,
 * so a decimal128 data buffer often starts 8 bytes off); {@code write_seconds} and {@code
 * close_seconds} as the Rust worker's: wall seconds in {@link NativeParquetWriter#writeAll}
 * and in {@link NativeParquetWriter#finish}, summed over files. Before the clock starts, as the
 * Rust worker does, {@code warmup_batches} (default 32) of the first input's batches are written
 * to warm-up files ({@code <prefix>/warmup-NNN.parquet}, each at most the whole input), on the
 * main thread ({@code warmup_rows}, default 0 for whole batches: only each batch's first rows,
 * as the Rust worker's); {@code warmup_seconds}, {@code warmup_cpu_seconds} and {@code
 * warmup_thread_cpu_seconds} report that part (the JIT compiler threads' CPU in it is the route's
 * cold-start cost, paid once per JVM).
 */
public final class ParquetEncodeWorkload {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ParquetEncodeWorkload() {}

    /** One input file held in memory: its schema and record batches (buffers retained). */
    private record Input(Schema schema, List<ArrowRecordBatch> batches, long misaligned) {}

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
            long misaligned = 0;
            while (reader.loadNextBatch()) {
                try (VectorSchemaRoot own = VectorSchemaRoot.create(root.getSchema(), allocator)) {
                    own.allocateNew(); // the appender reads the target's offset buffer, so it must exist
                    for (int i = 0; i < root.getFieldVectors().size(); i++) {
                        VectorBatchAppender.batchAppend(own.getVector(i), root.getVector(i));
                    }
                    own.setRowCount(root.getRowCount());
                    for (FieldVector v : own.getFieldVectors()) {
                        if (v instanceof BaseFixedWidthVector fw && fw.getTypeWidth() > 0
                                && fw.getDataBuffer().memoryAddress() % Math.min(16, fw.getTypeWidth()) != 0) {
                            misaligned++;
                        }
                    }
                    batches.add(new VectorUnloader(own).getRecordBatch());
                }
            }
            if (batches.isEmpty()) {
                throw new IOException(path + ": no batches");
            }
            return new Input(root.getSchema(), batches, misaligned);
        }
    }

    /** {@code in} with each batch cut to its first {@code rows} rows: slices of the same buffers. */
    private static Input head(BufferAllocator allocator, Input in, int rows) {
        List<ArrowRecordBatch> out = new ArrayList<>();
        try (VectorSchemaRoot root = VectorSchemaRoot.create(in.schema(), allocator)) {
            VectorLoader loader = new VectorLoader(root);
            for (ArrowRecordBatch b : in.batches()) {
                loader.load(b);
                try (VectorSchemaRoot head = root.slice(0, Math.min(rows, root.getRowCount()))) {
                    out.add(new VectorUnloader(head).getRecordBatch());
                }
            }
        }
        return new Input(in.schema(), out, in.misaligned());
    }

    /** One file; returns {rows, bytes, nanoseconds in writeAll, nanoseconds in finish}. */
    private static long[] write(BufferAllocator allocator, String bucket, String key, Input in, int batches,
            Map<String, String> conf, String options) throws IOException {
        List<ArrowRecordBatch> chosen = in.batches().subList(0, Math.min(batches, in.batches().size()));
        try (InMemory reader = new InMemory(allocator, in.schema(), chosen);
                ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
            Data.exportArrayStream(allocator, reader, stream);
            try (NativeParquetWriter w = NativeParquetWriter.open(bucket, key, "PUBLISH", conf, options, stream.memoryAddress())) {
                long started = System.nanoTime();
                w.writeAll();
                long closing = System.nanoTime();
                String result = w.finish();
                long closed = System.nanoTime();
                JsonNode r = JSON.readTree(result);
                if (!r.path("rows").canConvertToLong() || !r.path("file_size").canConvertToLong()) {
                    throw new IOException("no rows or file_size in the writer's result " + result);
                }
                return new long[] {r.get("rows").asLong(), r.get("file_size").asLong(), closing - started, closed - closing};
            }
        }
    }

    private static long statusBytes(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.split("\\s+")[1]) * 1024;
            }
        }
        throw new IOException(field + " not in /proc/self/status");
    }

    /** The process's minor page faults so far, its ended threads' included (/proc/self/stat). */
    private static long minorFaults() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        return Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[7]); // minflt, the 10th field
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
        int warmupRows = Integer.parseInt(a.getOrDefault("warmup_rows", "0"));
        String options = a.getOrDefault("options", "{}");
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

        try (BufferAllocator allocator = new RootAllocator()) {
            List<Input> inputs = new ArrayList<>();
            for (String path : a.get("inputs").split(",")) {
                inputs.add(load(allocator, path));
            }
            // Warm-up files, as the Rust worker writes them: the first input's batches (their first
            // warmup_rows rows) until warmup_batches are written.
            Input warmup = warmupRows == 0 ? inputs.get(0) : head(allocator, inputs.get(0), warmupRows);
            ThreadCpu warmupThreads0 = ThreadCpu.start();
            long warmupCpu0 = os.getProcessCpuTime();
            long warmup0 = System.nanoTime();
            int warmupFiles = 0;
            for (int f = 0, left = warmupBatches; left > 0; f++, warmupFiles++) {
                int n = Math.min(left, inputs.get(0).batches().size());
                write(allocator, bucket, String.format("%s/warmup-%03d.parquet", prefix, f), warmup, n, conf, options);
                left -= n;
            }
            double warmupWall = (System.nanoTime() - warmup0) / 1e9;
            if (warmup != inputs.get(0)) {
                warmup.batches().forEach(ArrowRecordBatch::close);
            }
            double warmupCpu = (os.getProcessCpuTime() - warmupCpu0) / 1e9;
            Map<String, Double> warmupByThread = warmupThreads0.since();

            long misaligned = inputs.stream().mapToLong(Input::misaligned).sum();
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
            ThreadCpu threads0 = ThreadCpu.start();
            long rss0 = statusBytes("VmRSS:");
            long cpu0 = os.getProcessCpuTime();
            long faults0 = minorFaults();
            long t0 = System.nanoTime();
            AtomicInteger next = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, inputs.size()));
            List<Future<long[]>> done = new ArrayList<>();
            for (int t = 0; t < Math.min(threads, inputs.size()); t++) {
                done.add(pool.submit(() -> {
                    long[] sum = new long[4];
                    for (int i; (i = next.getAndIncrement()) < inputs.size(); ) {
                        long[] r = write(allocator, bucket, String.format("%s/part-%05d.parquet", prefix, i), inputs.get(i),
                                Integer.MAX_VALUE, conf, options);
                        for (int k = 0; k < sum.length; k++) {
                            sum[k] += r[k];
                        }
                    }
                    return sum;
                }));
            }
            long[] sum = new long[4];
            for (Future<long[]> f : done) {
                long[] r = f.get();
                for (int k = 0; k < sum.length; k++) {
                    sum[k] += r[k];
                }
            }
            ThreadCpu.Use byThread = threads0.use();
            pool.shutdown();
            double wall = (System.nanoTime() - t0) / 1e9;
            double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
            long faults = minorFaults() - faults0;
            long peak = Math.max(0, statusBytes("VmHWM:") - rss0);
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("route", "jvm");
            result.put("seconds", wall);
            result.put("cpu_seconds", cpu);
            result.put("peak_rss_over_start_bytes", peak);
            result.put("minor_faults", faults);
            result.put("start_rss_bytes", rss0);
            result.put("rows", sum[0]);
            result.put("output_bytes", sum[1]);
            result.put("write_seconds", sum[2] / 1e9);
            result.put("close_seconds", sum[3] / 1e9);
            result.put("files", inputs.size());
            result.put("threads", threads);
            result.put("misaligned_buffers", misaligned);
            result.put("thread_cpu_seconds", byThread.cpuSeconds());
            result.put("thread_minor_faults", byThread.minorFaults());
            result.put("warmup_batches", warmupBatches);
            result.put("warmup_rows", warmupRows);
            result.put("warmup_files", warmupFiles);
            result.put("warmup_seconds", warmupWall);
            result.put("warmup_cpu_seconds", warmupCpu);
            result.put("warmup_thread_cpu_seconds", warmupByThread);
            System.out.println("RESULT " + JSON.writeValueAsString(result));
            for (Input in : inputs) {
                in.batches().forEach(ArrowRecordBatch::close);
            }
        }
    }
}
