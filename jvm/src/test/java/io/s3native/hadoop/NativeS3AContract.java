package io.s3native.hadoop;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractBondedFSContract;

/**
 * Hadoop's filesystem contract for s3a:// on the local server, bound through
 * {@code fs.contract.test.fs.s3a}; the options (what S3A promises) are in
 * {@code contract/s3native-s3a.xml}. Whether the filesystem is stock S3A or
 * {@link NativeS3AFileSystem} is up to {@code fs.s3a.impl} in the configuration.
 */
public class NativeS3AContract extends AbstractBondedFSContract {
    static final String CONTRACT_XML = "contract/s3native-s3a.xml";

    public NativeS3AContract(Configuration conf) {
        super(conf);
        addConfResource(CONTRACT_XML);
    }

    @Override
    public String getScheme() {
        return "s3a";
    }

    /** A configuration for the contract tests: the server, a fresh bucket, and the filesystem class. */
    static Configuration configuration(boolean nativeFs, String what) {
        Configuration conf = HadoopS3.conf(nativeFs);
        if (nativeFs) {
            // Every create() the tests make must go native: a fallback would raise.
            conf.set(NativeS3AFileSystem.NATIVE_FALLBACK, "fail");
        }
        try {
            conf.set("fs.contract.test.fs.s3a", "s3a://" + HadoopS3.newBucket(what) + "/");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return conf;
    }
}
