package io.s3native.druid;

import com.google.inject.Injector;
import org.apache.druid.guice.ExtensionsLoader;
import org.apache.druid.guice.StartupInjectorBuilder;
import org.apache.druid.initialization.DruidModule;
import org.apache.druid.storage.StorageConnector;

import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Collection;
import java.util.Properties;

/**
 * A Druid service's start as far as the extension goes, in a JVM whose class path has Druid
 * but neither s3native nor the extension: Druid's ExtensionsLoader loads the extension from
 * {@code druid.extensions.directory}/druid-s3native in the class loader it builds for it, the
 * core injector takes its DruidModule, and a connector from runtime properties writes and
 * reads one object. Prints {@code OK <loader class>} on success. Args: extensions directory,
 * bucket, endpoint.
 */
public final class ExtensionDirectoryMain {
    private ExtensionDirectoryMain() {
    }

    public static void main(String[] args) throws Exception {
        try {
            Class.forName("io.s3native.S3NativeOutputStream");
            throw new IllegalStateException("s3native is on the application class path: the test would prove nothing");
        } catch (ClassNotFoundException expected) {
            // As it must be: only the extension's loader has it.
        }
        Properties p = DruidHarness.properties(args[1], "ext", args[2]);
        p.setProperty("druid.extensions.directory", args[0]);
        p.setProperty("druid.extensions.loadList", "[\"druid-s3native\"]");
        p.setProperty("druid.extensions.searchCurrentClassloader", "false");
        Injector startup = new StartupInjectorBuilder().withExtensions().withProperties(p).build();
        Collection<DruidModule> modules = ExtensionsLoader.instance(startup).getFromExtensions(DruidModule.class);
        DruidModule ours = modules.stream().filter(m -> m.getClass().getName().equals("io.s3native.druid.S3NativeStorageConnectorModule"))
                .findFirst().orElseThrow(() -> new IllegalStateException("the extension's module was not loaded: " + modules));
        ClassLoader loader = ours.getClass().getClassLoader();
        if (loader == ExtensionDirectoryMain.class.getClassLoader()) {
            throw new IllegalStateException("the module came from the application class loader");
        }
        Injector injector = DruidHarness.coreInjector(startup, modules, new DruidHarness.CollectingEmitter());
        StorageConnector c = injector.getInstance(DruidHarness.DURABLE).createStorageConnector(new File("/tmp"));
        byte[] content = new byte[6 << 20];
        new java.util.Random(5).nextBytes(content);
        try (OutputStream out = c.write("from-extension-dir")) {
            out.write(content);
        }
        try (InputStream in = c.read("from-extension-dir")) {
            if (!Arrays.equals(content, in.readAllBytes())) {
                throw new IllegalStateException("read back different bytes");
            }
        }
        System.out.println("OK " + loader.getClass().getName() + " " + c.getClass().getClassLoader().getClass().getName());
    }
}
