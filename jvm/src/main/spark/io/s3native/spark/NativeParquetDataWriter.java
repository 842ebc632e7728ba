package io.s3native.spark;

import java.io.IOException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.s3native.S3NativeOutputStream;
import io.s3native.UploadResult;
import io.s3native.parquet.NativeParquetWriter;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * One task attempt's writer: rows go through Spark's own ArrowWriter into one Arrow batch at
 * a time, which the native Parquet writer (DEFERRED mode) pulls through the file's Arrow C
 * stream and encodes straight into the multipart upload. Partitioned output keeps one file
 * open at a time (the write asks Spark to sort each task's rows by the partition columns);
 * partition columns are not stored in the files, as Spark's parquet source does.
 *
 * <p>{@link #commit} finishes every file and returns their uploads, not completed: the
 * driver's {@code BatchWrite.commit} completes them. {@link #abort} aborts every upload of
 * this attempt, finished or not; {@link #close} frees what is left (an unfinished upload is
 * aborted by the native writer, never completed).
 */
final class NativeParquetDataWriter implements DataWriter<InternalRow> {
    static final String DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Rows between two checks of a batch's Arrow bytes against {@code batchBytes}. */
    static final int BYTES_CHECK_ROWS = 1024;

    private final WriteSpec spec;
    private final int partitionId;
    private final long taskId;
    private final int[] partitionOrdinals;
    private final int[] dataOrdinals;
    private final DataType[] dataTypes;
    private final StructType dataSchema;
    private final Schema arrowSchema;
    private final BufferAllocator allocator;
    private final List<FileCommit> done = new ArrayList<>();
    private OpenFile current;
    private String currentDir;
    private int fileCount;

    NativeParquetDataWriter(WriteSpec spec, int partitionId, long taskId) {
        this.spec = spec;
        this.partitionId = partitionId;
        this.taskId = taskId;
        StructField[] fields = spec.schema.fields();
        partitionOrdinals = new int[spec.partitionColumns.length];
        for (int i = 0; i < partitionOrdinals.length; i++) {
            partitionOrdinals[i] = spec.schema.fieldIndex(spec.partitionColumns[i]);
        }
        List<StructField> data = new ArrayList<>();
        List<Integer> ordinals = new ArrayList<>();
        for (int i = 0; i < fields.length; i++) {
            if (!isPartition(i)) {
                data.add(fields[i]);
                ordinals.add(i);
            }
        }
        dataOrdinals = ordinals.stream().mapToInt(Integer::intValue).toArray();
        dataSchema = new StructType(data.toArray(new StructField[0]));
        dataTypes = new DataType[dataOrdinals.length];
        for (int i = 0; i < dataOrdinals.length; i++) {
            dataTypes[i] = fields[dataOrdinals[i]].dataType();
        }
        arrowSchema = SparkArrow.toArrowSchema(dataSchema, spec.timeZoneId);
        allocator = SparkArrow.allocator("s3native.parquet task " + taskId);
    }

    private boolean isPartition(int ordinal) {
        for (int p : partitionOrdinals) {
            if (p == ordinal) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void write(InternalRow row) throws IOException {
        InternalRow data = row;
        if (partitionOrdinals.length > 0) {
            String dir = partitionDir(row);
            if (current != null && !dir.equals(currentDir)) {
                finishCurrent();
            }
            currentDir = dir;
            Object[] values = new Object[dataOrdinals.length];
            for (int i = 0; i < values.length; i++) {
                values[i] = row.isNullAt(dataOrdinals[i]) ? null : row.get(dataOrdinals[i], dataTypes[i]);
            }
            data = new GenericInternalRow(values);
        } else {
            currentDir = "";
        }
        if (current == null) {
            current = open(currentDir);
        }
        current.write(data);
    }

    /** {@code k1=v1/k2=v2/} for the row's partition values, escaped as Hive and Spark escape them. */
    private String partitionDir(InternalRow row) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < partitionOrdinals.length; i++) {
            int o = partitionOrdinals[i];
            StructField f = spec.schema.fields()[o];
            String v = row.isNullAt(o) ? null : partitionValue(f, row.get(o, f.dataType()));
            b.append(escape(f.name())).append('=').append(v == null || v.isEmpty() ? DEFAULT_PARTITION : escape(v)).append('/');
        }
        return b.toString();
    }

    private static String partitionValue(StructField f, Object v) {
        DataType t = f.dataType();
        if (t instanceof StringType || t instanceof IntegerType || t instanceof LongType || t instanceof ShortType
                || t instanceof ByteType || t instanceof BooleanType || t instanceof DecimalType) {
            return v.toString();
        }
        if (t instanceof DateType) {
            return LocalDate.ofEpochDay((Integer) v).toString();
        }
        throw new UnsupportedOperationException("s3native.parquet: partition column " + f.name() + " has type " + t.simpleString()
                + "; partition by string, integral, boolean, decimal or date columns");
    }

    /** Hive's path escaping: %XX for control characters, DEL and the characters of the set below. */
    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f || "\"#%'*/:=?\\{[]^".indexOf(c) >= 0) {
                b.append('%').append(String.format("%02X", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private OpenFile open(String dir) throws IOException {
        String name = String.format("part-%05d-%s-%d.c%03d%s.parquet", partitionId, spec.jobId, taskId, fileCount++, spec.fileSuffix);
        return new OpenFile(spec.key(dir + name));
    }

    private void finishCurrent() throws IOException {
        OpenFile f = current;
        current = null;
        done.add(f.finish());
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (current != null) {
            finishCurrent();
        }
        return new NativeParquetCommitMessage(partitionId, taskId, done);
    }

    @Override
    public void abort() throws IOException {
        IOException first = null;
        OpenFile f = current;
        current = null;
        if (f != null) {
            f.abort();
        }
        for (FileCommit c : done) {
            try {
                S3NativeOutputStream.abort(UploadResult.fromJson(c.upload), spec.settings);
            } catch (IOException e) {
                if (first == null) {
                    first = new IOException("s3native.parquet: aborting the upload of s3://" + c.bucket + "/" + c.key + ": "
                            + e.getMessage(), e);
                }
            }
        }
        done.clear();
        if (first != null) {
            throw first;
        }
    }

    @Override
    public void close() {
        OpenFile f = current;
        current = null;
        if (f != null) {
            f.abort();
        }
        try {
            allocator.close();
        } catch (IllegalStateException e) {
            // Arrow's leak report; the task's outcome (and its first failure) stands.
            org.slf4j.LoggerFactory.getLogger(NativeParquetDataWriter.class).warn("s3native.parquet: task {}: {}", taskId,
                    e.getMessage());
        }
    }

    /**
     * The Arrow side of one file's C stream: the batch Spark's ArrowWriter just filled in the
     * stream's root, handed over when the native writer pulls; "no batch ready" ends the stream.
     */
    private static final class PushedBatches extends ArrowReader {
        private final Schema schema;
        boolean ready;

        PushedBatches(BufferAllocator allocator, Schema schema) {
            super(allocator);
            this.schema = schema;
        }

        @Override
        public boolean loadNextBatch() {
            boolean r = ready;
            ready = false;
            return r;
        }

        @Override
        public long bytesRead() {
            return 0;
        }

        @Override
        protected void closeReadSource() {
        }

        @Override
        protected Schema readSchema() {
            return schema;
        }
    }

    /** One Parquet file being written: Spark's ArrowWriter into the stream's root, the native writer pulling it. */
    private final class OpenFile {
        final String key;
        final PushedBatches batches;
        /** The vectors Spark's ArrowWriter fills: the stream's root, reused batch after batch. */
        final VectorSchemaRoot root;
        final ArrowArrayStream stream;
        final NativeParquetWriter writer;
        final ArrowWriter arrow;
        int rows;
        private boolean released;

        OpenFile(String key) throws IOException {
            this.key = key;
            batches = new PushedBatches(allocator, arrowSchema);
            ArrowArrayStream s = ArrowArrayStream.allocateNew(allocator);
            try {
                root = batches.getVectorSchemaRoot();
                arrow = SparkArrow.writer(root);
                Data.exportArrayStream(allocator, batches, s);
                writer = NativeParquetWriter.open(spec.bucket, key, "DEFERRED", spec.settings, spec.parquetOptions, s.memoryAddress());
            } catch (IOException | RuntimeException e) {
                s.close();
                closeQuietly(batches);
                throw e;
            }
            stream = s;
        }

        void write(InternalRow row) throws IOException {
            arrow.write(row);
            if (++rows == spec.batchRows || rows % BYTES_CHECK_ROWS == 0 && arrowBytes() >= spec.batchBytes) {
                flush();
            }
        }

        /** The Arrow bytes of the rows buffered so far: validity, offsets and values, children included. */
        long arrowBytes() {
            long n = 0;
            for (FieldVector v : root.getFieldVectors()) {
                n += v.getBufferSizeFor(rows);
            }
            return n;
        }

        /** Hand the rows buffered so far to the native writer as one batch. */
        private void flush() throws IOException {
            if (rows == 0) {
                return;
            }
            arrow.finish();
            batches.ready = true;
            Map<String, Object> r = writer.writeNext(1);
            if (((Long) r.get("batches")).longValue() != 1) {
                throw new IOException("s3native.parquet: the native writer did not take the batch for s3://" + spec.bucket + "/" + key);
            }
            arrow.reset();
            rows = 0;
        }

        FileCommit finish() throws IOException {
            try {
                flush();
                writer.writeNext(-1); // no batch ready: the stream ends
                String json = writer.finish();
                JsonNode result = JSON.readTree(json);
                String upload = result.get("upload").toString();
                UploadResult u = UploadResult.fromJson(upload);
                return new FileCommit(spec.bucket, key, u.getUploadId(), u.getEtags(), result.get("rows").asLong(),
                        result.get("file_size").asLong(), upload);
            } catch (IOException | RuntimeException e) {
                abort();
                throw e;
            } finally {
                release();
            }
        }

        void abort() {
            try {
                writer.abort();
            } catch (IOException e) {
                // release() frees the writer, which aborts an unfinished upload again.
            }
            release();
        }

        /** Free the native writer (an unfinished upload is aborted, never completed), the stream and the batch; once. */
        private void release() {
            if (released) {
                return;
            }
            released = true;
            writer.close();
            stream.close();
            closeQuietly(batches);
        }
    }

    /** The stream's release closes the reader already; closing it again frees nothing more. */
    private static void closeQuietly(ArrowReader r) {
        try {
            r.close();
        } catch (IOException | RuntimeException e) {
            // nothing left to free
        }
    }
}
