package io.s3native.hadoop;

import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;

/**
 * The native settings of one filesystem: its effective configuration (S3A has already copied
 * the {@code fs.s3a.bucket.<bucket>.*} overrides over {@code fs.s3a.*}) without the
 * credential keys, or the setting that sends writes to stock S3A. Credentials never go into
 * the map: the native writer asks the filesystem's own S3A provider chain for them
 * ({@link NativeS3AFileSystem}, {@code shareCredentials}), so every provider S3A accepts works
 * natively, in S3A's order, with S3A's per-bucket options.
 */
final class NativeSettings {
    static final String ACCESS_KEY = "fs.s3a.access.key";
    static final String SECRET_KEY = "fs.s3a.secret.key";
    static final String SESSION_TOKEN = "fs.s3a.session.token";
    static final String CREDENTIALS_PROVIDER = "fs.s3a.aws.credentials.provider";

    /** Anonymous credentials sign nothing; the native client always signs, so such files go to stock S3A. */
    private static final String ANONYMOUS = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider";

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
            if (p.equals(ANONYMOUS)) {
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
        return new NativeSettings(m, null);
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
