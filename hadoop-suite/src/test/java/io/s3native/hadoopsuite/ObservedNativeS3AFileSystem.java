package io.s3native.hadoopsuite;

import io.s3native.hadoop.NativeS3AFileSystem;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * NativeS3AFileSystem as the suite's native run configures it ({@code fs.s3a.impl}), unchanged
 * but for what proves the run native: each instance is remembered once initialized, so
 * {@link ParityProbe} can say after each test class that the filesystem under test was
 * NativeS3AFileSystem and that it wrote natively ({@link NativeS3AFileSystem#getNativeCreateCount()}).
 * Hadoop's tests close their filesystems in teardown (which drops them from FileSystem's
 * cache), hence the list. In other JVMs (MiniYARN's application masters and tasks, which read
 * the same auth-keys.xml) each create appends the instance's new counts to
 * {@code <s3native.suite.proof.dir>/remote-creates.log}, which ParityProbe adds to the class's.
 * The overrides only call the superclass and count.
 */
public class ObservedNativeS3AFileSystem extends NativeS3AFileSystem {
    static final List<NativeS3AFileSystem> INSTANCES = new CopyOnWriteArrayList<>();
    static final String PROOF_DIR = "s3native.suite.proof.dir";
    static final String REMOTE_LOG = "remote-creates.log";

    private String proofDir;
    private long loggedNative;
    private long loggedStock;

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        INSTANCES.add(this);
        // The test JVM has the system property (ParityProbe reads INSTANCES); other JVMs the key.
        proofDir = System.getProperty(PROOF_DIR) == null ? conf.getTrimmed(PROOF_DIR) : null;
    }

    @Override
    public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite, int bufferSize,
            short replication, long blockSize, Progressable progress) throws IOException {
        FSDataOutputStream out = super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
        logRemote();
        return out;
    }

    @Override
    public FSDataOutputStream createNonRecursive(Path f, FsPermission permission, EnumSet<CreateFlag> flags,
            int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
        FSDataOutputStream out = super.createNonRecursive(f, permission, flags, bufferSize, replication, blockSize, progress);
        logRemote();
        return out;
    }

    /**
     * Outside the test JVM, append the creates since the last line ({@code <jvm> <native> <stock>})
     * to the proof directory's log, as they happen: YARN may stop a container's JVM before its
     * filesystems close.
     */
    private synchronized void logRemote() throws IOException {
        if (proofDir == null || proofDir.isEmpty()) {
            return;
        }
        long n = getNativeCreateCount();
        long s = getStockCreateCount();
        if (n == loggedNative && s == loggedStock) {
            return;
        }
        String line = ManagementFactory.getRuntimeMXBean().getName() + " " + (n - loggedNative) + " " + (s - loggedStock) + "\n";
        loggedNative = n;
        loggedStock = s;
        java.nio.file.Path log = Paths.get(proofDir, REMOTE_LOG);
        Files.createDirectories(log.getParent());
        Files.write(log, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
