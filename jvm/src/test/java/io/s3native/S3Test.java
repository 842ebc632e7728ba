package io.s3native;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * What every test here shares: the local S3 server (scripts/s3-server.sh exports its
 * address), settings for the native writer, an independent S3 client (AWS SDK v2) to check
 * what reached the server, data patterns, and child JVMs.
 */
final class S3Test {
    /** The part size the tests configure (fs.s3a.multipart.size=5M). */
    static final int PART = 5 * 1024 * 1024;

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static volatile S3Client client;

    private S3Test() {
    }

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            fail(name + " is not set: start the local S3 server first (env=$(scripts/s3-server.sh start) && eval \"$env\"), or run `make test`");
        }
        return v;
    }

    static String endpoint() {
        return env("S3NATIVE_TEST_ENDPOINT");
    }

    static String faultProxy() {
        return env("S3NATIVE_TEST_FAULT_PROXY");
    }

    /** S3NATIVE_TEST_ACCESS_KEY, else AWS_ACCESS_KEY_ID (as the Rust tests read them). */
    static String accessKey() {
        String v = System.getenv("S3NATIVE_TEST_ACCESS_KEY");
        return v != null && !v.isEmpty() ? v : env("AWS_ACCESS_KEY_ID");
    }

    static String secretKey() {
        String v = System.getenv("S3NATIVE_TEST_SECRET_KEY");
        return v != null && !v.isEmpty() ? v : env("AWS_SECRET_ACCESS_KEY");
    }

    /** Settings for the native writer against {@code endpoint}. */
    static Map<String, String> settings(String endpoint) {
        Map<String, String> s = new HashMap<>();
        s.put("fs.s3a.endpoint", endpoint);
        s.put("fs.s3a.path.style.access", "true");
        s.put("fs.s3a.access.key", accessKey());
        s.put("fs.s3a.secret.key", secretKey());
        String region = System.getenv("AWS_REGION");
        s.put("fs.s3a.endpoint.region", region == null || region.isEmpty() ? "us-east-1" : region);
        s.put("fs.s3a.multipart.size", "5M");
        return s;
    }

    static Map<String, String> settings() {
        return settings(endpoint());
    }

    static synchronized S3Client s3() {
        if (client == null) {
            String region = System.getenv("AWS_REGION");
            client = S3Client.builder()
                    .endpointOverride(URI.create(endpoint()))
                    .region(Region.of(region == null || region.isEmpty() ? "us-east-1" : region))
                    .credentialsProvider(StaticCredentialsProvider.create(
                            AwsBasicCredentials.create(accessKey(), secretKey())))
                    .forcePathStyle(true)
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                    .httpClient(UrlConnectionHttpClient.create())
                    .build();
        }
        return client;
    }

    /** A new, empty bucket with a unique name. */
    static String newBucket(String what) {
        String name = ("jvm-" + what + "-" + Long.toHexString(System.nanoTime()) + "-" + COUNTER.incrementAndGet())
                .toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (name.length() > 63) {
            name = name.substring(name.length() - 63).replaceAll("^-+", "");
        }
        final String bucket = name;
        s3().createBucket(b -> b.bucket(bucket));
        return bucket;
    }

    static byte[] get(String bucket, String key) {
        return s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
    }

    static boolean exists(String bucket, String key) {
        try {
            s3().headObject(b -> b.bucket(bucket).key(key));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        } catch (software.amazon.awssdk.services.s3.model.S3Exception e) {
            if (e.statusCode() == 404) {
                return false;
            }
            throw e;
        }
    }

    static List<MultipartUpload> uploads(String bucket) {
        return new ArrayList<>(s3().listMultipartUploads(b -> b.bucket(bucket)).uploads());
    }

    /** Deterministic bytes: a pseudo-random pattern seeded by {@code seed}. */
    static byte[] data(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    static void waitFor(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + timeout + " waiting for " + what);
            }
            Thread.sleep(100);
        }
    }

    // ---- child JVMs ---------------------------------------------------------------------

    /** Start {@code java -cp <this test classpath> io.s3native.ChildMain args...}. */
    static Process startChild(String... args) throws IOException {
        return startChild(List.of(), args);
    }

    /** {@link #startChild(String...)} with extra JVM options. */
    static Process startChild(List<String> jvmOptions, String... args) throws IOException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.add("-Xmx256m");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ChildMain.class.getName());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        return pb.start();
    }

    /** Run a child to its end; returns its standard output; fails on a non-zero exit. */
    static String runChild(String... args) throws IOException, InterruptedException {
        return runChild(List.of(), args);
    }

    static String runChild(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        Process p = startChild(jvmOptions, args);
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("child JVM " + String.join(" ", args) + " did not finish");
        }
        assertEquals(0, p.exitValue(), "child JVM " + String.join(" ", args) + " failed; output: " + out);
        return out;
    }

    /** A file for a child JVM to read. */
    static File tempFile(String content) throws IOException {
        File f = File.createTempFile("s3native-test-", ".txt");
        f.deleteOnExit();
        java.nio.file.Files.writeString(f.toPath(), content);
        return f;
    }

    // ---- fault proxy ----------------------------------------------------------------------

    /**
     * The fault proxy's log entries (tests/support/fault_proxy.py: method, path, query, status,
     * fault, access_key_id) for paths containing {@code marker}, in order.
     */
    static java.util.List<com.fasterxml.jackson.databind.JsonNode> proxyLog(String marker) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(faultProxy() + "/__fault/log?path_contains="
                        + java.net.URLEncoder.encode(marker, java.nio.charset.StandardCharsets.UTF_8))).build(),
                HttpResponse.BodyHandlers.ofString());
        java.util.List<com.fasterxml.jackson.databind.JsonNode> out = new java.util.ArrayList<>();
        new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).forEach(out::add);
        return out;
    }

    /** Arm a fault proxy rule (JSON, see tests/support/fault_proxy.py). Rules are shared: always match a unique key. */
    static void addFaultRule(String json) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(faultProxy() + "/__fault/rules"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() / 100 != 2) {
            fail("fault proxy refused rule " + json + ": " + r.statusCode() + " " + r.body());
        }
    }
}
