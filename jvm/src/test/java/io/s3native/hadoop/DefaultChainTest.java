package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * S3A's default credential chain (no keys, no provider set) ends at the instance profile:
 * in a JVM whose environment has no AWS keys and whose instance metadata endpoint is the
 * local emulator (scripts/s3-server.sh starts it: S3NATIVE_TEST_IMDS_ENDPOINT), files are
 * written natively ({@code fs.s3a.native.fallback=fail}) and signed with the role's keys.
 */
class DefaultChainTest {
    private static String required(String name) {
        return HadoopChild.requiredEnv(name, "make target/tools/bin/ec2-metadata-mock");
    }

    @Test
    void theDefaultChainEndsAtTheInstanceProfileAndWritesNatively() throws Exception {
        String imds = required("S3NATIVE_TEST_IMDS_ENDPOINT");
        assertWrittenWith(required("S3NATIVE_TEST_IMDS_ACCESS_KEY"), imds, Map.of(), "imds-secret-key", "imds-session-token");
    }

    /** ECS and EKS Pod Identity: S3A's instance provider asks the container endpoint before IMDS. */
    @Test
    void containerCredentialsComeBeforeTheInstanceProfile() throws Exception {
        String imds = required("S3NATIVE_TEST_IMDS_ENDPOINT");
        String uri = required("S3NATIVE_TEST_CONTAINER_CREDENTIALS_URI");
        assertWrittenWith(required("S3NATIVE_TEST_CONTAINER_ACCESS_KEY"), imds,
                Map.of("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri), "container-secret-key", "container-session-token");
    }

    /**
     * Write a 6 MiB file in a child JVM with S3A's default chain, no AWS keys in its
     * environment, instance metadata at {@code imds} and {@code extraEnv}; every request must
     * be signed with {@code accessKey} and no secret may show in its output.
     */
    private static void assertWrittenWith(String accessKey, String imds, Map<String, String> extraEnv, String... secrets)
            throws Exception {
        String bucket = HadoopS3.newBucket("default-chain");
        String key = "default-chain-" + System.nanoTime();
        String out = HadoopChild.runWithCredentialEnvironment(Child.class, imds, List.of(), extraEnv, bucket, key);
        assertTrue(out.lines().anyMatch("NATIVE 1"::equals), "written natively, no fallback:\n" + out);
        assertEquals(Set.of(accessKey), HadoopS3.accessKeyIds(key), "every request signed with the chain's key");
        for (String secret : secrets) {
            assertFalse(out.contains(secret), "no secret in the output:\n" + out);
        }
    }

    /** The child: S3A's default chain, a 6 MiB file (a multipart upload) through NativeS3AFileSystem. */
    public static final class Child {
        public static void main(String[] args) throws IOException {
            Configuration conf = HadoopS3.conf(true);
            conf.unset("fs.s3a.access.key");
            conf.unset("fs.s3a.secret.key");
            conf.unset("fs.s3a.aws.credentials.provider");
            conf.set("fs.s3a.native.fallback", "fail");
            NativeS3AFileSystem fs = (NativeS3AFileSystem) FileSystem.get(URI.create("s3a://" + args[0] + "/"), conf);
            byte[] data = HadoopS3.data(6 * 1024 * 1024, 21);
            Path path = new Path("s3a://" + args[0] + "/" + args[1]);
            try (FSDataOutputStream out = fs.create(path)) {
                out.write(data);
            }
            if (fs.getFileStatus(path).getLen() != data.length) {
                throw new IOException("wrong length");
            }
            System.out.println("NATIVE " + fs.getNativeCreateCount());
            fs.close();
        }
    }
}
