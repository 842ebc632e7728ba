package io.s3native.hadoop;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

import io.s3native.S3NativeOutputStream;
import io.s3native.UnsupportedSettingException;

/**
 * The child JVM of the Hadoop tests that need a process of their own (a library that cannot
 * load, process-wide log-once rules). Prints {@code RESULT ...} lines; the log goes to
 * standard output too (log4j.properties), so the parent reads both.
 * <pre>
 *   direct BUCKET          open S3NativeOutputStream three times, print what each threw
 *   fs BUCKET [fail]       two NativeS3AFileSystem instances, two files each; print the route
 *   syncable BUCKET        three streams, hflush and hsync on each (downgraded)
 *   credentials BUCKET MARKER DIR
 *                          with the S3A settings in DIR/settings.properties (the credential
 *                          chain under test; a file, so no test secret is on the command line) and no
 *                          keys of HadoopS3's: a multipart file and a magic committer job with
 *                          one file, first through NativeS3AFileSystem (fallback=fail), then
 *                          through stock S3A, under MARKER/native and MARKER/stock; copies each
 *                          .pending and _SUCCESS file, as stored, into DIR, and writes there
 *                          the credentials each filesystem's chain holds at the end
 * </pre>
 */
public final class HadoopChild {
    private HadoopChild() {
    }

    public static void main(String[] args) throws Exception {
        String bucket = args[1];
        switch (args[0]) {
            case "direct": {
                for (int i = 0; i < 3; i++) {
                    try {
                        new S3NativeOutputStream(bucket, "direct-" + i, S3NativeOutputStream.Mode.PUBLISH, Map.of()).close();
                        System.out.println("RESULT use " + i + " OPENED");
                    } catch (Throwable t) {
                        System.out.println("RESULT use " + i + " " + t.getClass().getName() + ": " + t.getMessage());
                    }
                }
                break;
            }
            case "fs": {
                boolean fail = args.length > 2 && args[2].equals("fail");
                for (int instance = 0; instance < 2; instance++) {
                    Configuration conf = HadoopS3.conf(true);
                    if (fail) {
                        conf.set("fs.s3a.native.fallback", "fail");
                    }
                    NativeS3AFileSystem fs = (NativeS3AFileSystem) HadoopS3.fs(bucket, conf);
                    for (int file = 0; file < 2; file++) {
                        Path p = new Path("s3a://" + bucket + "/fs/" + instance + "-" + file);
                        try (FSDataOutputStream out = fs.create(p)) {
                            out.write(new byte[] {1, 2, 3});
                            System.out.println("RESULT create " + instance + "-" + file + " "
                                    + (out.getWrappedStream() instanceof NativeS3AOutputStream ? "native" : "stock"));
                        } catch (UnsupportedSettingException e) {
                            System.out.println("RESULT create " + instance + "-" + file + " refused: " + e.getMessage());
                        }
                    }
                    System.out.println("RESULT counts " + instance + " native=" + fs.getNativeCreateCount() + " stock="
                            + fs.getStockCreateCount());
                    fs.close();
                }
                break;
            }
            case "syncable": {
                FileSystem fs = HadoopS3.fs(bucket, HadoopS3.conf(true));
                for (int i = 0; i < 3; i++) {
                    try (FSDataOutputStream out = fs.create(new Path("s3a://" + bucket + "/sync/" + i))) {
                        out.write(i);
                        out.hflush();
                        out.hsync();
                    }
                }
                System.out.println("RESULT syncable done");
                break;
            }
            case "credentials": {
                java.nio.file.Path dir = Paths.get(args[3]);
                java.util.Properties props = new java.util.Properties();
                try (java.io.Reader r = java.nio.file.Files.newBufferedReader(dir.resolve("settings.properties"))) {
                    props.load(r);
                }
                Map<String, String> settings = new LinkedHashMap<>();
                props.stringPropertyNames().forEach(k -> settings.put(k, props.getProperty(k)));
                List<FileSystem> open = new ArrayList<>();
                try {
                    for (String mode : List.of("native", "stock")) {
                        open.add(credentialWrites(mode, bucket, args[2], settings, dir));
                    }
                } finally {
                    for (FileSystem fs : open) {
                        fs.close();
                    }
                }
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    /**
     * The value of the environment variable {@code name}, which scripts/s3-server.sh exports
     * when it could start that endpoint. Unset, the test is skipped, unless CI is set: there
     * make test must have started it, and the test fails. {@code hint}: how to get it locally.
     */
    static String requiredEnv(String name, String hint) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (System.getenv("CI") != null) {
                org.junit.jupiter.api.Assertions.fail(name
                        + " is not set: make test starts the credential endpoints (scripts/s3-server.sh)");
            }
            org.junit.jupiter.api.Assumptions.abort(name + " is not set (" + hint + ")");
        }
        return v;
    }

    /** The size of the files {@code credentials} writes: two 5 MiB parts. */
    static final int CREDENTIALS_FILE_SIZE = 6 * 1024 * 1024 + 123;

    /**
     * The writes of {@code credentials} for one filesystem ({@code mode} native or stock),
     * left open (S3A closes its chain with the filesystem: both stay open until the end, so
     * a provider shared between instances is not closed under the other one). Prints
     * {@code RESULT MODE plain stream=native|stock bytes=N} (the stream's own statistics) and,
     * natively, {@code RESULT native creates native=N stock=N fallback=SETTING}.
     */
    private static FileSystem credentialWrites(String mode, String bucket, String marker, Map<String, String> settings,
            java.nio.file.Path dir) throws Exception {
        boolean nativeFs = mode.equals("native");
        Configuration conf = HadoopS3.conf(nativeFs);
        conf.unset("fs.s3a.access.key");
        conf.unset("fs.s3a.secret.key");
        conf.unset("fs.s3a.aws.credentials.provider");
        settings.forEach(conf::set);
        if (nativeFs) {
            conf.set("fs.s3a.native.fallback", "fail");
        }
        conf.set("fs.s3a.committer.name", "magic");
        conf.set("fs.s3a.committer.uuid", UUID.randomUUID().toString());
        conf.set("mapreduce.job.id", "job_202412010001_0011");
        FileSystem fs = HadoopS3.fs(bucket, conf);
        String base = "s3a://" + bucket + "/" + marker + "/" + mode;

        Path plain = new Path(base + "/plain");
        FSDataOutputStream out = fs.create(plain);
        out.write(HadoopS3.data(CREDENTIALS_FILE_SIZE, 11));
        out.close();
        Long bytes = ((IOStatisticsSource) out.getWrappedStream()).getIOStatistics()
                .counters().get("stream_write_bytes");
        System.out.println("RESULT " + mode + " plain stream="
                + (out.getWrappedStream() instanceof NativeS3AOutputStream ? "native" : "stock") + " bytes=" + bytes);

        Path dest = new Path(base + "/table");
        JobID jobId = JobID.forName("job_202412010001_0011");
        JobContext job = new JobContextImpl(conf, jobId);
        TaskAttemptContext task = new TaskAttemptContextImpl(
                conf, new TaskAttemptID(jobId.getJtIdentifier(), jobId.getId(),
                        TaskType.MAP, 0, 0));
        MagicS3GuardCommitter jobCommitter =
                new MagicS3GuardCommitter(dest, task);
        jobCommitter.setupJob(job);
        MagicS3GuardCommitter taskCommitter =
                new MagicS3GuardCommitter(dest, task);
        taskCommitter.setupTask(task);
        Path file = new Path(taskCommitter.getWorkPath(), "part-00000");
        try (FSDataOutputStream magic = fs.create(file)) {
            magic.write(HadoopS3.data(CREDENTIALS_FILE_SIZE, 12));
        }
        java.nio.file.Files.write(dir.resolve(mode + ".pending"),
                HadoopS3.read(fs, new Path(file.getParent(), file.getName() + ".pending")));
        taskCommitter.commitTask(task);
        jobCommitter.commitJob(job);
        java.nio.file.Files.write(dir.resolve(mode + "._SUCCESS"),
                HadoopS3.read(fs, new Path(dest, "_SUCCESS")));
        writeCredentials(fs, dir.resolve(mode + ".credentials"));
        if (nativeFs) {
            NativeS3AFileSystem n = (NativeS3AFileSystem) fs;
            System.out.println("RESULT native creates native=" + n.getNativeCreateCount() + " stock="
                    + n.getStockCreateCount() + " fallback=" + n.getFallbackSetting());
        }
        return fs;
    }

    /**
     * The credentials {@code fs}'s own S3A chain holds now (its {@code shareCredentials}: SDK
     * v1's getCredentials on 3.3, v2's resolveCredentials on 3.4+), as three lines (key id,
     * secret, session token or an empty line) in {@code file}, for the parent to look for in what it checks;
     * never printed.
     */
    private static void writeCredentials(FileSystem fs, java.nio.file.Path file) throws Exception {
        try (AutoCloseable chain = ((org.apache.hadoop.fs.s3a.S3AFileSystem) fs).shareCredentials("test")) {
            List<String> lines = new ArrayList<>();
            java.lang.reflect.Method v2 = method(chain, "resolveCredentials");
            if (v2 != null) {
                Object c = v2.invoke(chain);
                lines.add((String) method(c, "accessKeyId").invoke(c));
                lines.add((String) method(c, "secretAccessKey").invoke(c));
                lines.add(call(c, "sessionToken"));
            } else {
                Object c = method(chain, "getCredentials").invoke(chain);
                lines.add((String) method(c, "getAWSAccessKeyId").invoke(c));
                lines.add((String) method(c, "getAWSSecretKey").invoke(c));
                lines.add(call(c, "getSessionToken"));
            }
            java.nio.file.Files.write(file, lines);
        }
    }

    /** {@code o.name()}, or "" when {@code o} has no such method (basic credentials have no token). */
    private static String call(Object o, String name) throws Exception {
        java.lang.reflect.Method m = method(o, name);
        return m == null ? "" : (String) m.invoke(o);
    }

    /** The public method {@code name()} of {@code o}'s class, callable through a public type; null if none. */
    private static java.lang.reflect.Method method(Object o, String name) {
        for (Class<?> c = o.getClass(); c != null; c = c.getSuperclass()) {
            for (Class<?> type : withInterfaces(c)) {
                if (java.lang.reflect.Modifier.isPublic(type.getModifiers())) {
                    try {
                        return type.getMethod(name);
                    } catch (NoSuchMethodException e) {
                        // try the next
                    }
                }
            }
        }
        return null;
    }

    private static List<Class<?>> withInterfaces(Class<?> c) {
        List<Class<?>> out = new ArrayList<>();
        out.add(c);
        out.addAll(List.of(c.getInterfaces()));
        return out;
    }

    /** Run this class in a child JVM with {@code jvmOptions}; returns its output (stdout and stderr). */
    static String run(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        return runWithClasspath(List.of(), jvmOptions, args);
    }

    /** {@link #run} with {@code classpathFirst} ahead of this JVM's class path. */
    static String runWithClasspath(List<String> classpathFirst, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        return launch(classpathFirst, jvmOptions, env -> { }, HadoopChild.class, List.of(args));
    }

    /** The environment variables through which the AWS SDKs and object_store find credentials. */
    private static final List<String> CREDENTIAL_VARIABLES = List.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
            "AWS_ROLE_SESSION_NAME", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_ENDPOINT_URL_STS",
            "AWS_STS_REGIONAL_ENDPOINTS");

    /**
     * Run {@code main} in a child JVM whose environment holds no AWS credentials (no keys, no
     * profile, web identity or container variables; the config and credentials files point
     * nowhere), whose instance metadata endpoint is {@code metadataEndpoint} (for both SDKs and
     * object_store: the local emulator, or a local server that answers 404), and then
     * {@code extraEnv}. Returns its output (stdout and stderr); fails unless it exits 0.
     */
    static String runWithCredentialEnvironment(Class<?> main, String metadataEndpoint, List<String> jvmOptions,
            Map<String, String> extraEnv, String... args) throws IOException, InterruptedException {
        List<String> options = new ArrayList<>();
        if (System.getProperty("s3native.library.path") != null) {
            options.add("-Ds3native.library.path=" + System.getProperty("s3native.library.path"));
        }
        options.add("-Daws.ec2MetadataServiceEndpoint=" + metadataEndpoint);
        options.addAll(jvmOptions);
        return launch(List.of(), options, env -> {
            CREDENTIAL_VARIABLES.forEach(env::remove);
            env.put("AWS_EC2_METADATA_SERVICE_ENDPOINT", metadataEndpoint);
            // object_store's own chain must not find these keys: the native writer has to take
            // them from S3A's chain, so its metadata endpoint is a closed loopback port.
            env.put("AWS_METADATA_ENDPOINT", "http://127.0.0.1:9");
            env.put("AWS_EC2_METADATA_DISABLED", "false");
            env.put("AWS_CONFIG_FILE", "/nonexistent/s3native-test-config");
            env.put("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/s3native-test-credentials");
            env.putAll(extraEnv);
        }, main, List.of(args));
    }

    private static String launch(List<String> classpathFirst, List<String> jvmOptions,
            Consumer<Map<String, String>> environment, Class<?> main, List<String> args)
            throws IOException, InterruptedException {
        java.nio.file.Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.add("-Xmx256m");
        // A child lives for seconds: C1 alone and the serial collector, so that no C2 or GC
        // threads compete with the tests for the cores (-15% for StsCredentialsTest's child).
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:+UseSerialGC");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        List<String> cp = new ArrayList<>(classpathFirst);
        cp.add(System.getProperty("java.class.path"));
        cmd.add(String.join(File.pathSeparator, cp));
        cmd.add(main.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        environment.accept(pb.environment());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String what = main.getSimpleName() + " " + String.join(" ", args);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child JVM " + what + " did not finish; output: " + out);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("child JVM " + what + " exited " + p.exitValue() + "; output: " + out);
        }
        return out;
    }
}
