package io.s3native.druid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.datasketches.memory.Memory;
import org.apache.druid.data.input.MapBasedRow;
import org.apache.druid.data.input.Row;
import org.apache.druid.frame.Frame;
import org.apache.druid.frame.allocation.ArenaMemoryAllocatorFactory;
import org.apache.druid.frame.channel.ReadableFrameChannel;
import org.apache.druid.frame.channel.ReadableInputStreamFrameChannel;
import org.apache.druid.frame.channel.WritableFrameFileChannel;
import org.apache.druid.frame.file.FrameFileFooter;
import org.apache.druid.frame.file.FrameFileWriter;
import org.apache.druid.frame.write.FrameWriter;
import org.apache.druid.frame.write.FrameWriterFactory;
import org.apache.druid.frame.write.FrameWriters;
import org.apache.druid.frame.channel.ByteTracker;
import org.apache.druid.frame.channel.FrameWithPartition;
import org.apache.druid.jackson.DefaultObjectMapper;
import org.apache.druid.query.rowsandcols.semantic.WireTransferable;
import org.apache.druid.query.rowsandcols.serde.WireTransferableContext;
import org.apache.druid.segment.ColumnSelectorFactory;
import org.apache.druid.segment.RowAdapters;
import org.apache.druid.segment.RowBasedColumnSelectorFactory;
import org.apache.druid.segment.column.ColumnType;
import org.apache.druid.segment.column.RowSignature;
import org.apache.druid.storage.StorageConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Frame files as MSQ writes them to durable storage ({@code FrameFileWriter} over
 * {@code WritableFrameFileChannel} over {@code Channels.newChannel(connector.write(path))}),
 * read back through Druid's frame readers over {@code read} (the whole file) and over
 * {@code readRange} (the partitioned pattern: trailer, then footer, then one partition's
 * frames), byte-identical to the same frames written to memory.
 */
class FrameFileTest {
    private static final ExecutorService EXEC = Executors.newFixedThreadPool(2);
    private static final RowSignature SIGNATURE =
            RowSignature.builder().add("n", ColumnType.LONG).add("s", ColumnType.STRING).add("d", ColumnType.DOUBLE).build();

    /** Druid's default: frames written as frames (MARKER_FRAME), as MSQ writes them. */
    private static final WireTransferableContext WIRE = wire();

    @TempDir
    File tmp;

    private static WireTransferableContext wire() {
        DefaultObjectMapper mapper = new DefaultObjectMapper();
        return new WireTransferableContext(mapper, new WireTransferable.ConcreteDeserializer(mapper, Map.of()),
                WireTransferableContext.DEFAULT_LEGACY_FRAME_SERIALIZATION);
    }

    @AfterAll
    static void stop() {
        EXEC.shutdownNow();
    }

    /** One frame of {@code rows} rows starting at row {@code first}. */
    static Frame frame(long first, int rows) {
        FrameWriterFactory factory =
                FrameWriters.makeColumnBasedFrameWriterFactory(new ArenaMemoryAllocatorFactory(8 << 20), SIGNATURE, Collections.emptyList());
        Row[] current = new Row[1];
        ColumnSelectorFactory selectors =
                RowBasedColumnSelectorFactory.create(RowAdapters.standardRow(), () -> current[0], SIGNATURE, false);
        try (FrameWriter writer = factory.newFrameWriter(selectors)) {
            for (long i = first; i < first + rows; i++) {
                current[0] = new MapBasedRow(0L, Map.of("n", i, "s", "row-" + i + "-" + Long.toHexString(i * 2654435761L), "d", i / 3.0));
                if (!writer.addSelection()) {
                    throw new IllegalStateException("frame full at row " + i);
                }
            }
            return Frame.wrap(writer.toByteArray());
        }
    }

    /** Frames of {@code partitions} partitions, {@code perPartition} frames each. */
    static List<FrameWithPartition> frames(int partitions, int perPartition, int rows) {
        List<FrameWithPartition> out = new ArrayList<>();
        long row = 0;
        for (int p = 0; p < partitions; p++) {
            for (int f = 0; f < perPartition; f++) {
                out.add(new FrameWithPartition(frame(row, rows), p));
                row += rows;
            }
        }
        return out;
    }

    /** The frame file of {@code frames} written to memory by the same writer. */
    static byte[] inMemory(List<FrameWithPartition> frames, boolean partitioned) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (WritableFrameFileChannel ch = new WritableFrameFileChannel(FrameFileWriter.open(Channels.newChannel(bytes), null, ByteTracker.unboundedTracker(), WIRE))) {
            for (FrameWithPartition f : frames) {
                ch.write(f.frame().asRAC(), partitioned ? f.partition() : FrameWithPartition.NO_PARTITION);
            }
        }
        return bytes.toByteArray();
    }

    static void writeThrough(StorageConnector c, String path, List<FrameWithPartition> frames, boolean partitioned) throws IOException {
        try (WritableFrameFileChannel ch = new WritableFrameFileChannel(FrameFileWriter.open(Channels.newChannel(c.write(path)), null, ByteTracker.unboundedTracker(), WIRE))) {
            for (FrameWithPartition f : frames) {
                ch.write(f.frame().asRAC(), partitioned ? f.partition() : FrameWithPartition.NO_PARTITION);
            }
        }
    }

    /** Every frame a channel over {@code in} delivers, as bytes. */
    static List<byte[]> readFrames(InputStream in, String id, boolean framesOnly) throws IOException {
        List<byte[]> out = new ArrayList<>();
        ReadableFrameChannel ch = ReadableInputStreamFrameChannel.open(in, id, EXEC, framesOnly, WIRE);
        try {
            while (!ch.isFinished()) {
                try {
                    ch.readabilityFuture().get();
                } catch (Exception e) {
                    throw new IOException(e);
                }
                if (ch.canRead()) {
                    out.add(bytesOf(ch.readFrame()));
                }
            }
        } finally {
            ch.close();
        }
        return out;
    }

    static byte[] bytesOf(Frame f) {
        byte[] b = new byte[(int) f.numBytes()];
        f.readableMemory().getByteArray(0, b, 0, b.length);
        return b;
    }

    private StorageConnector connector(String prefix) {
        String bucket = LocalS3.newBucket("frames");
        return DruidHarness.connector(DruidHarness.injector(DruidHarness.properties(bucket, prefix, LocalS3.endpoint()),
                new DruidHarness.CollectingEmitter()), tmp);
    }

    private static byte[] readAll(InputStream in) throws IOException {
        try (InputStream i = in) {
            return i.readAllBytes();
        }
    }

    @Test
    void aFrameFileWrittenThroughTheConnectorIsByteIdenticalAndReadsBackFrameByFrame() throws IOException {
        StorageConnector c = connector("controller_q1/stage_0/worker_0/taskId_t0");
        // Past the 5 MiB chunkSize, so the upload is multipart.
        List<FrameWithPartition> frames = frames(1, 16, 20_000);
        byte[] expected = inMemory(frames, false);
        assertTrue(expected.length > 6 << 20, "the file is " + expected.length + " B");
        writeThrough(c, "part_0", frames, false);
        assertArrayEquals(expected, readAll(c.read("part_0")), "byte-identical");

        List<byte[]> back = readFrames(c.read("part_0"), "part_0", false);
        assertEquals(frames.size(), back.size());
        for (int i = 0; i < back.size(); i++) {
            assertArrayEquals(bytesOf(frames.get(i).frame()), back.get(i), "frame " + i);
        }
        // A small file (one PUT) too.
        List<FrameWithPartition> one = frames(1, 1, 10);
        writeThrough(c, "part_1", one, false);
        assertArrayEquals(inMemory(one, false), readAll(c.read("part_1")));
    }

    @Test
    void aPartitionedFileIsReadByRangesAsTheDurableStorageReaderReadsIt() throws IOException {
        StorageConnector c = connector("controller_q2/stage_1/worker_3/taskId_t1");
        int partitions = 4;
        List<FrameWithPartition> frames = frames(partitions, 5, 15_000);
        byte[] expected = inMemory(frames, true);
        writeThrough(c, "part_all", frames, true);
        long length = expected.length;
        assertArrayEquals(expected, readAll(c.read("part_all")));

        // The trailer, then the footer, by range.
        byte[] trailer = readAll(c.readRange("part_all", length - FrameFileWriter.TRAILER_LENGTH, FrameFileWriter.TRAILER_LENGTH));
        int footerLength = Memory.wrap(trailer, ByteOrder.LITTLE_ENDIAN).getInt(Integer.BYTES * 2L);
        byte[] footerBytes = readAll(c.readRange("part_all", length - footerLength, footerLength));
        FrameFileFooter footer = new FrameFileFooter(Memory.wrap(footerBytes, ByteOrder.LITTLE_ENDIAN), length);
        assertEquals(frames.size(), footer.getNumFrames());
        assertEquals(partitions, footer.getNumPartitions());

        // Each partition's frames by range, through Druid's frames-only reader.
        for (int p = 0; p < partitions; p++) {
            int start = footer.getPartitionStartFrame(p);
            int end = footer.getPartitionStartFrame(p + 1);
            long from = start == 0 ? FrameFileWriter.MAGIC.length : footer.getFrameEndPosition(start - 1);
            long to = footer.getFrameEndPosition(end - 1);
            List<byte[]> back = readFrames(c.readRange("part_all", from, to - from), "part_all/" + p, true);
            assertEquals(end - start, back.size(), "partition " + p);
            for (int i = start; i < end; i++) {
                assertArrayEquals(bytesOf(frames.get(i).frame()), back.get(i - start), "partition " + p + " frame " + i);
            }
        }
    }
}
