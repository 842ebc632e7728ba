package io.s3native.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU seconds (user + system) per thread name of this process, read from /proc/self/task, for
 * the bench workers' {@code thread_cpu_seconds}: where the timed part's CPU went. Names drop
 * their trailing digits, so "GC Thread#0" and "GC Thread#1" add up as "GC Thread#". A thread
 * that ended between two snapshots loses its CPU from the difference.
 */
final class ThreadCpu {
    private final Map<String, Double> start;

    private ThreadCpu(Map<String, Double> start) {
        this.start = start;
    }

    /** A snapshot of every live thread's CPU so far. */
    static ThreadCpu start() throws IOException {
        return new ThreadCpu(read());
    }

    /** CPU seconds of each thread name since {@link #start}, names below 5 ms left out. */
    Map<String, Double> since() throws IOException {
        Map<String, Double> by = read();
        start.forEach((k, v) -> by.merge(k, -v, Double::sum));
        by.values().removeIf(v -> v < 0.005);
        return new TreeMap<>(by);
    }

    private static Map<String, Double> read() throws IOException {
        Map<String, Double> by = new HashMap<>();
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException gone) {
                    continue; // the thread ended between the listing and the read
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+$", "");
                // Fields after the name's closing parenthesis: utime and stime are the 12th and 13th.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                by.merge(name, (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0, Double::sum); // USER_HZ
            }
        }
        return by;
    }
}
