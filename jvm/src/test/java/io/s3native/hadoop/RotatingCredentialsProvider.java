package io.s3native.hadoop;

import java.net.URI;

import org.apache.hadoop.conf.Configuration;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

/**
 * A site's own credential provider class for the SDK v2 lines (Hadoop 3.4+), named in
 * {@code fs.s3a.aws.credentials.provider}: its keys rotate every {@link #PERIOD_MS} ms
 * (access key id {@code AKIDROTATING<generation>}) and carry no expiry, as many site
 * providers do. io.s3native.sdkv1.RotatingCredentialsProviderV1 is its SDK v1 twin (3.3).
 */
public class RotatingCredentialsProvider implements AwsCredentialsProvider {
    /** How often the keys change. */
    public static final long PERIOD_MS = 1500;
    public static final String KEY_PREFIX = "AKIDROTATING";
    private static final long START = System.nanoTime();

    public RotatingCredentialsProvider(URI uri, Configuration conf) {
    }

    /** The generation of the keys handed out now: 0, 1, 2, ... every {@link #PERIOD_MS} ms. */
    public static long generation() {
        return (System.nanoTime() - START) / 1_000_000 / PERIOD_MS;
    }

    @Override
    public AwsCredentials resolveCredentials() {
        long g = generation();
        return AwsBasicCredentials.create(KEY_PREFIX + g, "rotating-secret-never-shown-" + g);
    }
}
