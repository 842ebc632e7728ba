package io.s3native.bench.druid;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.Module;
import com.google.inject.name.Names;
import io.s3native.S3NativeOutputStream;
import io.s3native.druid.S3NativeStorageConnectorModule;
import org.apache.druid.data.input.MapBasedRow;
import org.apache.druid.data.input.Row;
import org.apache.druid.frame.Frame;
import org.apache.druid.frame.allocation.ArenaMemoryAllocatorFactory;
import org.apache.druid.frame.channel.ByteTracker;
import org.apache.druid.frame.channel.FrameWithPartition;
import org.apache.druid.frame.channel.WritableFrameFileChannel;
import org.apache.druid.frame.file.FrameFileWriter;
import org.apache.druid.frame.write.FrameWriter;
import org.apache.druid.frame.write.FrameWriterFactory;
import org.apache.druid.frame.write.FrameWriters;
import org.apache.druid.guice.DruidSecondaryModule;
import org.apache.druid.guice.JsonConfigProvider;
import org.apache.druid.guice.StartupInjectorBuilder;
import org.apache.druid.guice.annotations.Json;
import org.apache.druid.guice.annotations.Smile;
import org.apache.druid.initialization.DruidModule;
import org.apache.druid.jackson.DefaultObjectMapper;
import org.apache.druid.java.util.emitter.core.NoopEmitter;
import org.apache.druid.java.util.emitter.service.ServiceEmitter;
import org.apache.druid.query.rowsandcols.semantic.WireTransferable;
import org.apache.druid.query.rowsandcols.serde.WireTransferableContext;
import org.apache.druid.segment.ColumnSelectorFactory;
import org.apache.druid.segment.RowAdapters;
import org.apache.druid.segment.RowBasedColumnSelectorFactory;
import org.apache.druid.segment.column.RowSignature;
import org.apache.druid.storage.StorageConnector;
import org.apache.druid.storage.StorageConnectorProvider;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Druid 37.0.0 with druid-s3native: the connector built from runtime properties through
 * Druid's own Guice and Jackson wiring (the startup injector, DruidSecondaryModule, the
 * extension's DruidModule, the provider bound at druid.msq.intermediate.storage as MSQ's
 * durable-storage module binds it), frames written by Druid 37's FrameFileWriter.
 */
final class Line {
    static final String NAME = "druid-s3native (Druid 37.0.0)";
    static final String PREFIX = "druid.msq.intermediate.storage";
    static final RowSignature SIGNATURE = Rows.signature();
    static final WireTransferableContext WIRE = wire();

    private Line() {
    }

    private static WireTransferableContext wire() {
        DefaultObjectMapper mapper = new DefaultObjectMapper();
        return new WireTransferableContext(mapper, new WireTransferable.ConcreteDeserializer(mapper, Map.of()),
                WireTransferableContext.DEFAULT_LEGACY_FRAME_SERIALIZATION);
    }

    static StorageConnector connector(Map<String, String> a, File tempDir) {
        Properties p = new Properties();
        p.setProperty(PREFIX + ".enable", "true");
        p.setProperty(PREFIX + ".type", "s3native");
        p.setProperty(PREFIX + ".bucket", a.get("bucket"));
        p.setProperty(PREFIX + ".prefix", a.get("prefix"));
        p.setProperty(PREFIX + ".tempDir", tempDir.getPath());
        p.setProperty(PREFIX + ".chunkSize", a.getOrDefault("chunk", "5MiB"));
        p.setProperty(PREFIX + ".maxRetry", a.getOrDefault("retries", "10"));
        String endpoint = a.get("endpoint");
        p.setProperty("druid.s3.endpoint.url", endpoint);
        p.setProperty("druid.s3.endpoint.signingRegion", a.getOrDefault("region", "us-east-1"));
        p.setProperty("druid.s3.enablePathStyleAccess", "true");
        p.setProperty("druid.s3.protocol", endpoint.startsWith("https:") ? "https" : "http");
        p.setProperty("druid.s3.accessKey", a.get("access_key"));
        p.setProperty("druid.s3.secretKey", a.get("secret_key"));
        if (a.containsKey("budget")) {
            p.setProperty("druid.s3native.memoryBudget", a.get("budget"));
        }
        if (a.containsKey("parts_in_flight")) {
            p.setProperty("druid.s3native.partsInFlight", a.get("parts_in_flight"));
        }
        Key<StorageConnectorProvider> durable = Key.get(StorageConnectorProvider.class, Names.named("durable"));
        Injector startup = new StartupInjectorBuilder().forTests().withProperties(p).build();
        ObjectMapper json = startup.getInstance(Key.get(ObjectMapper.class, Json.class));
        ObjectMapper smile = startup.getInstance(Key.get(ObjectMapper.class, Smile.class));
        List<Module> modules = new ArrayList<>();
        modules.add(startup.getInstance(DruidSecondaryModule.class));
        DruidModule m = new S3NativeStorageConnectorModule();
        startup.injectMembers(m);
        for (com.fasterxml.jackson.databind.Module jackson : m.getJacksonModules()) {
            json.registerModule(jackson);
            smile.registerModule(jackson);
        }
        modules.add(m);
        modules.add(binder -> {
            binder.bind(ServiceEmitter.class).toInstance(new ServiceEmitter("bench", "localhost", new NoopEmitter()));
            JsonConfigProvider.bind(binder, PREFIX, StorageConnectorProvider.class, Names.named("durable"));
        });
        return Guice.createInjector(modules).getInstance(durable).createStorageConnector(tempDir);
    }

    /** Frames of at most {@code frameBytes} holding rows {@code first} .. {@code first + rows - 1}. */
    static List<Frame> frames(long first, int rows, int frameBytes) {
        FrameWriterFactory factory = FrameWriters.makeColumnBasedFrameWriterFactory(
                new ArenaMemoryAllocatorFactory(frameBytes), SIGNATURE, Collections.emptyList());
        Row[] current = new Row[1];
        ColumnSelectorFactory selectors =
                RowBasedColumnSelectorFactory.create(RowAdapters.standardRow(), () -> current[0], SIGNATURE, false);
        List<Frame> out = new ArrayList<>();
        long i = first;
        while (i < first + rows) {
            try (FrameWriter writer = factory.newFrameWriter(selectors)) {
                int n = 0;
                for (; i < first + rows; i++, n++) {
                    current[0] = new MapBasedRow(0L, Rows.row(i));
                    if (!writer.addSelection()) {
                        break;
                    }
                }
                if (n == 0) {
                    throw new IllegalStateException("row " + i + " does not fit a frame of " + frameBytes + " bytes");
                }
                out.add(Frame.wrap(writer.toByteArray()));
            }
        }
        return out;
    }

    /** A frame file of {@code frames} onto {@code out}, as MSQ's durable-storage channels write it; closes it. */
    static void writeFrameFile(OutputStream out, List<Frame> frames) throws IOException {
        try (WritableFrameFileChannel ch = new WritableFrameFileChannel(
                FrameFileWriter.open(Channels.newChannel(out), null, ByteTracker.unboundedTracker(), WIRE))) {
            for (Frame f : frames) {
                ch.write(f.asRAC(), FrameWithPartition.NO_PARTITION);
            }
        }
    }

    /** s3native's process-wide request counts by kind. */
    static Map<String, Long> requests() {
        Map<String, Long> out = new TreeMap<>();
        S3NativeOutputStream.globalStatistics().asMap().forEach((k, v) -> {
            if (k.startsWith("requests.")) {
                out.put("s3native." + k.substring(9), v);
            }
        });
        return out;
    }

    static long bufferPeakBytes() {
        return S3NativeOutputStream.globalStatistics().getBufferPeakBytes();
    }
}
