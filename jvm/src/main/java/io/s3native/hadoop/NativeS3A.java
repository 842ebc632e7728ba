package io.s3native.hadoop;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;

/**
 * The FileContext binding: {@code fs.AbstractFileSystem.s3a.impl=io.s3native.hadoop.NativeS3A}
 * (S3A's own {@code org.apache.hadoop.fs.s3a.S3A} always wraps a stock S3AFileSystem).
 */
public class NativeS3A extends DelegateToFileSystem {
    public NativeS3A(URI theUri, Configuration conf) throws IOException, URISyntaxException {
        super(theUri, new NativeS3AFileSystem(), conf, "s3a", false);
    }

    @Override
    public int getUriDefaultPort() {
        return -1; // as S3A: no default port
    }

    @Override
    public String toString() {
        return "NativeS3A{" + fsImpl + "}";
    }
}
