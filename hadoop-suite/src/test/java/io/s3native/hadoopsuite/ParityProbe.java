package io.s3native.hadoopsuite;

import io.s3native.hadoop.NativeS3AFileSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * A JUnit Platform listener (META-INF/services; it sees JUnit 4 tests through the vintage
 * engine and JUnit 5 ones alike) for the native run: when a test class ends it writes
 * {@code <s3native.suite.proof.dir>/<class>.properties} with what the class's filesystems
 * did: how many {@link ObservedNativeS3AFileSystem} instances were initialized, their classes,
 * their native and stock create and open counts and fallback settings, what instances in other JVMs
 * (MiniYARN's) logged, and the native creates of each test. scripts/hadoop-suite.py fails a class whose native run has no such file, no instance
 * or no native create, so a configuration slip cannot make the parity table pass vacuously.
 * In the stock run ({@code s3native.suite.mode=stock}) it does nothing.
 */
public class ParityProbe implements TestExecutionListener {
    private final boolean active = "native".equals(System.getProperty("s3native.suite.mode"));
    // JVM-wide: surefire's rerun of failed tests (hadoop-suite/pom.xml's rerunFailingTestsCount)
    // runs the class again in the same JVM, perhaps through another listener instance; the class
    // keeps the start of its first run, so the record written at the rerun's end covers both.
    private static final Map<String, Integer> depth = new ConcurrentHashMap<>();
    private static final Map<String, int[]> startIndex = new ConcurrentHashMap<>();
    private static final Map<String, Long> startCreates = new ConcurrentHashMap<>();
    private static final Map<String, Long> startRemote = new ConcurrentHashMap<>();
    private static final Map<String, Map<String, Long>> perTest = new ConcurrentHashMap<>();
    private static final Map<String, Long> testStart = new ConcurrentHashMap<>();

    private static long nativeCreates(int from) {
        long n = 0;
        var all = ObservedNativeS3AFileSystem.INSTANCES;
        for (int i = from; i < all.size(); i++) {
            n += all.get(i).getNativeCreateCount();
        }
        return n;
    }

    /** Native creates so far by every instance (closed ones keep their counts). */
    private static long nativeCreates() {
        return nativeCreates(0);
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (!active) {
            return;
        }
        Optional<TestSource> source = id.getSource();
        if (source.isPresent() && source.get() instanceof ClassSource) {
            String cls = ((ClassSource) source.get()).getClassName();
            if (depth.merge(cls, 1, Integer::sum) == 1 && !startIndex.containsKey(cls)) {
                startIndex.put(cls, new int[] {ObservedNativeS3AFileSystem.INSTANCES.size()});
                startCreates.put(cls, nativeCreates());
                startRemote.put(cls, remoteLogLength());
                perTest.put(cls, new ConcurrentHashMap<>());
            }
        } else if (id.isTest()) {
            testStart.put(id.getUniqueId(), nativeCreates());
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!active) {
            return;
        }
        Optional<TestSource> source = id.getSource();
        if (source.isPresent() && source.get() instanceof ClassSource) {
            String cls = ((ClassSource) source.get()).getClassName();
            if (depth.merge(cls, -1, Integer::sum) == 0) {
                write(cls);
            }
        } else if (id.isTest() && source.isPresent() && source.get() instanceof MethodSource) {
            MethodSource m = (MethodSource) source.get();
            Long before = testStart.remove(id.getUniqueId());
            Map<String, Long> tests = perTest.get(m.getClassName());
            if (before != null && tests != null) {
                tests.merge(id.getDisplayName(), nativeCreates() - before, Long::sum);
            }
        }
    }

    private static Path remoteLog() {
        return Paths.get(System.getProperty(ObservedNativeS3AFileSystem.PROOF_DIR, "."), ObservedNativeS3AFileSystem.REMOTE_LOG);
    }

    private static long remoteLogLength() {
        try {
            return Files.exists(remoteLog()) ? Files.size(remoteLog()) : 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Native creates, instances and stock creates that other JVMs logged since {@code from}. */
    private static long[] remoteCounts(long from) {
        long[] n = new long[3];
        try {
            if (!Files.exists(remoteLog())) {
                return n;
            }
            byte[] all = Files.readAllBytes(remoteLog());
            String text = new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from), StandardCharsets.UTF_8);
            for (String line : text.split("\n")) {
                String[] f = line.trim().split(" ");
                if (f.length == 3) {
                    n[0] += Long.parseLong(f[1]);
                    n[1]++;
                    n[2] += Long.parseLong(f[2]);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }

    private void write(String cls) {
        var all = ObservedNativeS3AFileSystem.INSTANCES;
        int from = startIndex.get(cls)[0];
        long stock = 0;
        long nativeOpens = 0;
        long stockOpens = 0;
        TreeSet<String> classes = new TreeSet<>();
        TreeSet<String> fallbacks = new TreeSet<>();
        for (int i = from; i < all.size(); i++) {
            NativeS3AFileSystem fs = all.get(i);
            stock += fs.getStockCreateCount();
            nativeOpens += fs.getNativeOpenCount();
            stockOpens += fs.getStockOpenCount();
            classes.add(fs.getClass().getName() + " (a " + NativeS3AFileSystem.class.getName() + ": "
                    + (fs instanceof NativeS3AFileSystem) + ")");
            if (fs.getFallbackSetting() != null) {
                fallbacks.add(fs.getFallbackSetting());
            }
        }
        StringBuilder out = new StringBuilder();
        out.append("class=").append(cls).append('\n');
        out.append("instances=").append(all.size() - from).append('\n');
        out.append("filesystem.classes=").append(String.join(", ", classes)).append('\n');
        out.append("native.creates=").append(nativeCreates() - startCreates.get(cls)).append('\n');
        out.append("stock.creates=").append(stock).append('\n');
        out.append("native.opens=").append(nativeOpens).append('\n');
        out.append("stock.opens=").append(stockOpens).append('\n');
        out.append("fallback.settings=").append(String.join(", ", fallbacks)).append('\n');
        long[] remote = remoteCounts(startRemote.get(cls));
        out.append("remote.instances=").append(remote[1]).append('\n');
        out.append("remote.native.creates=").append(remote[0]).append('\n');
        out.append("remote.stock.creates=").append(remote[2]).append('\n');
        new TreeMap<>(perTest.getOrDefault(cls, Map.of())).forEach((test, n) ->
                out.append("test.").append(test.replace('=', '_').replace(':', '_').replace(' ', '_')).append('=').append(n).append('\n'));
        String dir = System.getProperty("s3native.suite.proof.dir");
        if (dir == null) {
            throw new IllegalStateException("s3native.suite.proof.dir is not set");
        }
        try {
            Path d = Paths.get(dir);
            Files.createDirectories(d);
            Files.write(d.resolve(cls + ".properties"), out.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
