package io.s3native.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU seconds (user + system) and minor page faults per thread name of this process, read from
 * /proc/self/task, for the bench workers' {@code thread_cpu_seconds} and {@code
 * thread_minor_faults}: where the timed part's CPU went. Names drop their trailing digits, so
 * "GC Thread#0" and "GC Thread#1" add up as "GC Thread#". A thread that ended between two
 * snapshots loses its share from the difference.
 */
final class ThreadCpu {
    /** Per name: {CPU ticks (USER_HZ), minor faults}. */
    private final Map<String, long[]> start;

    private ThreadCpu(Map<String, long[]> start) {
        this.start = start;
    }

    /** A snapshot of every live thread's CPU and faults so far. */
    static ThreadCpu start() throws IOException {
        return new ThreadCpu(read());
    }

    /** CPU seconds of each thread name since {@link #start}, names without one 10 ms tick of CPU left out. */
    Map<String, Double> since() throws IOException {
        return use().cpuSeconds();
    }

    /** Per thread name since {@link #start}: CPU seconds and minor page faults. */
    record Use(Map<String, Double> cpuSeconds, Map<String, Long> minorFaults) {}

    /** Both figures of each name since {@link #start}, read in one pass, names without one 10 ms tick of CPU left out. */
    Use use() throws IOException {
        Use u = new Use(new TreeMap<>(), new TreeMap<>());
        grown(read()).forEach((k, v) -> {
            u.cpuSeconds().put(k, v[0] / 100.0); // USER_HZ
            u.minorFaults().put(k, v[1]);
        });
        return u;
    }

    private Map<String, long[]> grown(Map<String, long[]> now) {
        start.forEach((k, v) -> now.computeIfPresent(k, (n, w) -> new long[] {w[0] - v[0], w[1] - v[1]}));
        now.values().removeIf(v -> v[0] < 1); // not one tick (10 ms) of CPU
        return now;
    }

    private static Map<String, long[]> read() throws IOException {
        Map<String, long[]> by = new HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException gone) {
                    continue; // the thread ended between the listing and the read
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+$", "");
                // Fields after the name's closing parenthesis: minflt is the 8th, utime and stime the 12th and 13th.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long[] used = {Long.parseLong(f[11]) + Long.parseLong(f[12]), Long.parseLong(f[7])};
                by.merge(name, used, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
            }
        }
        return by;
    }
}
