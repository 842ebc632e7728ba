package io.s3native.hadoop;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;

/**
 * The local S3 server (scripts/s3-server.sh) for the Hadoop tests: configurations for stock
 * S3A and {@link NativeS3AFileSystem}, buckets, and what the server holds, read over plain
 * HTTP (moto does not check signatures) so no AWS SDK of either version is needed.
 */
final class HadoopS3 {
    static final String ENDPOINT = requireEnv("S3NATIVE_TEST_ENDPOINT");
    /** The fault proxy: its request log counts what each filesystem sent. */
    static final String PROXY = System.getenv("S3NATIVE_TEST_FAULT_PROXY");
    private static final HttpClient HTTP = HttpClient.newHttpClient();

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
        int status = send(HttpRequest.newBuilder(URI.create(ENDPOINT + "/" + bucket)).PUT(HttpRequest.BodyPublishers.noBody()));
        if (status != 200) {
            throw new IOException("creating bucket " + bucket + ": HTTP " + status);
        }
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

    /** Keys of the multipart uploads in progress under {@code prefix}. */
    static List<String> uploads(String bucket, String prefix) throws IOException {
        String xml = get(ENDPOINT + "/" + bucket + "?uploads&prefix=" + prefix);
        return all(xml, "<Key>([^<]*)</Key>");
    }

    /** Object keys under {@code prefix}. */
    static List<String> keys(String bucket, String prefix) throws IOException {
        String xml = get(ENDPOINT + "/" + bucket + "?list-type=2&prefix=" + prefix);
        return all(xml, "<Key>([^<]*)</Key>");
    }

    /** The proxy's log: "METHOD query-shape" per request whose path contains {@code marker}. */
    static List<String> requests(String marker) throws IOException {
        if (PROXY == null) {
            throw new IllegalStateException("S3NATIVE_TEST_FAULT_PROXY is not set");
        }
        String json = get(PROXY + "/__fault/log");
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\{[^{}]*\\}").matcher(json);
        while (m.find()) {
            String e = m.group();
            String path = field(e, "path");
            String query = field(e, "query");
            if (path == null || !java.net.URLDecoder.decode(path, java.nio.charset.StandardCharsets.UTF_8).contains(marker)) {
                continue;
            }
            out.add(field(e, "method") + " " + shape(query == null ? "" : query));
        }
        return out;
    }

    /** A request's kind from its query: uploads, partNumber, uploadId, list-type, delete, or object. */
    private static String shape(String query) {
        if (query.contains("partNumber")) {
            return "part";
        }
        if (query.contains("uploadId")) {
            return "upload";
        }
        if (query.contains("uploads")) {
            return "uploads";
        }
        if (query.contains("list-type") || query.contains("prefix")) {
            return "list";
        }
        if (query.contains("delete")) {
            return "delete";
        }
        return "object";
    }

    private static String field(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\":\\s*\"([^\"]*)\"").matcher(json);
        return m.find() ? m.group(1) : null;
    }

    private static List<String> all(String xml, String regex) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(xml);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
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

    private static int send(HttpRequest.Builder b) throws IOException {
        try {
            return HTTP.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
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
