package io.s3native.sdkv1;

import java.net.URI;

import org.apache.hadoop.conf.Configuration;

import com.amazonaws.auth.AWSCredentials;
import com.amazonaws.auth.AWSCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;

import io.s3native.hadoop.RotatingCredentialsProvider;

/**
 * The SDK v1 twin of {@link RotatingCredentialsProvider} for Hadoop 3.3 (compiled in the
 * hadoop-3.3 profile only, whose S3A takes SDK v1 providers): the same keys, rotating on the
 * same clock.
 */
public class RotatingCredentialsProviderV1 implements AWSCredentialsProvider {
    public RotatingCredentialsProviderV1(URI uri, Configuration conf) {
    }

    @Override
    public AWSCredentials getCredentials() {
        long g = RotatingCredentialsProvider.generation();
        return new BasicAWSCredentials(RotatingCredentialsProvider.KEY_PREFIX + g, "rotating-secret-never-shown-" + g);
    }

    @Override
    public void refresh() {
    }
}
