package io.s3native.bench.iceberg;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.arrow.vectorized.ColumnarBatch;
import org.apache.iceberg.arrow.vectorized.VectorizedTableScanIterable;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types;

import io.s3native.hadoop.NativeS3AFileSystem;

/**
 * The replicated Iceberg single-reader benchmark (issue 14; shared/reference/read-path.md,
 * "Why"): a table partitioned by month of a timestamp, one uncompressed Parquet file per
 * month, columns {@code ts} (timestamptz), {@code key} (long) and {@code c0..c<n-1>}
 * (double); the query "read one month" (one file), with Iceberg's row reader
 * (IcebergGenerics) and its Arrow reader (VectorizedTableScanIterable).
 *
 * <pre>
 *   write &lt;columns&gt; &lt;rows per file&gt; &lt;months&gt; &lt;table&gt;...
 *   read  &lt;table&gt; &lt;variant&gt; &lt;month to warm up on&gt; &lt;reader&gt;:&lt;month&gt;...   (reader: rows | arrow)
 * </pre>
 * Hadoop settings come as system properties {@code bench.conf.<key>=<value>}. {@code read}
 * first reads the warm-up month with each reader (JIT, connections), then each reader's own
 * month, and prints one JSON line per measured read on stdout, prefixed {@code RESULT }. Each
 * measured read has a month (a file) of its own: S3A's analytics stream keeps what it fetched
 * for later streams of the same object, so a second read of one file would be served from
 * memory. A variant on NativeS3AFileSystem (or named with {@code native}) must have read
 * natively: the filesystem's native open count went up, its stock open count did not, and the
 * native streams handed over the bytes; one on {@link InMemoryLoadingFileSystem} (or named
 * {@code ceiling...}) must have loaded the file into memory (else the run fails).
 */
public final class IcebergReadBench {
    private static final int BATCH = 4096;
    private static final OffsetDateTime EPOCH_MONTH = OffsetDateTime.of(2024, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC);

    private IcebergReadBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 5 && args[0].equals("write")) {
            for (int i = 4; i < args.length; i++) {
                write(args[i], Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
            }
        } else if (args.length >= 5 && args[0].equals("read")) {
            Map<String, Integer> readers = new LinkedHashMap<>();
            for (int i = 4; i < args.length; i++) {
                String[] rm = args[i].split(":", 2);
                readers.put(rm[0], Integer.parseInt(rm[1]));
            }
            read(args[1], args[2], Integer.parseInt(args[3]), readers);
        } else {
            System.err.println("usage: write <columns> <rows> <months> <table>... | read <table> <variant> <warmup month> <rows|arrow>:<month>...");
            System.exit(2);
        }
    }

    static Configuration conf() {
        Configuration conf = new Configuration();
        for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
            String k = e.getKey().toString();
            if (k.startsWith("bench.conf.")) {
                conf.set(k.substring("bench.conf.".length()), e.getValue().toString());
            }
        }
        return conf;
    }

    static Schema schema(int columns) {
        List<Types.NestedField> fields = new ArrayList<>();
        fields.add(Types.NestedField.required(1, "ts", Types.TimestampType.withZone()));
        fields.add(Types.NestedField.required(2, "key", Types.LongType.get()));
        for (int i = 0; i < columns; i++) {
            fields.add(Types.NestedField.required(3 + i, "c" + i, Types.DoubleType.get()));
        }
        return new Schema(fields);
    }

    static OffsetDateTime monthStart(int month) {
        return EPOCH_MONTH.plusMonths(month);
    }

    /** One data file per month, `rows` rows each, spread over the month; values seeded by month. */
    static void write(String location, int columns, int rows, int months) throws IOException {
        Configuration conf = conf();
        Schema schema = schema(columns);
        PartitionSpec spec = PartitionSpec.builderFor(schema).month("ts").build();
        Map<String, String> props = new HashMap<>();
        props.put(TableProperties.PARQUET_COMPRESSION, "uncompressed");
        props.put(TableProperties.DEFAULT_FILE_FORMAT, "parquet");
        Table table = new HadoopTables(conf).create(schema, spec, props, location);
        GenericAppenderFactory factory = new GenericAppenderFactory(schema, spec);
        InternalRecordWrapper wrapper = new InternalRecordWrapper(schema.asStruct());
        var append = table.newAppend();
        long t0 = System.nanoTime();
        long bytes = 0;
        for (int m = 0; m < months; m++) {
            Random random = new Random(1000L * columns + m);
            OffsetDateTime start = monthStart(m);
            long span = java.time.Duration.between(start, monthStart(m + 1)).toMillis() * 1000;
            GenericRecord record = GenericRecord.create(schema);
            record.setField("ts", start);
            PartitionKey partition = new PartitionKey(spec, schema);
            partition.partition(wrapper.wrap(record));
            OutputFile out = table.io().newOutputFile(
                    table.locationProvider().newDataLocation(spec, partition, "month-" + m + ".parquet"));
            DataWriter<Record> writer = factory.newDataWriter(EncryptedFiles.plainAsEncryptedOutput(out),
                    FileFormat.PARQUET, partition);
            try (writer) {
                for (int r = 0; r < rows; r++) {
                    GenericRecord row = record.copy();
                    row.setField("ts", start.plusNanos((span * r / rows) * 1000));
                    row.setField("key", (long) random.nextInt(1_000_000));
                    for (int c = 0; c < columns; c++) {
                        row.set(2 + c, random.nextDouble());
                    }
                    writer.write(row);
                }
            }
            DataFile file = writer.toDataFile();
            bytes += file.fileSizeInBytes();
            append.appendFile(file);
        }
        append.commit();
        System.out.println("RESULT {\"table\": \"" + location + "\", \"written_bytes\": " + bytes + ", \"write_seconds\": "
                + (System.nanoTime() - t0) / 1e9 + "}");
    }

    static Expression month(int m) {
        return Expressions.and(
                Expressions.greaterThanOrEqual("ts", micros(monthStart(m))),
                Expressions.lessThan("ts", micros(monthStart(m + 1))));
    }

    static long micros(OffsetDateTime t) {
        return t.toEpochSecond() * 1_000_000L + t.getNano() / 1000;
    }

    /** Reads month `warmup` with every reader, then each reader's own month, measured. */
    static void read(String location, String variant, int warmup, Map<String, Integer> readers) throws Exception {
        Configuration conf = conf();
        Table table = new HadoopTables(conf).load(location);
        FileSystem fs = new Path(location).getFileSystem(conf);
        int columns = table.schema().columns().size() - 2;
        for (String reader : readers.keySet()) {
            scan(table, reader, warmup, columns);
        }
        for (Map.Entry<String, Integer> entry : readers.entrySet()) {
            String reader = entry.getKey();
            int m = entry.getValue();
            // The file (and the GETs of planning: metadata, manifest list, manifests) first.
            Map<String, Long> before = counters(fs);
            long fileBytes = 0;
            int files = 0;
            String path = null;
            try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(month(m)).planFiles()) {
                for (FileScanTask t : tasks) {
                    fileBytes += t.file().fileSizeInBytes();
                    path = t.file().location();
                    files++;
                }
            }
            Map<String, Long> planned = counters(fs);
            long nativeOpens = nativeOpens(fs);
            long stockOpens = stockOpens(fs);
            long loadedBefore = loadedBytes(fs);
            long cpu0 = processCpuNanos();
            long t0 = System.nanoTime();
            long[] seen = scan(table, reader, m, columns);
            double seconds = (System.nanoTime() - t0) / 1e9;
            double cpu = (processCpuNanos() - cpu0) / 1e9;
            Map<String, Long> after = counters(fs);
            Map<String, Long> planning = delta(before, planned);
            Map<String, Long> scanning = delta(planned, after);
            // the scan plans again: take out what the planning pass alone cost
            Map<String, Long> data = new TreeMap<>();
            for (Map.Entry<String, Long> e : scanning.entrySet()) {
                long v = e.getValue() - planning.getOrDefault(e.getKey(), 0L);
                if (v != 0) {
                    data.put(e.getKey(), v);
                }
            }
            long natOpened = nativeOpens(fs) - nativeOpens;
            long stockOpened = stockOpens(fs) - stockOpens;
            if (files != 1) {
                throw new IllegalStateException("month " + m + " of " + location + " has " + files + " files, not 1");
            }
            if ((variant.contains("native") || fs instanceof NativeS3AFileSystem) && (!(fs instanceof NativeS3AFileSystem)
                    || natOpened < 1 || stockOpened != 0 || data.getOrDefault("stream_read_bytes", 0L) <= 0)) {
                throw new IllegalStateException("variant " + variant + " did not read " + path + " natively ("
                        + fs.getClass().getName() + "): " + natOpened + " native opens, " + stockOpened
                        + " stock opens, statistics " + data);
            }
            long loaded = loadedBytes(fs) - loadedBefore;
            if ((variant.startsWith("ceiling") || fs instanceof InMemoryLoadingFileSystem) && loaded < fileBytes) {
                throw new IllegalStateException("variant " + variant + " did not load " + path + " into memory ("
                        + fs.getClass().getName() + "): " + loaded + " bytes loaded, the file has " + fileBytes);
            }
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("variant", variant);
            json.put("reader", reader);
            json.put("columns", columns);
            json.put("month", m);
            json.put("rows", seen[0]);
            json.put("file", path);
            json.put("file_bytes", fileBytes);
            json.put("seconds", seconds);
            json.put("cpu_seconds", cpu);
            json.put("native_opens", natOpened);
            json.put("stock_opens", stockOpened);
            json.put("checksum", seen[1]);
            json.put("statistics", data);
            System.out.println("RESULT " + toJson(json));
        }
    }

    /** One full scan of month `m`: {rows, a checksum of the keys} (so nothing is skipped). */
    static long[] scan(Table table, String reader, int m, int columns) throws IOException {
        long rows = 0;
        long sum = 0;
        double dsum = 0;
        if (reader.equals("rows")) {
            try (CloseableIterable<Record> records = IcebergGenerics.read(table).where(month(m)).build()) {
                for (Record r : records) {
                    rows++;
                    sum += (Long) r.get(1);
                    for (int c = 0; c < columns; c++) {
                        dsum += (Double) r.get(2 + c);
                    }
                }
            }
        } else if (reader.equals("arrow")) {
            try (VectorizedTableScanIterable batches =
                         new VectorizedTableScanIterable(table.newScan().filter(month(m)), BATCH, false)) {
                for (ColumnarBatch batch : batches) {
                    VectorSchemaRoot root = batch.createVectorSchemaRootFromVectors();
                    BigIntVector keys = (BigIntVector) root.getVector("key");
                    int n = root.getRowCount();
                    for (int i = 0; i < n; i++) {
                        sum += keys.get(i);
                    }
                    for (int c = 0; c < columns; c++) {
                        Float8Vector v = (Float8Vector) root.getVector("c" + c);
                        for (int i = 0; i < n; i++) {
                            dsum += v.get(i);
                        }
                    }
                    rows += n;
                    root.close();
                }
            }
        } else {
            throw new IllegalArgumentException("reader must be rows or arrow, not " + reader);
        }
        return new long[] {rows, sum ^ Double.doubleToLongBits(dsum)};
    }

    static Map<String, Long> counters(FileSystem fs) {
        Map<String, Long> out = new TreeMap<>();
        if (fs instanceof IOStatisticsSource) {
            IOStatistics s = ((IOStatisticsSource) fs).getIOStatistics();
            if (s != null) {
                out.putAll(s.counters());
            }
        }
        return out;
    }

    static Map<String, Long> delta(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Long> e : b.entrySet()) {
            long v = e.getValue() - a.getOrDefault(e.getKey(), 0L);
            if (v != 0) {
                out.put(e.getKey(), v);
            }
        }
        return out;
    }

    static long nativeOpens(FileSystem fs) {
        return fs instanceof NativeS3AFileSystem ? ((NativeS3AFileSystem) fs).getNativeOpenCount() : 0;
    }

    static long stockOpens(FileSystem fs) {
        return fs instanceof NativeS3AFileSystem ? ((NativeS3AFileSystem) fs).getStockOpenCount() : 0;
    }

    static long loadedBytes(FileSystem fs) {
        return fs instanceof InMemoryLoadingFileSystem ? ((InMemoryLoadingFileSystem) fs).getLoadedBytes() : 0;
    }

    static long processCpuNanos() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        }
        return 0;
    }

    static String toJson(Map<String, ?> m) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, ?> e : m.entrySet()) {
            if (b.length() > 1) {
                b.append(", ");
            }
            b.append('"').append(e.getKey()).append("\": ");
            Object v = e.getValue();
            if (v instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, ?> inner = (Map<String, ?>) v;
                b.append(toJson(inner));
            } else if (v instanceof Number) {
                b.append(v);
            } else {
                b.append('"').append(String.valueOf(v).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
            }
        }
        return b.append('}').toString();
    }
}
