package io.s3native.spark;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The DataSource V2 write of native Parquet: a {@link TableProvider} whose tables take the
 * query's schema and {@code partitionBy} columns (external metadata: nothing is inferred).
 * Through {@code format(NativeParquetTableProvider)} directly it takes save modes append and
 * overwrite, as any V2 source; {@code format("s3native.parquet")} ({@link NativeParquetDataSource})
 * adds errorIfExists and ignore as Spark's parquet source has them and runs the write here.
 */
public final class NativeParquetTableProvider implements TableProvider {
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        throw new UnsupportedOperationException("s3native.parquet only writes; read its files with spark.read.parquet");
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        SparkArrow.checkLine(org.apache.spark.SparkContext.getOrCreate().version());
        return new NativeParquetTable(schema, partitioning, properties);
    }
}
