package io.s3native.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/** Shipped to the executors: one {@link NativeParquetDataWriter} per task attempt. */
final class NativeParquetWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    private final WriteSpec spec;

    NativeParquetWriterFactory(WriteSpec spec) {
        this.spec = spec;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return new NativeParquetDataWriter(spec, partitionId, taskId);
    }
}
