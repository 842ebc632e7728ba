package io.s3native.druid;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The local S3 server of the tests (scripts/s3-server.sh: moto and the fault proxy) seen from
 * outside the extension: bucket creation and the checks of what reached the server (objects,
 * multipart uploads left open, the proxy's log and rules), by plain HTTP (moto accepts
 * unsigned requests), so no second S3 client is needed.
 */
final class LocalS3 {
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private LocalS3() {
    }

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            fail(name + " is not set: start the local S3 server first (env=$(scripts/s3-server.sh start) && eval \"$env\"), or run `make test-druid`");
        }
        return v;
    }

    static String endpoint() {
        return env("S3NATIVE_TEST_ENDPOINT");
    }

    static String faultProxy() {
        return env("S3NATIVE_TEST_FAULT_PROXY");
    }

    static String accessKey() {
        String v = System.getenv("S3NATIVE_TEST_ACCESS_KEY");
        return v != null && !v.isEmpty() ? v : env("AWS_ACCESS_KEY_ID");
    }

    static String secretKey() {
        String v = System.getenv("S3NATIVE_TEST_SECRET_KEY");
        return v != null && !v.isEmpty() ? v : env("AWS_SECRET_ACCESS_KEY");
    }

    static String region() {
        String r = System.getenv("AWS_REGION");
        return r == null || r.isEmpty() ? "us-east-1" : r;
    }

    private static HttpResponse<byte[]> send(HttpRequest r) {
        try {
            return HTTP.send(r, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new AssertionError("request to the local S3 server failed: " + r.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A new, empty bucket with a unique name. */
    static String newBucket(String what) {
        String name = ("druid-" + what + "-" + Long.toHexString(System.nanoTime()) + "-" + COUNTER.incrementAndGet())
                .toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        if (name.length() > 63) {
            name = name.substring(name.length() - 63).replaceAll("^-+", "");
        }
        HttpResponse<byte[]> r = send(HttpRequest.newBuilder(URI.create(endpoint() + "/" + name))
                .PUT(HttpRequest.BodyPublishers.noBody()).build());
        if (r.statusCode() != 200) {
            fail("creating bucket " + name + ": HTTP " + r.statusCode() + " " + new String(r.body()));
        }
        return name;
    }

    /**
     * The object's bytes, or null when there is none: read with s3native's own reader and plain
     * {@code fs.s3a.*} settings (moto refuses anonymous GETs of objects), so the key is the one
     * given here, not one the connector composes.
     */
    static byte[] get(String bucket, String key) {
        java.util.Map<String, String> s = new java.util.HashMap<>();
        s.put("fs.s3a.endpoint", endpoint());
        s.put("fs.s3a.path.style.access", "true");
        s.put("fs.s3a.endpoint.region", region());
        s.put("fs.s3a.access.key", accessKey());
        s.put("fs.s3a.secret.key", secretKey());
        try (io.s3native.S3NativeInputStream in = new io.s3native.S3NativeInputStream(bucket, key, s)) {
            return in.readAllBytes();
        } catch (java.io.FileNotFoundException e) {
            return null;
        } catch (IOException e) {
            throw new AssertionError("GET " + bucket + "/" + key + ": " + e, e);
        }
    }

    /** Keys of the multipart uploads open in {@code bucket} (ListMultipartUploads). */
    static List<String> openUploads(String bucket) {
        HttpResponse<byte[]> r = send(HttpRequest.newBuilder(URI.create(endpoint() + "/" + bucket + "?uploads")).GET().build());
        if (r.statusCode() != 200) {
            fail("ListMultipartUploads " + bucket + ": HTTP " + r.statusCode());
        }
        List<String> keys = new ArrayList<>();
        Matcher m = Pattern.compile("<Upload>.*?<Key>(.*?)</Key>", Pattern.DOTALL).matcher(new String(r.body()));
        while (m.find()) {
            keys.add(m.group(1));
        }
        return keys;
    }

    /** One control call to the fault proxy (tests/support/fault_proxy.py); the answer's body. */
    static String proxy(String method, String path, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(faultProxy() + path));
        b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
                : b.method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
        HttpResponse<byte[]> r = send(b.build());
        if (r.statusCode() != 200) {
            fail("fault proxy " + method + " " + path + ": HTTP " + r.statusCode() + " " + new String(r.body()));
        }
        return new String(r.body());
    }

    static void clearProxy() {
        proxy("DELETE", "/__fault/rules", null);
        proxy("DELETE", "/__fault/log", null);
    }

    /** Deterministic bytes. */
    static byte[] data(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }
}
