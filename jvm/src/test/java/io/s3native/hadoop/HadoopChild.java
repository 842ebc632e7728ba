package io.s3native.hadoop;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;

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
                        org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path("s3a://" + bucket + "/fs/" + instance + "-" + file);
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
                    try (FSDataOutputStream out = fs.create(new org.apache.hadoop.fs.Path("s3a://" + bucket + "/sync/" + i))) {
                        out.write(i);
                        out.hflush();
                        out.hsync();
                    }
                }
                System.out.println("RESULT syncable done");
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    /** Run this class in a child JVM with {@code jvmOptions}; returns its output (stdout and stderr). */
    static String run(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        return runWithClasspath(List.of(), jvmOptions, args);
    }

    /** {@link #run} with {@code classpathFirst} ahead of this JVM's class path. */
    static String runWithClasspath(List<String> classpathFirst, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.add("-Xmx256m");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        List<String> cp = new ArrayList<>(classpathFirst);
        cp.add(System.getProperty("java.class.path"));
        cmd.add(String.join(File.pathSeparator, cp));
        cmd.add(HadoopChild.class.getName());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("child JVM " + String.join(" ", args) + " did not finish; output: " + out);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("child JVM " + String.join(" ", args) + " exited " + p.exitValue() + "; output: " + out);
        }
        return out;
    }
}
