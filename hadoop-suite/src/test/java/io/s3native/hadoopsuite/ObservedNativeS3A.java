package io.s3native.hadoopsuite;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;

/** The AbstractFileSystem (FileContext) binding of {@link ObservedNativeS3AFileSystem}, as io.s3native.hadoop.NativeS3A. */
public class ObservedNativeS3A extends DelegateToFileSystem {
    public ObservedNativeS3A(URI uri, Configuration conf) throws IOException, URISyntaxException {
        super(uri, new ObservedNativeS3AFileSystem(), conf, "s3a", false);
    }

    @Override
    public int getUriDefaultPort() {
        return -1;
    }
}
