package io.s3native.hadoop;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The local S3 server (scripts/s3-server.sh) for the Hadoop tests: configurations for stock
 * S3A and {@link NativeS3AFileSystem}, buckets, what the server holds (read with AWS SDK v2,
 * on the test classpath of every Hadoop profile), and the S3 operations the fault proxy
 * forwarded.
 */
final class HadoopS3 {
    static final String ENDPOINT = requireEnv("S3NATIVE_TEST_ENDPOINT");
    /** The fault proxy: its request log counts what each filesystem sent. */
    static final String PROXY = System.getenv("S3NATIVE_TEST_FAULT_PROXY");
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * An S3 client straight to the server (not through the proxy, so it is not in the log).
     * AWS SDK v2 is on the test classpath of each profile: the s3 and url-connection-client
     * modules with Hadoop 3.3 (as for io.s3native.S3Test), the bundle hadoop-aws uses with 3.4
     * and 3.5. No HTTP client is named: each classpath has exactly one, and the SDK finds it
     * (url-connection-client, or the bundle's Apache client). Only builder calls that every
     * SDK version there (2.24 to 2.57) has.
     */
    private static final S3Client S3 = S3Client.builder()
            .endpointOverride(URI.create(ENDPOINT))
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                    System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "testing"),
                    System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "testing"))))
            .forcePathStyle(true)
            .build();

    private HadoopS3() {
    }

    private static String requireEnv(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: start the server with scripts/s3-server.sh start");
        }
        return v;
    }

    /** A fresh bucket with a unique name. */
    static String newBucket(String what) throws IOException {
        String bucket = ("s3n-hadoop-" + what + "-" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT);
        S3.createBucket(b -> b.bucket(bucket));
        return bucket;
    }

    /** Configuration for s3a:// on the local server; {@code nativeFs}: fs.s3a.impl is ours. */
    static Configuration conf(boolean nativeFs) {
        Configuration conf = new Configuration();
        String endpoint = PROXY != null ? PROXY : ENDPOINT;
        conf.set("fs.s3a.endpoint", endpoint);
        conf.set("fs.s3a.endpoint.region", "us-east-1");
        conf.setBoolean("fs.s3a.path.style.access", true);
        conf.setBoolean("fs.s3a.connection.ssl.enabled", false);
        conf.set("fs.s3a.access.key", System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "testing"));
        conf.set("fs.s3a.secret.key", System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "testing"));
        conf.set("fs.s3a.aws.credentials.provider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider");
        conf.setBoolean("fs.s3a.impl.disable.cache", true);
        conf.setBoolean("fs.s3a.committer.magic.enabled", true);
        conf.set("fs.s3a.retry.limit", "2");
        conf.set("fs.s3a.attempts.maximum", "2");
        // Store compatibility switches of the newer lines (moto).
        conf.setBoolean("fs.s3a.checksum.generation", false);
        conf.setBoolean("fs.s3a.create.conditional.enabled", false);
        conf.set("fs.s3a.multipart.size", "5M");
        if (nativeFs) {
            conf.set("fs.s3a.impl", NativeS3AFileSystem.class.getName());
            conf.set("fs.AbstractFileSystem.s3a.impl", NativeS3A.class.getName());
        }
        return conf;
    }

    static FileSystem fs(String bucket, Configuration conf) throws IOException {
        return FileSystem.get(URI.create("s3a://" + bucket + "/"), conf);
    }

    static NativeS3AFileSystem nativeFs(String bucket) throws IOException {
        return (NativeS3AFileSystem) fs(bucket, conf(true));
    }

    static byte[] read(FileSystem fs, Path p) throws IOException {
        long len = fs.getFileStatus(p).getLen();
        byte[] b = new byte[(int) len];
        try (FSDataInputStream in = fs.open(p)) {
            in.readFully(0, b);
        }
        return b;
    }

    /** Keys of the multipart uploads in progress under {@code prefix} (ListMultipartUploads); a new, modifiable list. */
    static List<String> uploads(String bucket, String prefix) {
        return S3.listMultipartUploadsPaginator(b -> b.bucket(bucket).prefix(prefix)).uploads().stream()
                .map(MultipartUpload::key).collect(Collectors.toCollection(ArrayList::new));
    }

    /** Object keys under {@code prefix} (ListObjectsV2); a new, modifiable list. */
    static List<String> keys(String bucket, String prefix) {
        return S3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(prefix)).contents().stream()
                .map(S3Object::key).collect(Collectors.toCollection(ArrayList::new));
    }

    /**
     * The S3 operations the proxy forwarded for paths containing {@code marker}, in the order
     * it logged them (see {@link #operation}).
     */
    static List<String> requests(String marker) throws IOException {
        List<String> out = new ArrayList<>();
        for (JsonNode e : logFor(marker)) {
            out.add(operation(e.path("method").asText(), e.path("path").asText(), e.path("query").asText("")));
        }
        return out;
    }

    /** The fault proxy's log entries for paths containing {@code marker} (raw or percent-decoded), in order. */
    private static List<JsonNode> logFor(String marker) throws IOException {
        if (PROXY == null) {
            throw new IllegalStateException("S3NATIVE_TEST_FAULT_PROXY is not set");
        }
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : JSON.readTree(get(PROXY + "/__fault/log"))) {
            String path = e.path("path").asText();
            if (path.contains(marker) || decode(path).contains(marker)) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * One proxied request: its S3 operation (see {@link #operation}; an UploadPart with its
     * part number, "UploadPart 2"), its percent-decoded path, the proxy's fault (null: none)
     * and the status the client got (null: no answer).
     */
    record Logged(String operation, String path, String fault, Integer status) {
    }

    /** The proxy's log for paths containing {@code marker}, in order, as {@link Logged} entries. */
    static List<Logged> logged(String marker) throws IOException {
        List<Logged> out = new ArrayList<>();
        for (JsonNode e : logFor(marker)) {
            String query = e.path("query").asText("");
            String op = operation(e.path("method").asText(), e.path("path").asText(), query);
            String part = partNumber(query);
            out.add(new Logged(part == null ? op : op + " " + part, decode(e.path("path").asText()),
                    e.path("fault").isNull() ? null : e.path("fault").asText(),
                    e.path("status").isNull() ? null : e.path("status").asInt()));
        }
        return out;
    }

    private static String partNumber(String query) {
        for (String p : query.split("&")) {
            String[] kv = p.split("=", 2);
            if (kv.length == 2 && kv[0].equals("partNumber")) {
                return kv[1];
            }
        }
        return null;
    }

    /**
     * Arm a fault proxy rule (JSON, see tests/support/fault_proxy.py). The proxy's rules are
     * shared by every test using it: always match a path no other test uses.
     */
    static void addRule(String json) throws IOException {
        if (PROXY == null) {
            throw new IllegalStateException("S3NATIVE_TEST_FAULT_PROXY is not set");
        }
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(PROXY + "/__fault/rules"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("the fault proxy refused rule " + json + ": HTTP " + r.statusCode() + " " + r.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** One proxied request: its S3 operation (see {@link #operation}) and its {@code Referer} header (null: none). */
    record Referred(String operation, String referer) {
    }

    /** The operations and {@code Referer} headers of the proxied requests for paths containing {@code marker}, in order. */
    static List<Referred> referred(String marker) throws IOException {
        List<Referred> out = new ArrayList<>();
        for (JsonNode e : logFor(marker)) {
            out.add(new Referred(operation(e.path("method").asText(), e.path("path").asText(), e.path("query").asText("")),
                    e.path("referer").isMissingNode() || e.path("referer").isNull() ? null : e.path("referer").asText()));
        }
        return out;
    }

    /** The access key ids that signed the proxied requests for paths containing {@code marker}. */
    static Set<String> accessKeyIds(String marker) throws IOException {
        Set<String> out = new HashSet<>();
        for (JsonNode e : logFor(marker)) {
            out.add(e.path("access_key_id").asText(null));
        }
        return out;
    }

    /** The access key ids that signed the proxied {@code operation} requests for paths containing {@code marker}, in order. */
    static List<String> accessKeyIdsOf(String marker, String operation) throws IOException {
        List<String> out = new ArrayList<>();
        for (JsonNode e : logFor(marker)) {
            if (operation(e.path("method").asText(), e.path("path").asText(), e.path("query").asText("")).equals(operation)) {
                out.add(e.path("access_key_id").asText(null));
            }
        }
        return out;
    }

    /** Query parameters that do not make a request another operation (paging, listing options, the SDK's x-id). */
    private static final Set<String> PLAIN_PARAMS = Set.of("x-id", "versionId", "partNumber", "prefix", "delimiter",
            "marker", "max-keys", "encoding-type", "continuation-token", "start-after", "fetch-owner",
            "key-marker", "upload-id-marker", "max-uploads", "max-parts", "part-number-marker");

    /**
     * The S3 operation (its API name: CreateMultipartUpload, UploadPart, PutObject, ...) of a
     * path-style request, from its method, raw path and query, all the proxy logs. Headers are
     * not logged, so a CopyObject or UploadPartCopy (x-amz-copy-source) would read as PutObject
     * or UploadPart; the tests here copy nothing. Anything else reads as
     * {@code "Unknown METHOD path?query"}, which no expected list holds.
     */
    static String operation(String method, String path, String query) {
        Set<String> params = new HashSet<>();
        for (String p : query.split("&")) {
            if (!p.isEmpty()) {
                params.add(decode(p.split("=", 2)[0]));
            }
        }
        int slash = path.indexOf('/', 1); // path-style: /bucket or /bucket/key
        boolean onObject = slash >= 0 && slash < path.length() - 1;
        Set<String> others = new HashSet<>(params);
        others.removeAll(PLAIN_PARAMS);
        String m = method.toUpperCase(Locale.ROOT);
        String op = null;
        if (onObject) {
            if (others.equals(Set.of("uploadId"))) {
                op = switch (m) {
                    case "PUT" -> params.contains("partNumber") ? "UploadPart" : null;
                    case "POST" -> "CompleteMultipartUpload";
                    case "DELETE" -> "AbortMultipartUpload";
                    case "GET" -> "ListParts";
                    default -> null;
                };
            } else if (others.equals(Set.of("uploads"))) {
                op = m.equals("POST") ? "CreateMultipartUpload" : null;
            } else if (others.isEmpty()) {
                op = switch (m) {
                    case "PUT" -> "PutObject";
                    case "GET" -> "GetObject";
                    case "HEAD" -> "HeadObject";
                    case "DELETE" -> "DeleteObject";
                    default -> null;
                };
            }
        } else if (others.equals(Set.of("uploads"))) {
            op = m.equals("GET") ? "ListMultipartUploads" : null;
        } else if (others.equals(Set.of("list-type"))) {
            op = m.equals("GET") && query.contains("list-type=2") ? "ListObjectsV2" : null;
        } else if (others.equals(Set.of("delete"))) {
            op = m.equals("POST") ? "DeleteObjects" : null;
        } else if (others.equals(Set.of("location"))) {
            op = m.equals("GET") ? "GetBucketLocation" : null;
        } else if (others.isEmpty()) {
            op = switch (m) {
                case "GET" -> "ListObjects";
                case "HEAD" -> "HeadBucket";
                case "PUT" -> "CreateBucket";
                case "DELETE" -> "DeleteBucket";
                default -> null;
            };
        }
        return op != null ? op : "Unknown " + m + " " + path + (query.isEmpty() ? "" : "?" + query);
    }

    /** Percent-decoding of a path or query part ('+' stays '+'). */
    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static String get(String url) throws IOException {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("GET " + url + ": HTTP " + r.statusCode() + " " + r.body());
            }
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    static void closeAll(AutoCloseable... cs) {
        for (AutoCloseable c : cs) {
            if (c != null) {
                try {
                    c.close();
                } catch (Exception ignored) {
                    // best effort
                }
            }
        }
    }

    static byte[] data(int n, long seed) {
        byte[] b = new byte[n];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    static void drain(InputStream in) throws IOException {
        IOUtils.copyBytes(in, java.io.OutputStream.nullOutputStream(), 4096, true);
    }
}
