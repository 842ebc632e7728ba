package io.s3native.spark;

import java.io.Serializable;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.sql.types.StructType;

/**
 * What every task of one write needs, built once on the driver and shipped with the writer
 * factory: the output location, the input schema and its partition columns, the native
 * writer's settings ({@code fs.s3a.*} after per-bucket options; they may hold credentials, so
 * {@link #toString} never prints them), the Parquet options JSON and the job's id.
 */
final class WriteSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    final String bucket;
    /** The key prefix of the output directory, without a trailing slash ("" for the bucket's root). */
    final String prefix;
    final StructType schema;
    final String[] partitionColumns;
    final TreeMap<String, String> settings;
    final String parquetOptions;
    final String fileSuffix;
    final String jobId;
    /** Where {@link #jobId} came from, for _SUCCESS: {@code spark.sql.sources.writeJobUUID} or {@code spark query id}. */
    final String jobIdSource;
    final String timeZoneId;
    /** Rows per Arrow batch at most (write option {@code batchRows}). */
    final int batchRows;
    /** Arrow bytes per batch at most, checked every {@link NativeParquetDataWriter#BYTES_CHECK_ROWS} rows (write option {@code batchBytes}). */
    final long batchBytes;

    WriteSpec(String bucket, String prefix, StructType schema, String[] partitionColumns, Map<String, String> settings,
            String parquetOptions, String fileSuffix, String jobId, String jobIdSource, String timeZoneId, int batchRows,
            long batchBytes) {
        this.bucket = bucket;
        this.prefix = prefix;
        this.schema = schema;
        this.partitionColumns = partitionColumns.clone();
        this.settings = new TreeMap<>(settings);
        this.parquetOptions = parquetOptions;
        this.fileSuffix = fileSuffix;
        this.jobId = jobId;
        this.jobIdSource = jobIdSource;
        this.timeZoneId = timeZoneId;
        this.batchRows = batchRows;
        this.batchBytes = batchBytes;
    }

    /** {@code prefix/rest}, or {@code rest} at the bucket's root. */
    String key(String rest) {
        return prefix.isEmpty() ? rest : prefix + "/" + rest;
    }

    @Override
    public String toString() {
        return "s3native.parquet write of job " + jobId + " to s3a://" + bucket + "/" + prefix;
    }
}
