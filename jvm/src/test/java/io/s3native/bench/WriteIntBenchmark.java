package io.s3native.bench;

import java.io.IOException;
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

import io.s3native.S3NativeOutputStream;

/** Cost of write(int): a byte into the stream's small Java buffer, one JNI call per 1 KiB. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 5, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgs = {"-Xmx1g"})
public class WriteIntBenchmark {
    private S3NativeOutputStream out;

    @Setup(Level.Iteration)
    public void open() throws IOException {
        Map<String, String> s = WriteCallBenchmark.settings();
        s.put("fs.s3a.multipart.size", "2G");
        s.put("fs.s3a.native.memory.budget", "3G");
        out = new S3NativeOutputStream("bench-never-created", "bytes", S3NativeOutputStream.Mode.PUBLISH, s);
    }

    @TearDown(Level.Iteration)
    public void abort() throws IOException {
        out.abort();
    }

    @Benchmark
    public void writeInt() throws IOException {
        out.write(42);
    }
}
