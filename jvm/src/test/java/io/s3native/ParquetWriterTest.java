package io.s3native;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.s3native.parquet.NativeParquetWriter;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.example.GroupReadSupport;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Java Parquet writer: Arrow batches exported by arrow-c-data as one ArrowArrayStream per
 * file, encoded natively, read back by parquet-java (parquet-hadoop's example reader) with
 * the same values; and its lifecycle (abort, close twice, sticky failure, bad addresses).
 */
class ParquetWriterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static String bucket;
    private static BufferAllocator rootAllocator;

    @BeforeAll
    static void setUp() {
        bucket = S3Test.newBucket("parquet");
        rootAllocator = new RootAllocator();
    }

    @AfterAll
    static void tearDown() {
        rootAllocator.close();
    }

    /** id int64 (not null), name utf8 (null every 5th row), price decimal(10,2), day date, ts timestamp(us, UTC). */
    private static Schema schema() {
        return new Schema(Arrays.asList(
                new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
                Field.nullable("name", ArrowType.Utf8.INSTANCE),
                Field.nullable("price", new ArrowType.Decimal(10, 2, 128)),
                Field.nullable("day", new ArrowType.Date(DateUnit.DAY)),
                Field.nullable("ts", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC"))));
    }

    /** {@code batches} batches of {@code rows} rows; row i: id i, name "name-i", price i/100, day i, ts i*1000 us. Fails at batch {@code failAt} (-1: never). */
    private static final class Batches extends ArrowReader {
        private final int batches;
        private final int rows;
        private final int failAt;
        private int next;

        Batches(int batches, int rows, int failAt) {
            super(rootAllocator);
            this.batches = batches;
            this.rows = rows;
            this.failAt = failAt;
        }

        @Override
        public boolean loadNextBatch() throws IOException {
            if (next == failAt) {
                throw new IOException("the producer broke at batch " + next);
            }
            if (next == batches) {
                return false;
            }
            VectorSchemaRoot root = getVectorSchemaRoot();
            BigIntVector id = (BigIntVector) root.getVector("id");
            VarCharVector name = (VarCharVector) root.getVector("name");
            DecimalVector price = (DecimalVector) root.getVector("price");
            DateDayVector day = (DateDayVector) root.getVector("day");
            TimeStampMicroTZVector ts = (TimeStampMicroTZVector) root.getVector("ts");
            root.allocateNew();
            for (int i = 0; i < rows; i++) {
                long v = (long) next * rows + i;
                id.setSafe(i, v);
                if (v % 5 == 0) {
                    name.setNull(i);
                } else {
                    name.setSafe(i, ("name-" + v).getBytes(StandardCharsets.UTF_8));
                }
                price.setSafe(i, BigDecimal.valueOf(v, 2));
                day.setSafe(i, (int) v);
                ts.setSafe(i, v * 1000);
            }
            root.setRowCount(rows);
            next++;
            return true;
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
            return schema();
        }
    }

    /** A stream exported from {@code reader}; the caller closes it (after the writer took it over, a no-op). */
    private static ArrowArrayStream export(ArrowReader reader) {
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(rootAllocator);
        Data.exportArrayStream(rootAllocator, reader, stream);
        return stream;
    }

    /** The object read by parquet-java: checks every row of the table and returns the file's schema. */
    private static MessageType readBack(String key, long rows) throws IOException {
        java.nio.file.Path file = Files.createTempFile("s3native-", ".parquet");
        try {
            Files.write(file, S3Test.get(bucket, key));
            org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(file.toUri());
            long n = 0;
            try (ParquetReader<Group> r = ParquetReader.builder(new GroupReadSupport(), path).build()) {
                for (Group g = r.read(); g != null; g = r.read(), n++) {
                    assertEquals(n, g.getLong("id", 0));
                    if (n % 5 == 0) {
                        assertEquals(0, g.getFieldRepetitionCount("name"), "row " + n + " has a null name");
                    } else {
                        assertEquals("name-" + n, g.getString("name", 0));
                    }
                    assertEquals(n, g.getLong("price", 0), "decimal(10,2) as its unscaled INT64");
                    assertEquals((int) n, g.getInteger("day", 0));
                    assertEquals(n * 1000, g.getLong("ts", 0));
                }
            }
            assertEquals(rows, n);
            try (ParquetFileReader f = ParquetFileReader.open(HadoopInputFile.fromPath(path, new Configuration()))) {
                return f.getFooter().getFileMetaData().getSchema();
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void batchesFromAnArrowStreamAreReadBackByParquetJava() throws Exception {
        try (ArrowArrayStream stream = export(new Batches(4, 1000, -1));
                NativeParquetWriter w = NativeParquetWriter.open(bucket, "t/one.parquet", "PUBLISH", S3Test.settings(),
                        "{\"row_group_rows\": 2000}", stream.memoryAddress())) {
            Map<String, Object> first = w.writeNext(1);
            assertEquals(1L, first.get("batches"));
            assertEquals(1000L, first.get("rows"));
            assertEquals(Boolean.FALSE, first.get("ended"));
            assertEquals(3000L, w.writeAll());
            JsonNode r = JSON.readTree(w.finish());
            assertEquals(w.finish(), w.finish(), "finish twice gives the same result");
            assertEquals(4000, r.get("rows").asLong());
            assertEquals(2, r.get("row_groups").asLong());
            assertTrue(r.get("upload").get("completed").asBoolean());
            MessageType schema = readBack("t/one.parquet", 4000);
            LogicalTypeAnnotation ts = schema.getType("ts").getLogicalTypeAnnotation();
            assertEquals(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS), ts, "INT64 micros, UTC-adjusted");
            assertEquals(LogicalTypeAnnotation.decimalType(2, 10), schema.getType("price").getLogicalTypeAnnotation());
        }
    }

    @Test
    void aDeferredFileCompletesFromItsUploadResult() throws Exception {
        String result;
        try (ArrowArrayStream stream = export(new Batches(2, 500, -1));
                NativeParquetWriter w = NativeParquetWriter.open(bucket, "t/deferred.parquet", "DEFERRED", S3Test.settings(), null,
                        stream.memoryAddress())) {
            w.writeAll();
            result = w.finish();
        }
        JsonNode r = JSON.readTree(result);
        assertFalse(r.get("upload").get("completed").asBoolean());
        assertFalse(S3Test.exists(bucket, "t/deferred.parquet"));
        S3NativeOutputStream.complete(UploadResult.fromJson(r.get("upload").toString()), S3Test.settings());
        readBack("t/deferred.parquet", 1000);
    }

    @Test
    void badInputThrowsAndNeverCrashes() throws Exception {
        assertThrows(IllegalArgumentException.class,
                () -> NativeParquetWriter.open(bucket, "t/null.parquet", "PUBLISH", S3Test.settings(), null, 0));
        ArrowArrayStream closed = export(new Batches(1, 10, -1));
        long address = closed.memoryAddress();
        closed.release();
        IllegalArgumentException released = assertThrows(IllegalArgumentException.class,
                () -> NativeParquetWriter.open(bucket, "t/released.parquet", "PUBLISH", S3Test.settings(), null, address));
        assertTrue(released.getMessage().contains("released"), released.getMessage());
        closed.close();
        try (ArrowArrayStream stream = export(new Batches(1, 10, -1))) {
            IllegalArgumentException options = assertThrows(IllegalArgumentException.class, () -> NativeParquetWriter.open(bucket,
                    "t/options.parquet", "PUBLISH", S3Test.settings(), "{\"codec\": \"SNAPPY\"}", stream.memoryAddress()));
            assertTrue(options.getMessage().contains("codec"), options.getMessage());
        }
        assertFalse(S3Test.exists(bucket, "t/null.parquet") || S3Test.exists(bucket, "t/released.parquet"));
    }

    @Test
    void aFailingStreamFailsTheFileForGoodAndAbortsTheUpload() throws Exception {
        try (ArrowArrayStream stream = export(new Batches(10, 200_000, 3));
                NativeParquetWriter w = NativeParquetWriter.open(bucket, "t/failing.parquet", "PUBLISH", S3Test.settings(),
                        "{\"compression\": \"NONE\", \"row_group_bytes\": 2097152}", stream.memoryAddress())) {
            IOException first = assertThrows(IOException.class, w::writeAll);
            assertTrue(first.getMessage().contains("the producer broke at batch 3"), first.getMessage());
            assertTrue(first.getMessage().contains("after 600000 rows"), first.getMessage());
            IOException again = assertThrows(IOException.class, () -> w.writeNext(1));
            assertEquals(first.getMessage(), again.getMessage(), "sticky");
            assertThrows(IOException.class, w::finish);
            w.abort();
        }
        assertFalse(S3Test.exists(bucket, "t/failing.parquet"));
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.key().equals("t/failing.parquet")), "the upload is aborted");
    }

    @Test
    void abortDiscardsTheUploadAndCloseTwiceIsHarmless() throws Exception {
        ArrowArrayStream stream = export(new Batches(6, 200_000, -1));
        NativeParquetWriter w = NativeParquetWriter.open(bucket, "t/aborted.parquet", "PUBLISH", S3Test.settings(),
                "{\"compression\": \"NONE\", \"row_group_bytes\": 2097152}", stream.memoryAddress());
        w.writeNext(3);
        w.abort();
        assertThrows(IOException.class, () -> w.writeNext(1));
        assertThrows(IOException.class, w::finish);
        w.close();
        w.close();
        assertThrows(IOException.class, () -> w.writeNext(1), "closed");
        stream.close();
        assertFalse(S3Test.exists(bucket, "t/aborted.parquet"));
        assertTrue(S3Test.uploads(bucket).stream().noneMatch(u -> u.key().equals("t/aborted.parquet")));
    }
}
