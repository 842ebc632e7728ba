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
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * A private CA the JVM trusts through {@code javax.net.ssl.trustStore} (on-prem MinIO behind a
 * company CA) is trusted by native writes too, with no SSL_CERT_FILE: in a child JVM, a
 * NativeS3AFileSystem write to the local TLS front (scripts/s3-server.sh:
 * S3NATIVE_TEST_TLS_ENDPOINT, a throw-away CA in S3NATIVE_TEST_TLS_TRUSTSTORE) succeeds
 * natively, as stock S3A's does in the same JVM; without the truststore it fails with a
 * certificate error.
 */
class TruststoreTest {
    private static String required(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (System.getenv("CI") != null) {
                fail(name + " is not set: make test starts the TLS front (scripts/s3-server.sh)");
            }
            org.junit.jupiter.api.Assumptions.abort(name + " is not set (the TLS front needs port 443)");
        }
        return v;
    }

    @Test
    void aPrivateCaInTheJvmTruststoreIsTrustedNatively() throws Exception {
        String truststore = required("S3NATIVE_TEST_TLS_TRUSTSTORE");
        String bucket = HadoopS3.newBucket("truststore");
        String key = "truststore-" + System.nanoTime();
        String out = runChild(bucket, key, 0, "-Djavax.net.ssl.trustStore=" + truststore,
                "-Djavax.net.ssl.trustStoreType=PKCS12",
                "-Djavax.net.ssl.trustStorePassword=" + required("S3NATIVE_TEST_TLS_TRUSTSTORE_PASSWORD"));
        assertTrue(out.lines().anyMatch("NATIVE 1"::equals), "written natively, no fallback:\n" + out);
        assertTrue(out.contains("STOCK OK"), "stock S3A wrote through the same truststore:\n" + out);
        assertEquals(List.of(key + "-native", key + "-stock"), HadoopS3.keys(bucket, key));
    }

    @Test
    void withoutTheTruststoreTheNativeWriteFailsWithACertificateError() throws Exception {
        required("S3NATIVE_TEST_TLS_TRUSTSTORE");
        String bucket = HadoopS3.newBucket("truststore");
        String key = "no-truststore-" + System.nanoTime();
        String out = runChild(bucket, key, 3, "-Ds3native.test.magic=true");
        String failure = out.lines().filter(l -> l.startsWith("FAILED ")).findFirst().orElse("");
        System.out.println("without the truststore: " + failure);
        assertTrue(failure.toLowerCase(Locale.ROOT).contains("certificate"), "a certificate error:\n" + out);
        assertTrue(failure.contains(key), "the error names the key:\n" + out);
        String secret = System.getenv("AWS_SECRET_ACCESS_KEY");
        if (secret != null && secret.length() >= 4) {
            assertFalse(failure.contains(secret), "no secret in the error:\n" + out);
        }
        assertEquals(List.of(), HadoopS3.keys(bucket, key));
    }

    /** Run {@link Child} with {@code jvmArgs}, no SSL_CERT_FILE/SSL_CERT_DIR; its output, after checking its exit code. */
    private static String runChild(String bucket, String key, int exitCode, String... jvmArgs) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        if (System.getProperty("s3native.library.path") != null) {
            cmd.add("-Ds3native.library.path=" + System.getProperty("s3native.library.path"));
        }
        cmd.addAll(List.of(jvmArgs));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Child.class.getName(), bucket, key,
                required("S3NATIVE_TEST_TLS_ENDPOINT")));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.remove("SSL_CERT_FILE");
        env.remove("SSL_CERT_DIR");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the child JVM did not finish");
        }
        assertEquals(exitCode, p.exitValue(), "child JVM output:\n" + out);
        return out;
    }

    /**
     * The child: a 6 MiB file (a multipart upload) through NativeS3AFileSystem, then one through
     * stock S3A, both over https to the TLS front, path style, fallback=fail. Exit 3 with a
     * {@code FAILED} line when the native write fails. With {@code -Ds3native.test.magic=true}
     * the native file is a magic path: S3A sends no probe for it, so every request of the write
     * is native (the JVM's own TLS, which stock S3A's probes use, is not what is tested).
     */
    public static final class Child {
        public static void main(String[] args) throws IOException {
            String bucket = args[0];
            String key = args[1];
            byte[] data = HadoopS3.data(6 * 1024 * 1024, 7);
            try (FileSystem fs = FileSystem.get(URI.create("s3a://" + bucket + "/"), conf(true, args[2]))) {
                Path path = new Path("s3a://" + bucket + "/" + key
                        + (Boolean.getBoolean("s3native.test.magic") ? "/" + RequestCostTest.magicKey() : "-native"));
                try (FSDataOutputStream out = fs.create(path)) {
                    out.write(data);
                } catch (IOException e) {
                    System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
                    System.exit(3);
                }
                System.out.println("NATIVE " + ((NativeS3AFileSystem) fs).getNativeCreateCount());
            }
            try (FileSystem fs = FileSystem.get(URI.create("s3a://" + bucket + "/"), conf(false, args[2]))) {
                try (FSDataOutputStream out = fs.create(new Path("s3a://" + bucket + "/" + key + "-stock"))) {
                    out.write(data);
                }
                System.out.println("STOCK OK");
            }
        }

        private static Configuration conf(boolean nativeFs, String endpoint) {
            Configuration conf = HadoopS3.conf(nativeFs);
            conf.set("fs.s3a.endpoint", endpoint);
            conf.setBoolean("fs.s3a.connection.ssl.enabled", true);
            conf.setBoolean("fs.s3a.path.style.access", true);
            conf.set("fs.s3a.native.fallback", "fail");
            return conf;
        }
    }
}
