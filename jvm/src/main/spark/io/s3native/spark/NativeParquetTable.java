package io.s3native.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.s3native.S3NativeOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AUtils;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A directory of Parquet files on S3 as a DataSource V2 table that can only be written:
 * batch append, and truncate (save mode overwrite). Partitioned by identity transforms of
 * top-level columns ({@code partitionBy}), laid out {@code col=value/} as Spark's parquet
 * source lays them out.
 */
final class NativeParquetTable implements SupportsWrite {
    /** Spark's job UUID key (a write option or the Hadoop configuration), which S3A's committers honour too. */
    static final String WRITE_JOB_UUID = "spark.sql.sources.writeJobUUID";

    /**
     * Rows per Arrow batch handed to the native writer at most (write option {@code batchRows}).
     * Each batch costs the JVM a fixed export and release: in the Parquet bench the JVM route took
     * 1.150x the Rust API's CPU at 8,192 rows a batch, 1.066x at 65,536
     * (benches/results/2026-12-07b and 2026-12-07c).
     */
    static final int DEFAULT_BATCH_ROWS = 65_536;
    /**
     * Arrow bytes per batch at most (write option {@code batchBytes}), so that wide rows do not
     * make a batch of batchRows large: 32 MiB off the heap per
     * task (a task has one file open at a time), beside the row group the native writer builds.
     */
    static final long DEFAULT_BATCH_BYTES = 32L << 20;

    private final StructType schema;
    private final Transform[] partitioning;
    private final Map<String, String> properties;

    NativeParquetTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        this.schema = schema;
        this.partitioning = partitioning.clone();
        this.properties = properties;
    }

    @Override
    public String name() {
        return "s3native.parquet " + properties.getOrDefault("path", "");
    }

    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
        return schema;
    }

    @Override
    public Transform[] partitioning() {
        return partitioning.clone();
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
    }

    private String[] partitionColumns() {
        String[] cols = new String[partitioning.length];
        for (int i = 0; i < partitioning.length; i++) {
            Transform t = partitioning[i];
            NamedReference[] refs = t.references();
            if (!"identity".equals(t.name()) || refs.length != 1 || refs[0].fieldNames().length != 1) {
                throw new UnsupportedOperationException("s3native.parquet: partitioning " + t.describe()
                        + " is not supported; partition by top-level columns (partitionBy)");
            }
            cols[i] = refs[0].fieldNames()[0];
        }
        return cols;
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return new Builder(info);
    }

    private final class Builder implements WriteBuilder, SupportsTruncate {
        private final LogicalWriteInfo info;
        private boolean truncate;

        Builder(LogicalWriteInfo info) {
            this.info = info;
        }

        @Override
        public WriteBuilder truncate() {
            truncate = true;
            return this;
        }

        @Override
        public Write build() {
            return new NativeWrite(info, partitionColumns(), truncate);
        }
    }

    private static final class NativeWrite implements RequiresDistributionAndOrdering {
        private final LogicalWriteInfo info;
        private final String[] partitionColumns;
        private final boolean truncate;

        NativeWrite(LogicalWriteInfo info, String[] partitionColumns, boolean truncate) {
            this.info = info;
            this.partitionColumns = partitionColumns;
            this.truncate = truncate;
        }

        @Override
        public String description() {
            return "s3native.parquet" + (truncate ? " (overwrite)" : " (append)");
        }

        @Override
        public Distribution requiredDistribution() {
            return Distributions.unspecified();
        }

        /** Each task's rows sorted by the partition columns, so a task keeps one file open at a time. */
        @Override
        public SortOrder[] requiredOrdering() {
            SortOrder[] order = new SortOrder[partitionColumns.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = Expressions.sort(Expressions.column(partitionColumns[i]), SortDirection.ASCENDING);
            }
            return order;
        }

        @Override
        public BatchWrite toBatch() {
            Map<String, String> options = info.options().asCaseSensitiveMap();
            String path = info.options().get("path");
            if (path == null || path.isEmpty()) {
                throw new IllegalArgumentException("s3native.parquet: no path; use save(\"s3a://bucket/dir\")");
            }
            URI uri = URI.create(path);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("s3a") && !scheme.equals("s3")) {
                throw new IllegalArgumentException("s3native.parquet writes to s3a:// paths, not " + path);
            }
            String bucket = uri.getHost();
            String prefix = uri.getPath() == null ? "" : uri.getPath().replaceAll("^/+", "").replaceAll("/+$", "");
            SparkContext sc = SparkContext.getOrCreate();
            Configuration conf = new Configuration(sc.hadoopConfiguration());
            // As Spark's file sources: the write options go into the job's Hadoop configuration.
            for (Map.Entry<String, String> e : options.entrySet()) {
                if (e.getValue() != null) {
                    conf.set(e.getKey(), e.getValue());
                }
            }
            Map<String, String> settings = settings(S3AUtils.propagateBucketOptions(conf, bucket));
            try {
                for (String w : S3NativeOutputStream.validateSettings(bucket, settings)) {
                    org.slf4j.LoggerFactory.getLogger(NativeParquetTable.class).info("s3native.parquet: {}", w);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            StructType input = info.schema();
            List<StructField> data = new ArrayList<>();
            for (StructField f : input.fields()) {
                if (!java.util.Arrays.asList(partitionColumns).contains(f.name())) {
                    data.add(f);
                }
            }
            StructType dataSchema = new StructType(data.toArray(new StructField[0]));
            SparkSession session = SparkSession.active();
            String codec = info.options().getOrDefault("compression",
                    session.conf().get("spark.sql.parquet.compression.codec", "snappy")).toLowerCase(Locale.ROOT);
            String compression;
            String suffix;
            switch (codec) {
                case "snappy":
                    compression = "SNAPPY";
                    suffix = ".snappy";
                    break;
                case "zstd":
                    compression = "ZSTD";
                    suffix = ".zstd";
                    break;
                case "none":
                case "uncompressed":
                    compression = "NONE";
                    suffix = "";
                    break;
                default:
                    throw new IllegalArgumentException("s3native.parquet: compression '" + codec
                            + "' is not supported; snappy, zstd, none or uncompressed");
            }
            Map<String, Object> parquet = new LinkedHashMap<>();
            parquet.put("compression", compression);
            // parquet-java's row-group size key, which Spark's parquet source honours (option or Hadoop conf).
            long rowGroup = conf.getLongBytes("parquet.block.size", -1);
            if (rowGroup > 0) {
                parquet.put("row_group_bytes", rowGroup);
            }
            Map<String, String> kv = new TreeMap<>();
            kv.put("org.apache.spark.version", sc.version());
            kv.put("org.apache.spark.sql.parquet.row.metadata", dataSchema.json());
            parquet.put("key_value_metadata", kv);
            String parquetJson;
            try {
                parquetJson = new ObjectMapper().writeValueAsString(parquet);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            int batchRows = Integer.parseInt(info.options().getOrDefault("batchRows", String.valueOf(DEFAULT_BATCH_ROWS)));
            if (batchRows < 1) {
                throw new IllegalArgumentException("s3native.parquet: batchRows must be at least 1, not " + batchRows);
            }
            long batchBytes = Long.parseLong(info.options().getOrDefault("batchBytes", String.valueOf(DEFAULT_BATCH_BYTES)));
            if (batchBytes < 1) {
                throw new IllegalArgumentException("s3native.parquet: batchBytes must be at least 1, not " + batchBytes);
            }
            String tz = session.conf().get("spark.sql.session.timeZone");
            // The job's unique id, in every file name (which the pending-upload sweep matches): the
            // query id, or spark.sql.sources.writeJobUUID when set (as S3A's committers honour it).
            // The option by Spark's case-insensitive lookup: Spark 4.3 hands write options over
            // with lower-cased keys, even through asCaseSensitiveMap().
            String jobId = info.options().getOrDefault(WRITE_JOB_UUID, conf.getTrimmed(WRITE_JOB_UUID, "")).trim();
            String jobIdSource = WRITE_JOB_UUID;
            if (jobId.isEmpty()) {
                jobId = info.queryId();
                jobIdSource = "spark query id";
            }
            WriteSpec spec = new WriteSpec(bucket, prefix, input, partitionColumns, settings, parquetJson, suffix, jobId, jobIdSource, tz,
                    batchRows, batchBytes);
            return new NativeParquetBatchWrite(spec, new Path(path), conf, truncate);
        }
    }

    /** The native writer's settings: every {@code fs.s3a.*} key (per-bucket options already applied), credentials included. */
    static Map<String, String> settings(Configuration conf) {
        Map<String, String> m = new TreeMap<>();
        for (Map.Entry<String, String> e : conf.getPropsWithPrefix("fs.s3a.").entrySet()) {
            if (!e.getKey().startsWith("bucket.") && e.getValue() != null) {
                m.put("fs.s3a." + e.getKey(), e.getValue());
            }
        }
        return m;
    }
}
