package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.sun.net.httpserver.HttpServer;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.files.SuccessData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Web identity (IRSA) and assumed roles: the credentials S3A's own provider chain obtains
 * from AWS STS (moto's, behind the TLS front of scripts/s3-server.sh: the child JVM resolves
 * the STS host names to it by {@code -Djdk.net.hosts.file} and trusts its CA by
 * {@code -Djavax.net.ssl.trustStore}) sign the native writes ({@code fs.s3a.native.fallback=fail}).
 *
 * <p>Each case runs {@code HadoopChild credentials} in a JVM of its own, with no AWS keys in
 * its environment and instance metadata disabled and pointed at a local server that answers
 * 404: a multipart file and a magic committer job, natively, then on stock S3A. Then it
 * checks that the file was signed with the key id its filesystem's S3A chain holds, that
 * every request under the case's prefix was signed with a key id moto's STS handed out for
 * the case's role session (moto's GetCallerIdentity names the session of a key it issued),
 * that neither the chain's secret and session token, the web identity token nor the static
 * keys that called STS show in the child's output or in the {@code .pending} and
 * {@code _SUCCESS} files, and that both filesystems stored the same bytes.
 */
class StsCredentialsTest {
    private static final String ROLE_ARN = "arn:aws:iam::123456789012:role/s3native-sts-test";
    /** The static keys that sign the AssumeRole call (moto accepts any): never on the S3 wire. */
    private static final String CALLER_KEY = "AKIDSTSCALLER";
    private static final String CALLER_SECRET = "sts-caller-secret-" + UUID.randomUUID();
    private static final String ASSUMED_ROLE = "org.apache.hadoop.fs.s3a.auth.AssumedRoleCredentialProvider";
    private static final String SIMPLE = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider";

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** Instance metadata for the child JVMs: a local server answering 404 to everything. */
    private static HttpServer noMetadata;

    @BeforeAll
    static void startNoMetadata() throws IOException {
        noMetadata = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        noMetadata.createContext("/", exchange -> {
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
        });
        noMetadata.start();
    }

    @AfterAll
    static void stopNoMetadata() {
        if (noMetadata != null) {
            noMetadata.stop(0);
        }
    }

    private static String required(String name) {
        return HadoopChild.requiredEnv(name, "scripts/s3-server.sh starts the TLS front when it can bind port 443");
    }

    /** Hadoop 3.4+ (S3A on AWS SDK v2): its provider list is an SDK v2 AwsCredentialsProvider. */
    private static boolean sdkV2Line() throws ClassNotFoundException {
        Class<?> list = Class.forName("org.apache.hadoop.fs.s3a.AWSCredentialProviderList");
        try {
            return Class.forName("software.amazon.awssdk.auth.credentials.AwsCredentialsProvider").isAssignableFrom(list);
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    // ---- web identity (IRSA) --------------------------------------------------------------------

    /** The web identity provider users write on the line: SDK v1's on 3.3, SDK v2's on 3.4+. */
    @Test
    void webIdentityProviderOfTheLine() throws Exception {
        String provider = sdkV2Line() ? "software.amazon.awssdk.auth.credentials.WebIdentityTokenFileCredentialsProvider"
                : "com.amazonaws.auth.WebIdentityTokenCredentialsProvider";
        webIdentity("webid", Map.of("fs.s3a.aws.credentials.provider", provider));
    }

    /**
     * 3.4+: the SDK v1 name, which S3A 3.4 does not map by itself (its built-in mapping covers
     * the environment, instance, container, profile and anonymous classes only), mapped by the
     * user with {@code fs.s3a.aws.credentials.provider.mapping}.
     */
    @Test
    void webIdentityV1NameMappedOnSdkV2Lines() throws Exception {
        Assumptions.assumeTrue(sdkV2Line(), "3.3 takes the SDK v1 class itself (webIdentityProviderOfTheLine)");
        String v1 = "com.amazonaws.auth.WebIdentityTokenCredentialsProvider";
        webIdentity("webid-v1", Map.of("fs.s3a.aws.credentials.provider", v1, "fs.s3a.aws.credentials.provider.mapping",
                v1 + "=software.amazon.awssdk.auth.credentials.WebIdentityTokenFileCredentialsProvider"));
    }

    /** The SDK's default chain, which reaches web identity after the (empty) environment. */
    @Test
    void defaultChainOfTheLineFindsWebIdentity() throws Exception {
        String provider = sdkV2Line() ? "software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"
                : "com.amazonaws.auth.DefaultAWSCredentialsProviderChain";
        webIdentity("default", Map.of("fs.s3a.aws.credentials.provider", provider));
    }

    /** 3.4+: the SDK v1 default chain's name, mapped by the user to SDK v2's. */
    @Test
    void defaultChainV1NameMappedOnSdkV2Lines() throws Exception {
        Assumptions.assumeTrue(sdkV2Line(), "3.3 takes the SDK v1 class itself (defaultChainOfTheLineFindsWebIdentity)");
        String v1 = "com.amazonaws.auth.DefaultAWSCredentialsProviderChain";
        webIdentity("default-v1", Map.of("fs.s3a.aws.credentials.provider", v1, "fs.s3a.aws.credentials.provider.mapping",
                v1 + "=software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider"));
    }

    /** A child JVM with the web identity environment EKS gives a pod (a token file, the role). */
    private static void webIdentity(String what, Map<String, String> settings) throws Exception {
        String session = session();
        String token = "s3native-web-identity-token-" + UUID.randomUUID();
        java.nio.file.Path tokenFile = Files.createTempFile("s3native-web-identity", ".token");
        try {
            Files.writeString(tokenFile, token);
            Map<String, String> env = Map.of("AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile.toString(), "AWS_ROLE_ARN", ROLE_ARN,
                    "AWS_ROLE_SESSION_NAME", session);
            assertNativeWritesSignedBySts(what, bucket -> settings, env, session, List.of(token));
        } finally {
            Files.deleteIfExists(tokenFile);
        }
    }

    // ---- AssumedRoleCredentialProvider --------------------------------------------------------------

    @Test
    void assumedRolePerFileSystem() throws Exception {
        String session = session();
        assertNativeWritesSignedBySts("assumed", bucket -> assumedRole("fs.s3a.", session), Map.of(), session, List.of());
    }

    /**
     * The role set for the bucket only (fs.s3a.bucket.NAME.*), over a filesystem-wide chain
     * of static keys that must not be used for it.
     */
    @Test
    void assumedRolePerBucket() throws Exception {
        String session = session();
        assertNativeWritesSignedBySts("assumed-bucket", bucket -> {
            Map<String, String> s = new LinkedHashMap<>();
            s.put("fs.s3a.aws.credentials.provider", SIMPLE);
            s.put("fs.s3a.access.key", "AKIDNOTFORTHISBUCKET");
            s.put("fs.s3a.secret.key", "not-for-this-bucket");
            s.putAll(assumedRole("fs.s3a.bucket." + bucket + ".", session));
            return s;
        }, Map.of(), session, List.of());
    }

    /**
     * S3A's assumed-role settings under {@code prefix} (fs.s3a. or fs.s3a.bucket.NAME.): the
     * role, the session, STS at the TLS front, and static keys to call STS. 3.4+ build
     * {@code https://} + the endpoint themselves, and 3.5.0 takes all of it as the host (a
     * host:port reads as a malformed IPv6 address), so it is the front's host (the front
     * listens on 443); 3.3 gives its STS client the protocol of fs.s3a.connection.ssl.enabled
     * (false here: the S3 endpoint is plain http) unless the endpoint names one, so it is
     * the front's URL.
     */
    private static Map<String, String> assumedRole(String prefix, String session) throws ClassNotFoundException {
        URI tls = URI.create(required("S3NATIVE_TEST_TLS_ENDPOINT"));
        String front = !sdkV2Line() ? tls.toString() : tls.getPort() == 443 || tls.getPort() < 0 ? tls.getHost()
                : tls.getAuthority();
        Map<String, String> s = new LinkedHashMap<>();
        s.put(prefix + "aws.credentials.provider", ASSUMED_ROLE);
        s.put(prefix + "assumed.role.arn", ROLE_ARN);
        s.put(prefix + "assumed.role.session.name", session);
        s.put(prefix + "assumed.role.sts.endpoint", front);
        s.put(prefix + "assumed.role.sts.endpoint.region", "us-east-1");
        s.put(prefix + "assumed.role.credentials.provider", SIMPLE);
        s.put(prefix + "access.key", CALLER_KEY);
        s.put(prefix + "secret.key", CALLER_SECRET);
        return s;
    }

    // ---- the checks ---------------------------------------------------------------------------------

    private static String session() {
        return "s3n-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * The ARN moto's STS tells for requests signed with {@code accessKeyId} (GetCallerIdentity;
     * moto checks no signature): {@code arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION} for a
     * key its AssumeRole or AssumeRoleWithWebIdentity handed out, a user's ARN for any other.
     */
    private static String callerArn(String accessKeyId) throws IOException, InterruptedException {
        String date = java.time.LocalDate.now(java.time.ZoneOffset.UTC).toString().replace("-", "");
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(HadoopS3.ENDPOINT + "/"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Authorization", "AWS4-HMAC-SHA256 Credential=" + accessKeyId + "/" + date
                        + "/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=0")
                .POST(HttpRequest.BodyPublishers.ofString("Action=GetCallerIdentity&Version=2011-06-15")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), "GetCallerIdentity: " + r.body());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<Arn>([^<]*)</Arn>").matcher(r.body());
        assertTrue(m.find(), "GetCallerIdentity: " + r.body());
        return m.group(1);
    }

    /**
     * The TLS front's hosts file (the STS names at the front) plus this machine's name at
     * 127.0.0.1: with a jdk.net.hosts.file the JVM resolves nothing else, and Hadoop looks its
     * own host name up (metrics, the committer's _SUCCESS).
     */
    private static String hostsFile() throws IOException {
        String hosts = Files.readString(java.nio.file.Paths.get(required("S3NATIVE_TEST_TLS_HOSTS_FILE")));
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return required("S3NATIVE_TEST_TLS_HOSTS_FILE");
        }
        java.nio.file.Path file = Files.createTempFile("s3native-sts", ".hosts");
        file.toFile().deleteOnExit();
        Files.writeString(file, hosts + "127.0.0.1 " + name + "\n");
        return file.toString();
    }

    interface Settings {
        Map<String, String> forBucket(String bucket) throws Exception;
    }

    /**
     * Run the writes of {@code HadoopChild credentials} with {@code settings} and {@code env}
     * in a child JVM that reaches STS only at the TLS front; check what this class promises.
     * {@code secrets}: more values that must not show (the web identity token).
     */
    private static void assertNativeWritesSignedBySts(String what, Settings settings, Map<String, String> env,
            String session, List<String> secrets) throws Exception {
        required("S3NATIVE_TEST_TLS_ENDPOINT");
        String bucket = HadoopS3.newBucket("sts-" + what);
        String marker = "sts-" + what + "-" + System.nanoTime();
        java.nio.file.Path dir = Files.createTempDirectory("s3native-sts");
        try {
            check(settings, env, session, secrets, bucket, marker, dir);
        } finally {
            try (java.util.stream.Stream<java.nio.file.Path> files = Files.list(dir)) {
                for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) files::iterator) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    private static void check(Settings settings, Map<String, String> env, String session,
            List<String> secrets, String bucket, String marker, java.nio.file.Path dir) throws Exception {
        List<String> jvm = List.of("-Djdk.net.hosts.file=" + hostsFile(),
                "-Djavax.net.ssl.trustStore=" + required("S3NATIVE_TEST_TLS_TRUSTSTORE"),
                "-Djavax.net.ssl.trustStorePassword=" + required("S3NATIVE_TEST_TLS_TRUSTSTORE_PASSWORD"),
                "-Djavax.net.ssl.trustStoreType=PKCS12");
        java.util.Properties props = new java.util.Properties();
        props.putAll(settings.forBucket(bucket));
        try (java.io.Writer w = Files.newBufferedWriter(dir.resolve("settings.properties"))) {
            props.store(w, null);
        }
        String[] args = {"credentials", bucket, marker, dir.toString()};
        Map<String, String> childEnv = new LinkedHashMap<>(env);
        childEnv.put("AWS_REGION", "us-east-1");
        childEnv.put("AWS_EC2_METADATA_DISABLED", "true");
        String metadata = "http://" + noMetadata.getAddress().getAddress().getHostAddress() + ":" + noMetadata.getAddress().getPort();
        String out = HadoopChild.runWithCredentialEnvironment(HadoopChild.class, metadata, jvm, childEnv,
                args);

        // Native, with no fallback: both files through the native writer, its statistics count the bytes.
        int size = HadoopChild.CREDENTIALS_FILE_SIZE;
        assertTrue(out.contains("RESULT native plain stream=native bytes=" + size), "the native stream wrote it:\n" + out);
        assertTrue(out.contains("RESULT native creates native=2 stock=0 fallback=null"), "both files native:\n" + out);
        assertTrue(out.contains("RESULT stock plain stream=stock "), "stock S3A wrote it:\n" + out);

        // The wire: the native writer's requests signed with the key its filesystem's chain
        // holds, and every request under the marker with a key moto's STS issued for this
        // role session (before anything here reads under the marker with HadoopS3's keys).
        String assumed = ROLE_ARN.replace(":iam::", ":sts::").replace(":role/", ":assumed-role/") + "/" + session;
        List<String> hidden = new ArrayList<>(secrets);
        hidden.add(CALLER_SECRET);
        for (String mode : List.of("native", "stock")) {
            List<String> chain = Files.readAllLines(dir.resolve(mode + ".credentials"));
            assertEquals(3, chain.size(), mode + ": key id, secret, token");
            hidden.addAll(chain.subList(1, 3));
            assertEquals(Set.of(chain.get(0)), HadoopS3.accessKeyIds(marker + "/" + mode + "/plain"),
                    mode + ": the file signed with the key the filesystem's chain holds");
            Set<String> signed = HadoopS3.accessKeyIds(marker + "/" + mode + "/");
            for (String id : signed) {
                assertEquals(assumed, callerArn(id), mode + ": key " + id + " from STS for the role session");
            }
            assertFalse(chain.get(2).isEmpty(), mode + ": the chain holds session credentials (with a token)");
        }
        List<String> nativeRequests = HadoopS3.requests(marker + "/native/plain");
        assertTrue(nativeRequests.contains("UploadPart"), "the native writer's multipart upload: " + nativeRequests);

        // No secret anywhere the user looks.
        Map<String, String> texts = new LinkedHashMap<>();
        texts.put("the child's output", out);
        for (String file : List.of("native.pending", "native._SUCCESS", "stock.pending", "stock._SUCCESS")) {
            texts.put(file, Files.readString(dir.resolve(file), StandardCharsets.UTF_8));
        }
        for (String secret : hidden) {
            assertTrue(secret.length() >= 16, "a secret of moto's or ours");
            for (Map.Entry<String, String> t : texts.entrySet()) {
                assertFalse(t.getValue().contains(secret), "a secret or token in " + t.getKey());
            }
        }

        // The same bytes through both filesystems, and the same job summary.
        FileSystem fs = HadoopS3.fs(bucket, HadoopS3.conf(false));
        try {
            String base = "s3a://" + bucket + "/" + marker + "/";
            byte[] plain = HadoopS3.data(size, 11);
            byte[] part = HadoopS3.data(size, 12);
            for (String mode : List.of("native", "stock")) {
                assertArrayEquals(plain, HadoopS3.read(fs, new Path(base + mode + "/plain")), mode + "/plain");
                assertArrayEquals(part, HadoopS3.read(fs, new Path(base + mode + "/table/part-00000")), mode + " job output");
            }
            List<String> nativeFiles = SuccessData.load(fs, new Path(base + "native/table/_SUCCESS")).getFilenames();
            List<String> stockFiles = SuccessData.load(fs, new Path(base + "stock/table/_SUCCESS")).getFilenames();
            assertEquals(List.of("/" + marker + "/native/table/part-00000"), nativeFiles, "native _SUCCESS");
            assertEquals(List.of("/" + marker + "/stock/table/part-00000"), stockFiles, "stock _SUCCESS");
        } finally {
            fs.close();
        }
    }
}
