package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

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
    @Test
    void theDefaultChainEndsAtTheInstanceProfileAndWritesNatively() throws Exception {
        String imds = System.getenv("S3NATIVE_TEST_IMDS_ENDPOINT");
        if (imds == null || imds.isEmpty()) {
            if (System.getenv("CI") != null) {
                fail("S3NATIVE_TEST_IMDS_ENDPOINT is not set: make test starts the instance metadata emulator");
            }
            org.junit.jupiter.api.Assumptions.abort("no instance metadata emulator (make target/tools/bin/ec2-metadata-mock)");
        }
        String bucket = HadoopS3.newBucket("default-chain");
        String key = "default-chain-" + System.nanoTime();
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-Daws.ec2MetadataServiceEndpoint=" + imds,
                "-cp", System.getProperty("java.class.path"), Child.class.getName(), bucket, key));
        for (String p : List.of("s3native.library.path")) {
            if (System.getProperty(p) != null) {
                cmd.add(1, "-D" + p + "=" + System.getProperty(p));
            }
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        for (String k : List.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
            env.remove(k);
        }
        env.put("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds);
        env.put("AWS_EC2_METADATA_DISABLED", "false");
        env.put("AWS_CONFIG_FILE", "/nonexistent/s3native-test-config");
        env.put("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/s3native-test-credentials");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the child JVM did not finish");
        }
        assertEquals(0, p.exitValue(), "child JVM output:\n" + out);
        assertTrue(out.contains("NATIVE 1"), "written natively, no fallback:\n" + out);
        assertEquals(Set.of(System.getenv("S3NATIVE_TEST_IMDS_ACCESS_KEY")), HadoopS3.accessKeyIds(key),
                "every request signed with the instance profile's key");
        assertFalse(out.contains("imds-secret-key") || out.contains("imds-session-token"), "no secret in the output:\n" + out);
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
