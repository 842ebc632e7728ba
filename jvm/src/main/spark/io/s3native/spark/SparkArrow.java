package io.s3native.spark;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The one place that calls Spark's internal Arrow API ({@code ArrowUtils}, {@code ArrowWriter}),
 * whose signatures differ between Spark lines: this class is compiled against Spark 4.3
 * (where {@code toArrowSchema(StructType, String, boolean)} exists, as on 3.5; 4.0 has only
 * the 4-argument form). Everything else in this package uses Arrow's and Spark's public API.
 */
final class SparkArrow {
    private SparkArrow() {
    }

    /** The Spark lines (major.minor) this class is compiled and tested against. */
    static final java.util.List<String> LINES = java.util.List.of("4.3");

    /** Throws, naming the line, unless {@code sparkVersion} is one of {@link #LINES}. */
    static void checkLine(String sparkVersion) {
        for (String l : LINES) {
            if (sparkVersion.equals(l) || sparkVersion.startsWith(l + ".")) {
                return;
            }
        }
        throw new UnsupportedOperationException("s3native.parquet is built for Spark " + String.join(", ", LINES)
                + ", not Spark " + sparkVersion + " (Spark's internal Arrow API differs between lines); write with "
                + "format(\"parquet\") through NativeS3AFileSystem instead");
    }

    /** The Arrow schema Spark itself uses for {@code schema}: timestamps as microseconds in {@code timeZoneId}, NTZ without zone. */
    static Schema toArrowSchema(StructType schema, String timeZoneId) {
        return ArrowUtils.toArrowSchema(schema, timeZoneId, true);
    }

    /** Spark's row-to-Arrow writer over {@code root} (whose schema came from {@link #toArrowSchema}). */
    static ArrowWriter writer(VectorSchemaRoot root) {
        return ArrowWriter.create(root);
    }

    /** A child of Spark's own Arrow root allocator, for one task's files. */
    static BufferAllocator allocator(String name) {
        return ArrowUtils.rootAllocator().newChildAllocator(name, 0, Long.MAX_VALUE);
    }
}
