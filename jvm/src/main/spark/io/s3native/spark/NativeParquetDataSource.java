package io.s3native.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;

/**
 * {@code df.write.format("s3native.parquet").mode(m).partitionBy(...).save("s3a://bucket/dir")}:
 * the save modes of Spark's parquet source, whose existence check is the output path's
 * ({@code FileSystem.exists}): errorIfExists fails on an existing path, ignore writes nothing
 * there, overwrite replaces its contents at job commit, append adds files. The write itself
 * is the DataSource V2 write of {@link NativeParquetTableProvider} (Spark's V2 API rejects
 * errorIfExists and ignore for a plain TableProvider, so this V1 entry point decides the
 * mode and runs the V2 write with append or overwrite).
 */
public final class NativeParquetDataSource implements CreatableRelationProvider, DataSourceRegister {
    public static final String SHORT_NAME = "s3native.parquet";
    /** The option in which Spark's DataFrameWriter passes {@code partitionBy} to a V1 source (a JSON array). */
    static final String PARTITION_COLUMNS = "__partition_columns";

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public BaseRelation createRelation(SQLContext sqlContext, SaveMode mode, scala.collection.immutable.Map<String, String> parameters,
            Dataset<Row> data) {
        SparkArrow.checkLine(data.sparkSession().version());
        // (Iterated by hand: Scala's Java converters differ between Scala 2.12 and 2.13.)
        Map<String, String> options = new HashMap<>();
        scala.collection.Iterator<String> keys = parameters.keysIterator();
        while (keys.hasNext()) {
            String k = keys.next();
            options.put(k, parameters.apply(k));
        }
        String path = options.remove("path");
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException("s3native.parquet: no path; use save(\"s3a://bucket/dir\")");
        }
        String[] partitionBy = new String[0];
        String encoded = options.remove(PARTITION_COLUMNS);
        try {
            if (encoded != null) {
                partitionBy = new ObjectMapper().readValue(encoded, String[].class);
            }
            Path out = new Path(path);
            boolean exists;
            FileSystem fs = out.getFileSystem(data.sparkSession().sparkContext().hadoopConfiguration());
            exists = fs.exists(out);
            SaveMode run = SaveMode.Append;
            switch (mode) {
                case ErrorIfExists:
                    if (exists) {
                        throw new FileAlreadyExistsException("s3native.parquet: path " + path
                                + " already exists; set mode to overwrite or append to write there");
                    }
                    break;
                case Ignore:
                    if (exists) {
                        return relation(sqlContext, data.schema());
                    }
                    break;
                case Overwrite:
                    String overwrite = options.getOrDefault("partitionOverwriteMode",
                            data.sparkSession().conf().get("spark.sql.sources.partitionOverwriteMode", "static"));
                    if (partitionBy.length > 0 && overwrite.equalsIgnoreCase("dynamic")) {
                        throw new UnsupportedOperationException("s3native.parquet: partitionOverwriteMode dynamic is not "
                                + "supported; overwrite replaces the whole directory (static), or use append");
                    }
                    run = SaveMode.Overwrite;
                    break;
                default:
                    break;
            }
            DataFrameWriter<Row> w = data.write().format(NativeParquetTableProvider.class.getName()).mode(run).options(options);
            if (partitionBy.length > 0) {
                w = w.partitionBy(partitionBy);
            }
            w.save(path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return relation(sqlContext, data.schema());
    }

    private static BaseRelation relation(SQLContext sqlContext, StructType schema) {
        return new BaseRelation() {
            @Override
            public SQLContext sqlContext() {
                return sqlContext;
            }

            @Override
            public StructType schema() {
                return schema;
            }
        };
    }
}
