package io.s3native.druid;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Key;
import com.google.inject.Module;
import com.google.inject.name.Names;
import org.apache.druid.guice.DruidSecondaryModule;
import org.apache.druid.guice.JsonConfigProvider;
import org.apache.druid.guice.StartupInjectorBuilder;
import org.apache.druid.guice.annotations.Json;
import org.apache.druid.guice.annotations.Smile;
import org.apache.druid.initialization.DruidModule;
import org.apache.druid.java.util.emitter.core.Emitter;
import org.apache.druid.java.util.emitter.core.Event;
import org.apache.druid.java.util.emitter.service.ServiceEmitter;
import org.apache.druid.java.util.emitter.service.ServiceMetricEvent;
import org.apache.druid.storage.StorageConnector;
import org.apache.druid.storage.StorageConnectorProvider;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Druid's own wiring, as a Druid service builds it: Druid's startup injector over runtime
 * properties, then the core injector: Druid's DruidSecondaryModule (Jackson injection from
 * Guice, config binding), the extension's DruidModule with its Jackson subtypes registered on
 * Druid's mappers, and the storage connector provider bound at
 * {@code druid.msq.intermediate.storage} as MSQ's durable-storage module binds it (that
 * module itself is not served here: a named key stands in for its {@code @MultiStageQuery}).
 * druid-server's CoreInjectorBuilder, which does the same, cannot be resolved from Maven
 * Central (a Jackson JAX-RS artifact it names is not served), so {@link #coreInjector}
 * repeats its steps with druid-processing's classes: the modules' members injected from the
 * startup injector, their Jackson modules registered on its JSON and Smile mappers, one
 * injector of DruidSecondaryModule and the modules.
 */
final class DruidHarness {
    static final String PREFIX = "druid.msq.intermediate.storage";
    static final Key<StorageConnectorProvider> DURABLE = Key.get(StorageConnectorProvider.class, Names.named("durable"));

    private DruidHarness() {
    }

    /** Runtime properties of a service using the connector on {@code s3://bucket/prefix} through {@code endpoint}. */
    static Properties properties(String bucket, String prefix, String endpoint) {
        Properties p = new Properties();
        p.setProperty(PREFIX + ".enable", "true");
        p.setProperty(PREFIX + ".type", "s3native");
        p.setProperty(PREFIX + ".bucket", bucket);
        p.setProperty(PREFIX + ".prefix", prefix);
        p.setProperty(PREFIX + ".tempDir", "/tmp/unused-by-s3native");
        p.setProperty(PREFIX + ".chunkSize", "5MiB");
        p.setProperty(PREFIX + ".maxRetry", "3");
        p.setProperty("druid.s3.endpoint.url", endpoint);
        p.setProperty("druid.s3.endpoint.signingRegion", LocalS3.region());
        p.setProperty("druid.s3.enablePathStyleAccess", "true");
        p.setProperty("druid.s3.protocol", "http");
        p.setProperty("druid.s3.accessKey", LocalS3.accessKey());
        p.setProperty("druid.s3.secretKey", LocalS3.secretKey());
        p.setProperty("druid.s3native.memoryBudget", "64MiB");
        return p;
    }

    /** The emitter's events, kept. */
    static final class CollectingEmitter implements Emitter {
        final List<Event> events = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void start() {
        }

        @Override
        public void emit(Event event) {
            events.add(event);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        List<ServiceMetricEvent> metrics(String name) {
            synchronized (events) {
                return events.stream().filter(e -> e instanceof ServiceMetricEvent).map(e -> (ServiceMetricEvent) e)
                        .filter(e -> e.getMetric().equals(name)).collect(Collectors.toList());
            }
        }
    }

    /** The module MSQ's durable storage module stands for, and the service's emitter. */
    static Module serviceModule(Emitter emitter) {
        return binder -> {
            binder.bind(ServiceEmitter.class).toInstance(new ServiceEmitter("test", "localhost", emitter));
            JsonConfigProvider.bind(binder, PREFIX, StorageConnectorProvider.class, Names.named("durable"));
        };
    }

    /** The core injector over {@code startup} with {@code druidModules} and the service's module. */
    static Injector coreInjector(Injector startup, Iterable<? extends DruidModule> druidModules, Emitter emitter) {
        ObjectMapper json = startup.getInstance(Key.get(ObjectMapper.class, Json.class));
        ObjectMapper smile = startup.getInstance(Key.get(ObjectMapper.class, Smile.class));
        List<Module> modules = new ArrayList<>();
        modules.add(startup.getInstance(DruidSecondaryModule.class));
        for (DruidModule m : druidModules) {
            startup.injectMembers(m);
            for (com.fasterxml.jackson.databind.Module jackson : m.getJacksonModules()) {
                json.registerModule(jackson);
                smile.registerModule(jackson);
            }
            modules.add(m);
        }
        modules.add(serviceModule(emitter));
        return Guice.createInjector(modules);
    }

    /** The injector of a service with {@code properties} and the extension's module. */
    static Injector injector(Properties properties, Emitter emitter) {
        Injector startup = new StartupInjectorBuilder().forTests().withProperties(properties).build();
        return coreInjector(startup, List.of(new S3NativeStorageConnectorModule()), emitter);
    }

    static StorageConnector connector(Injector injector, File tempDir) {
        return injector.getInstance(DURABLE).createStorageConnector(tempDir);
    }
}
