package io.s3native.hadoopsuite;

import io.s3native.hadoop.NativeS3AFileSystem;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;

/**
 * NativeS3AFileSystem as the suite's native run configures it ({@code fs.s3a.impl}), unchanged
 * but for what proves the run native: each instance is remembered once initialized, so
 * {@link ParityProbe} can say after each test class that the filesystem under test was
 * NativeS3AFileSystem and that it wrote natively ({@link NativeS3AFileSystem#getNativeCreateCount()}).
 * Hadoop's tests close their filesystems in teardown (which drops them from FileSystem's
 * cache), hence the list. In other JVMs (MiniYARN's application masters and tasks, which read
 * the same auth-keys.xml) close appends the instance's counts to
 * {@code <s3native.suite.proof.dir>/remote-creates.log}, which ParityProbe adds to the class's.
 */
public class ObservedNativeS3AFileSystem extends NativeS3AFileSystem {
    static final List<NativeS3AFileSystem> INSTANCES = new CopyOnWriteArrayList<>();
    static final String PROOF_DIR = "s3native.suite.proof.dir";
    static final String REMOTE_LOG = "remote-creates.log";

    private String proofDir;

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        INSTANCES.add(this);
        // The test JVM has the system property (ParityProbe reads INSTANCES); other JVMs the key.
        proofDir = System.getProperty(PROOF_DIR) == null ? conf.getTrimmed(PROOF_DIR) : null;
    }

    @Override
    public void close() throws IOException {
        try {
            super.close();
        } finally {
            String dir = proofDir;
            proofDir = null;
            if (dir != null && !dir.isEmpty()) {
                Path log = Paths.get(dir, REMOTE_LOG);
                Files.createDirectories(log.getParent());
                String line = ManagementFactory.getRuntimeMXBean().getName() + " " + getNativeCreateCount()
                        + " " + getStockCreateCount() + "\n";
                Files.write(log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            }
        }
    }
}
