package io.s3native.hadoop;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;

/**
 * The native settings of one filesystem: its effective configuration (S3A has already copied
 * the {@code fs.s3a.bucket.<bucket>.*} overrides over {@code fs.s3a.*}) without the
 * credential keys, or the setting that sends writes to stock S3A. Credentials never go into
 * the map: the native writer asks the filesystem's own S3A provider chain for them
 * ({@link NativeS3AFileSystem}, {@code shareCredentials}), so every provider S3A accepts works
 * natively, in S3A's order, with S3A's per-bucket options.
 *
 * <p>Three facts of the JVM go in by name, for the core to apply: {@code fs.s3a.native.region.rule},
 * the Hadoop line whose rule derives the signing region when {@code fs.s3a.endpoint.region} is
 * unset (found by reflection on hadoop-aws's {@code Constants}); {@code fs.s3a.native.input.stream.rule},
 * the Hadoop line whose rule picks S3A's input stream type from {@code fs.s3a.input.stream.type}
 * and {@code fs.s3a.prefetch.enabled} (found likewise, {@link #streamRule}); and
 * {@code fs.s3a.native.trusted.certificates}, the certificates of the JVM's truststore
 * ({@code javax.net.ssl.trustStore}, {@code .trustStoreType}, {@code .trustStorePassword}) as
 * PEM, when that property is set, so a private CA the JVM trusts is trusted natively too. A
 * value set in the configuration wins over both. A third always comes from here:
 * {@code fs.s3a.native.keys.from.defaults}, the S3A keys whose value is only
 * {@code core-default.xml}'s ({@link #keysFromDefaults}), which the core then does not take
 * as the user's.
 */
final class NativeSettings {
    static final String ACCESS_KEY = "fs.s3a.access.key";
    static final String SECRET_KEY = "fs.s3a.secret.key";
    static final String SESSION_TOKEN = "fs.s3a.session.token";
    static final String CREDENTIALS_PROVIDER = "fs.s3a.aws.credentials.provider";

    static final String REGION_RULE = "fs.s3a.native.region.rule";
    static final String STREAM_RULE = "fs.s3a.native.input.stream.rule";
    static final String STREAM_INTEGRATION = "org.apache.hadoop.fs.s3a.impl.streams.StreamIntegration";
    static final String TRUSTED_CERTIFICATES = "fs.s3a.native.trusted.certificates";
    static final String KEYS_FROM_DEFAULTS = "fs.s3a.native.keys.from.defaults";
    static final String S3A_CONSTANTS = "org.apache.hadoop.fs.s3a.Constants";

    /** Anonymous credentials sign nothing; the native client always signs, so such files go to stock S3A. */
    /** S3A's and the AWS SDKs' anonymous providers: requests unsigned, which the native client never sends. */
    private static final java.util.Set<String> ANONYMOUS = java.util.Set.of(
            "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider",
            "software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider",
            "com.amazonaws.auth.AnonymousAWSCredentials");

    /** The map handed to native code; null when {@link #fallback} is set. */
    final Map<String, String> map;
    /** The setting that keeps writes on stock S3A, or null. */
    final String fallback;

    private NativeSettings(Map<String, String> map, String fallback) {
        this.map = map;
        this.fallback = fallback;
    }

    static NativeSettings from(Configuration conf) {
        for (String p : conf.getTrimmedStrings(CREDENTIALS_PROVIDER)) {
            if (ANONYMOUS.contains(p)) {
                return new NativeSettings(null, CREDENTIALS_PROVIDER + " (" + p + ")");
            }
        }
        Map<String, String> m = new TreeMap<>();
        for (Map.Entry<String, String> e : conf.getPropsWithPrefix("fs.s3a.").entrySet()) {
            String rest = e.getKey();
            if (rest.startsWith("bucket.") || e.getValue() == null) {
                continue;
            }
            String key = "fs.s3a." + rest;
            if (key.equals(ACCESS_KEY) || key.equals(SECRET_KEY) || key.equals(SESSION_TOKEN)) {
                continue;
            }
            m.put(key, e.getValue());
        }
        // Encryption keys may live in a Hadoop credential store, as S3A reads them.
        for (String key : ENCRYPTION_KEYS) {
            char[] v = password(conf, key);
            if (v != null && v.length > 0) {
                m.put(key, new String(v));
            }
        }
        String fromDefaults = keysFromDefaults(conf);
        if (!fromDefaults.isEmpty()) {
            m.put(KEYS_FROM_DEFAULTS, fromDefaults);
        } else {
            m.remove(KEYS_FROM_DEFAULTS);
        }
        m.putIfAbsent(REGION_RULE, regionRule(org.apache.hadoop.fs.s3a.S3AFileSystem.class.getClassLoader()));
        m.putIfAbsent(STREAM_RULE, streamRule(org.apache.hadoop.fs.s3a.S3AFileSystem.class.getClassLoader()));
        if (!m.containsKey(TRUSTED_CERTIFICATES)) {
            try {
                String pem = jvmTrustedCertificates();
                if (pem != null) {
                    m.put(TRUSTED_CERTIFICATES, pem);
                }
            } catch (IOException | GeneralSecurityException e) {
                // The JVM's own TLS fails the same way; stock S3A reports it in its terms.
                return new NativeSettings(null, "javax.net.ssl.trustStore (unreadable: " + e.getMessage() + ")");
            }
        }
        return new NativeSettings(m, null);
    }

    /**
     * The S3A keys whose value the core takes as the user's only when the user set them
     * ({@code fs.s3a.multipart.size}, {@code fs.s3a.fast.upload.active.blocks}: the core's own
     * defaults apply otherwise; the rule lives in the core's {@code config} module).
     */
    static final java.util.List<String> USER_SET_KEYS = java.util.List.of(
            "fs.s3a.multipart.size", "fs.s3a.fast.upload.active.blocks");

    /**
     * The keys of {@link #USER_SET_KEYS} whose value comes only from Hadoop's
     * {@code core-default.xml} ({@code Configuration.getPropertySources} names nothing else),
     * comma-separated and sorted, for {@code fs.s3a.native.keys.from.defaults}; a key set
     * anywhere else (core-site.xml, the job, programmatically, a per-bucket option) is not
     * listed. Empty when there is none.
     */
    static String keysFromDefaults(Configuration conf) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (String key : USER_SET_KEYS) {
            String[] sources = conf.getPropertySources(key);
            if (sources != null && sources.length > 0
                    && java.util.Arrays.stream(sources).allMatch("core-default.xml"::equals)) {
                out.add(key);
            }
        }
        return String.join(",", out);
    }

    /**
     * The region rule of the hadoop-aws on the classpath: {@code 3.4.2} when its Constants has
     * AWS_S3_CROSS_REGION_ACCESS_ENABLED (3.4.2 and later), {@code 3.4.1} when it has
     * AWS_S3_DEFAULT_REGION (SDK v2, 3.4.0 and 3.4.1), else {@code 3.3} (SDK v1).
     */
    static String regionRule(ClassLoader loader) {
        try {
            Class<?> constants = Class.forName(S3A_CONSTANTS, false, loader);
            if (hasField(constants, "AWS_S3_CROSS_REGION_ACCESS_ENABLED")) {
                return "3.4.2";
            }
            return hasField(constants, "AWS_S3_DEFAULT_REGION") ? "3.4.1" : "3.3";
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("hadoop-aws is not on the classpath", e);
        }
    }

    /**
     * The input-stream rule of the hadoop-aws on the classpath (the core's
     * {@code config::read::StreamRule}): {@code 3.4.1} when its Constants has no
     * INPUT_STREAM_TYPE (3.3.x to 3.4.1); else by the default StreamIntegration declares
     * ({@code DEFAULT_STREAM_TYPE}): {@code 3.4.2} for the classic stream (3.4.2),
     * {@code 3.4.3} for another (the analytics stream: 3.4.3, 3.5.x).
     */
    static String streamRule(ClassLoader loader) {
        try {
            Class<?> constants = Class.forName(S3A_CONSTANTS, false, loader);
            if (!hasField(constants, "INPUT_STREAM_TYPE")) {
                return "3.4.1";
            }
            Object type = Class.forName(STREAM_INTEGRATION, true, loader).getField("DEFAULT_STREAM_TYPE").get(null);
            return type instanceof Enum && ((Enum<?>) type).name().equalsIgnoreCase("classic") ? "3.4.2" : "3.4.3";
        } catch (ClassNotFoundException | NoSuchFieldException | IllegalAccessException e) {
            throw new IllegalStateException("cannot tell the input stream rule of the hadoop-aws on the classpath", e);
        }
    }

    private static boolean hasField(Class<?> c, String name) {
        try {
            c.getField(name);
            return true;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }

    /** The last truststore read: its identity and its certificates as PEM. */
    private static volatile Map.Entry<String, String> lastTrustStore;

    /**
     * The trusted certificates of {@code javax.net.ssl.trustStore} as a PEM bundle, or null when
     * the property is unset (the JVM then uses its own cacerts, and the native client its
     * built-in roots) or names no file (e.g. {@code NONE}). Read again when the file changes.
     */
    static String jvmTrustedCertificates() throws IOException, GeneralSecurityException {
        String path = System.getProperty("javax.net.ssl.trustStore");
        if (path == null || path.isEmpty() || !new File(path).isFile()) {
            return null;
        }
        String type = System.getProperty("javax.net.ssl.trustStoreType", KeyStore.getDefaultType());
        String password = System.getProperty("javax.net.ssl.trustStorePassword");
        File file = new File(path);
        String identity = path + "|" + type + "|" + file.lastModified() + "|" + file.length() + "|"
                + Objects.hashCode(password);
        Map.Entry<String, String> last = lastTrustStore;
        if (last != null && last.getKey().equals(identity)) {
            return last.getValue();
        }
        KeyStore ks = KeyStore.getInstance(type);
        try (InputStream in = Files.newInputStream(Paths.get(path))) {
            ks.load(in, password == null ? null : password.toCharArray());
        }
        StringBuilder pem = new StringBuilder();
        Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        for (String alias : Collections.list(ks.aliases())) {
            if (!ks.isCertificateEntry(alias)) {
                continue;
            }
            Certificate c = ks.getCertificate(alias);
            if (c instanceof X509Certificate) {
                pem.append("-----BEGIN CERTIFICATE-----\n").append(b64.encodeToString(c.getEncoded()))
                        .append("\n-----END CERTIFICATE-----\n");
            }
        }
        String out = pem.length() == 0 ? null : pem.toString();
        lastTrustStore = new java.util.AbstractMap.SimpleImmutableEntry<>(identity, out);
        return out;
    }

    private static final String[] ENCRYPTION_KEYS = {"fs.s3a.encryption.key", "fs.s3a.server-side-encryption.key"};

    private static char[] password(Configuration conf, String key) {
        try {
            return conf.getPassword(key);
        } catch (java.io.IOException e) {
            return null; // S3A itself reports an unreadable credential store
        }
    }

    static NativeSettings fallback(String setting) {
        return new NativeSettings(null, setting);
    }
}
