package io.s3native.bench;

import java.io.IOException;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import io.s3native.S3NativeOutputStream;

/**
 * Cost of one write call through the Java stream into the native part buffer, for 1 B,
 * 64 B, 8 KiB and 1 MiB arrays (write(int): {@link WriteIntBenchmark}). The part size is 2 GiB and each iteration
 * uses a fresh stream that is aborted at its end, so no part is uploaded: this measures the
 * JNI call and the copy, not S3.
 *
 * <p>Run: {@code make bench-jvm} (needs the local S3 server's environment for the settings,
 * although no request is sent).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 5, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgs = {"-Xmx1g"})
public class WriteCallBenchmark {
    @Param({"1", "64", "8192", "1048576"})
    public int size;

    private byte[] data;
    private S3NativeOutputStream out;

    static Map<String, String> settings() {
        Map<String, String> s = new HashMap<>();
        String endpoint = System.getenv("S3NATIVE_TEST_ENDPOINT");
        s.put("fs.s3a.endpoint", endpoint == null ? "http://127.0.0.1:9" : endpoint);
        s.put("fs.s3a.path.style.access", "true");
        s.put("fs.s3a.access.key", System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "testing"));
        s.put("fs.s3a.secret.key", System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "testing"));
        s.put("fs.s3a.endpoint.region", System.getenv().getOrDefault("AWS_REGION", "us-east-1"));
        return s;
    }

    @Setup(Level.Trial)
    public void data() {
        data = new byte[size];
        new java.util.Random(1).nextBytes(data);
    }

    @Setup(Level.Iteration)
    public void open() throws IOException {
        Map<String, String> s = settings();
        s.put("fs.s3a.multipart.size", "2G");
        s.put("fs.s3a.native.memory.budget", "3G");
        out = new S3NativeOutputStream("bench-never-created", "calls", S3NativeOutputStream.Mode.PUBLISH, s);
    }

    @TearDown(Level.Iteration)
    public void abort() throws IOException {
        out.abort(); // no upload was created: nothing is sent
    }

    @Benchmark
    public void writeArray() throws IOException {
        out.write(data, 0, size);
    }
}
