package io.s3native;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * 1 GiB uploaded through the Java stream (1 MiB write calls) versus the same upload through
 * the Rust API alone (NativeHooks.benchRustUpload: Writer::write of a Rust buffer, no JNI per call),
 * in the same JVM against the same server. Wall time per upload is JMH's score; the process
 * CPU time per upload is printed at the end of each trial ("cpu per upload").
 *
 * <p>Run: {@code make bench-jvm} (starts a fast local S3 server, s3s-fs on tmpfs).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 8)
@Fork(value = 1, jvmArgs = {"-Xmx1g"})
public class UploadThroughputBenchmark {
    static final long TOTAL = 1L << 30;
    static final int CHUNK = 1 << 20;

    private Map<String, String> settings;
    private String bucket;
    private byte[] chunk;
    private long cpuNanos;
    private int uploads;

    @Setup(Level.Trial)
    public void setup() {
        settings = new HashMap<>();
        settings.put("fs.s3a.endpoint", env("S3NATIVE_TEST_ENDPOINT", "http://127.0.0.1:9000"));
        settings.put("fs.s3a.path.style.access", "true");
        settings.put("fs.s3a.access.key", env("S3NATIVE_TEST_ACCESS_KEY", env("AWS_ACCESS_KEY_ID", "testing")));
        settings.put("fs.s3a.secret.key", env("S3NATIVE_TEST_SECRET_KEY", env("AWS_SECRET_ACCESS_KEY", "testing")));
        settings.put("fs.s3a.endpoint.region", env("AWS_REGION", "us-east-1"));
        settings.put("fs.s3a.multipart.size", "16M");
        bucket = env("S3NATIVE_TEST_BUCKET", "s3native-bench");
        chunk = new byte[CHUNK];
        for (int i = 0; i < CHUNK; i++) {
            chunk[i] = (byte) (i * 31 % 251);
        }
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    private static long processCpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    @Setup(Level.Invocation)
    public void startCpu() {
        cpuNanos -= processCpu();
    }

    @TearDown(Level.Invocation)
    public void stopCpu() {
        cpuNanos += processCpu();
        uploads++;
    }

    @TearDown(Level.Trial)
    public void report() {
        System.out.printf("%ncpu per upload: %.1f ms over %d uploads (warmup included)%n", cpuNanos / 1e6 / uploads, uploads);
    }

    @Benchmark
    public long javaStream() throws IOException {
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "throughput-java", S3NativeOutputStream.Mode.PUBLISH, settings)) {
            for (long done = 0; done < TOTAL; done += CHUNK) {
                out.write(chunk, 0, CHUNK);
            }
            return out.closeAndGetResult().getLength();
        }
    }

    @Benchmark
    public long rustApi() throws IOException {
        Native.init();
        return NativeHooks.benchRustUpload(bucket, "throughput-rust", S3NativeOutputStream.toArray(settings), TOTAL, CHUNK);
    }
}
