package io.s3native.hadoopsuite;

import io.s3native.hadoop.NativeS3AFileSystem;
import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.conf.Configuration;

/**
 * NativeS3AFileSystem as the suite's native run configures it ({@code fs.s3a.impl}), unchanged
 * but for one thing: each instance is remembered once initialized, so {@link ParityProbe} can
 * prove after each test class that the filesystem under test was NativeS3AFileSystem and that
 * it wrote natively ({@link NativeS3AFileSystem#getNativeCreateCount()}). Hadoop's tests close
 * their filesystems in teardown (which drops them from FileSystem's cache), hence the list.
 */
public class ObservedNativeS3AFileSystem extends NativeS3AFileSystem {
    static final List<NativeS3AFileSystem> INSTANCES = new CopyOnWriteArrayList<>();

    @Override
    public void initialize(URI name, Configuration conf) throws IOException {
        super.initialize(name, conf);
        INSTANCES.add(this);
    }
}
