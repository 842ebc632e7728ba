package io.s3native.spark;

import java.util.List;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** What one task attempt's {@code DataWriter.commit} hands the driver: its files' uploads, not yet completed. */
public final class NativeParquetCommitMessage implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;

    public final int partitionId;
    public final long taskId;
    public final List<FileCommit> files;

    NativeParquetCommitMessage(int partitionId, long taskId, List<FileCommit> files) {
        this.partitionId = partitionId;
        this.taskId = taskId;
        this.files = List.copyOf(files);
    }

    @Override
    public String toString() {
        return "NativeParquetCommitMessage{partition " + partitionId + ", task " + taskId + ", " + files + "}";
    }
}
