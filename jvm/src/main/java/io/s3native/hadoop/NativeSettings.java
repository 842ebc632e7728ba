package io.s3native.hadoop;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;

/**
 * The native settings of one filesystem: its effective configuration (S3A has already copied
 * the {@code fs.s3a.bucket.<bucket>.*} overrides over {@code fs.s3a.*}) and the credentials
 * S3A's provider chain would pick, or the setting that sends writes to stock S3A.
 */
final class NativeSettings {
    static final String ACCESS_KEY = "fs.s3a.access.key";
    static final String SECRET_KEY = "fs.s3a.secret.key";
    static final String SESSION_TOKEN = "fs.s3a.session.token";
    static final String CREDENTIALS_PROVIDER = "fs.s3a.aws.credentials.provider";

    private static final String SIMPLE = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider";
    private static final String TEMPORARY = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider";
    private static final List<String> ENVIRONMENT = Arrays.asList(
            "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
            "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider");
    /** S3A's chain when fs.s3a.aws.credentials.provider is unset (the last one is instance metadata). */
    private static final List<String> DEFAULT_CHAIN = Arrays.asList(TEMPORARY, SIMPLE, ENVIRONMENT.get(0),
            "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider");

    /** The map handed to native code; null when {@link #fallback} is set. */
    final Map<String, String> map;
    /** The setting that keeps writes on stock S3A, or null. */
    final String fallback;

    private NativeSettings(Map<String, String> map, String fallback) {
        this.map = map;
        this.fallback = fallback;
    }

    static NativeSettings from(Configuration conf, Map<String, String> env) throws IOException {
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
        String[] chain = conf.getTrimmedStrings(CREDENTIALS_PROVIDER);
        List<String> providers = chain.length == 0 ? DEFAULT_CHAIN : Arrays.asList(chain);
        for (String p : providers) {
            if (p.equals(SIMPLE) || p.equals(TEMPORARY)) {
                String a = password(conf, ACCESS_KEY);
                String s = password(conf, SECRET_KEY);
                String t = password(conf, SESSION_TOKEN);
                if (a == null || s == null || (p.equals(TEMPORARY) && t == null)) {
                    continue; // the provider raises "no credentials": S3A's chain goes on
                }
                m.put(ACCESS_KEY, a);
                m.put(SECRET_KEY, s);
                if (p.equals(TEMPORARY)) {
                    m.put(SESSION_TOKEN, t);
                }
                return new NativeSettings(m, null);
            } else if (ENVIRONMENT.contains(p)) {
                String a = nonEmpty(env.get("AWS_ACCESS_KEY_ID"));
                String s = nonEmpty(env.get("AWS_SECRET_ACCESS_KEY"));
                if (a == null || s == null) {
                    continue;
                }
                m.put(ACCESS_KEY, a);
                m.put(SECRET_KEY, s);
                String t = nonEmpty(env.get("AWS_SESSION_TOKEN"));
                if (t != null) {
                    m.put(SESSION_TOKEN, t);
                }
                return new NativeSettings(m, null);
            } else {
                // No JVM credential callback yet: any other provider stays with stock S3A.
                return new NativeSettings(null, CREDENTIALS_PROVIDER + " (" + p + ")");
            }
        }
        return new NativeSettings(null, CREDENTIALS_PROVIDER + " (no provider in the chain has credentials)");
    }

    static NativeSettings fallback(String setting) {
        return new NativeSettings(null, setting);
    }

    /** Like S3A's lookup: Hadoop credential providers first, then the configuration value. */
    private static String password(Configuration conf, String key) throws IOException {
        char[] v = conf.getPassword(key);
        return v == null ? null : nonEmpty(new String(v).trim());
    }

    private static String nonEmpty(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
