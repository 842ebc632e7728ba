package io.s3native.hadoop;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider;

/**
 * A credential provider S3A knows nothing special about (a subclass of its simple provider,
 * so it works with the AWS SDK of every Hadoop line): a site's own class. Writes of a
 * filesystem configured with it stay native, signed with the keys it hands out.
 */
public class TestCredentialsProvider extends SimpleAWSCredentialsProvider {
    static final AtomicInteger CREATED = new AtomicInteger();

    public TestCredentialsProvider(URI uri, Configuration conf) throws IOException {
        super(uri, conf);
        CREATED.incrementAndGet();
    }
}
