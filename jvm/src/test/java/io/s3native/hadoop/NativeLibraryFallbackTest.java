package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.s3native.NativeLibrary;

/**
 * A native library that cannot load (here: -Ds3native.library.path names a file that is not
 * an ELF library, as a wrong architecture, a wrong glibc or a noexec temporary directory
 * would fail), in child JVMs: S3NativeOutputStream throws the same clear IOException on every
 * use; NativeS3AFileSystem writes through stock S3A with one WARN per filesystem naming the
 * load error and the bucket, or refuses at create with fs.s3a.native.fallback=fail. And with
 * a library that loads: one INFO line per filesystem instance with the write figures.
 */
class NativeLibraryFallbackTest {
    private static List<String> badLibrary() throws Exception {
        File bogus = File.createTempFile("libs3native-not-elf", ".so");
        bogus.deleteOnExit();
        Files.writeString(bogus.toPath(), "this is not a shared library\n");
        return List.of("-D" + NativeLibrary.PATH_PROPERTY + "=" + bogus.getAbsolutePath());
    }

    private static List<String> lines(String out, String contains) {
        return out.lines().filter(l -> l.contains(contains)).collect(Collectors.toList());
    }

    @Test
    void theStreamThrowsTheSameClearIOExceptionOnEveryUse() throws Exception {
        List<String> opts = badLibrary();
        String out = HadoopChild.run(opts, "direct", "no-such-bucket");
        List<String> uses = lines(out, "RESULT use ");
        assertEquals(3, uses.size(), out);
        String first = uses.get(0).substring("RESULT use 0 ".length());
        assertTrue(first.startsWith("java.io.IOException: s3native: cannot load the native library for platform "
                + NativeLibrary.platform()), out);
        assertTrue(first.contains(opts.get(0).substring(opts.get(0).indexOf('=') + 1)), "names the file tried: " + out);
        for (int i = 1; i < 3; i++) {
            assertEquals(first, uses.get(i).substring(("RESULT use " + i + " ").length()), "use " + i + ": " + out);
        }
        assertTrue(lines(out, "Error").isEmpty(), "no Error (UnsatisfiedLinkError, NoClassDefFoundError): " + out);
    }

    @Test
    void theFileSystemFallsBackWithOneWarnPerFileSystem() throws Exception {
        String bucket = HadoopS3.newBucket("nolib");
        String out = HadoopChild.run(badLibrary(), "fs", bucket);
        assertEquals(4, lines(out, "RESULT create ").stream().filter(l -> l.endsWith(" stock")).count(), out);
        assertTrue(out.contains("RESULT counts 0 native=0 stock=2") && out.contains("RESULT counts 1 native=0 stock=2"), out);
        List<String> warns = lines(out, "s3native: writing through stock S3A because of");
        assertEquals(2, warns.size(), "one WARN per filesystem instance: " + out);
        for (String w : warns) {
            assertTrue(w.contains(" WARN "), w);
            assertTrue(w.contains("the native library (s3native: cannot load the native library for platform"), w);
            assertTrue(w.contains("(bucket " + bucket + ")"), w);
        }
        assertTrue(lines(out, "native writes for").isEmpty(), "no INFO line when writes are not native: " + out);
        assertEquals(4, HadoopS3.keys(bucket, "fs/").size(), "the stock route wrote the files");
    }

    /**
     * The jar route (what users run): the class path holds a {@code /native/<platform>/} library
     * that cannot load, ahead of the real one, and no -Ds3native.library.path. The extracted copy
     * fails like a wrong-architecture or noexec one; the WARN names the resource, the temporary
     * directory and the remedy.
     */
    @Test
    void aJarWhoseLibraryCannotLoadFallsBackToo() throws Exception {
        java.nio.file.Path dir = Files.createTempDirectory("s3native-bad-jar");
        java.nio.file.Path lib = dir.resolve(NativeLibrary.resourcePath().substring(1));
        Files.createDirectories(lib.getParent());
        Files.write(lib, new byte[] {0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}); // a 32-bit ELF stub
        String bucket = HadoopS3.newBucket("badjar");
        String out = HadoopChild.runWithClasspath(List.of(dir.toString()), List.of(), "fs", bucket);
        assertEquals(4, lines(out, "RESULT create ").stream().filter(l -> l.endsWith(" stock")).count(), out);
        List<String> warns = lines(out, "s3native: writing through stock S3A because of");
        assertEquals(2, warns.size(), out);
        assertTrue(warns.get(0).contains("jar resource " + NativeLibrary.resourcePath() + " (copied to java.io.tmpdir="), warns.get(0));
        assertTrue(warns.get(0).contains("mounted noexec, set -Djava.io.tmpdir or -D" + NativeLibrary.PATH_PROPERTY), warns.get(0));
    }

    /**
     * A security manager that forbids native code (a site policy without loadLibrary): the
     * load fails with a SecurityException, not an Error, and the filesystem falls back with
     * the WARN naming the policy's answer; stock S3A still writes every file.
     */
    @Test
    void aSecurityManagerThatForbidsNativeCodeFallsBack() throws Exception {
        String bucket = HadoopS3.newBucket("secmgr");
        String out = HadoopChild.run(List.of("-Djava.security.manager=" + NoNativeCodeSecurityManager.class.getName()),
                "fs", bucket);
        assertEquals(4, lines(out, "RESULT create ").stream().filter(l -> l.endsWith(" stock")).count(), out);
        List<String> warns = lines(out, "s3native: writing through stock S3A because of");
        assertEquals(2, warns.size(), "one WARN per filesystem instance: " + out);
        for (String w : warns) {
            assertTrue(w.contains(" WARN ") && w.contains(NoNativeCodeSecurityManager.MESSAGE), w);
            assertTrue(w.contains("(bucket " + bucket + ")"), w);
        }
        assertEquals(4, HadoopS3.keys(bucket, "fs/").size(), "the stock route wrote the files");
    }

    @Test
    void fallbackFailRefusesAtCreateNamingTheLoadError() throws Exception {
        String bucket = HadoopS3.newBucket("nolib-fail");
        String out = HadoopChild.run(badLibrary(), "fs", bucket, "fail");
        List<String> refused = lines(out, "RESULT create ");
        assertEquals(4, refused.size(), out);
        for (String r : refused) {
            assertTrue(r.contains(" refused: s3native cannot write s3a://" + bucket + "/fs/"), r);
            assertTrue(r.contains("because of the native library (s3native: cannot load the native library"), r);
            assertTrue(r.contains("fs.s3a.native.fallback=fail"), r);
        }
        assertEquals(List.of(), HadoopS3.keys(bucket, "fs/"));
    }

    @Test
    void oneInfoLinePerFileSystemWhenWritesAreNative() throws Exception {
        String bucket = HadoopS3.newBucket("info");
        String out = HadoopChild.run(List.of(), "fs", bucket);
        assertEquals(4, lines(out, "RESULT create ").stream().filter(l -> l.endsWith(" native")).count(), out);
        List<String> info = lines(out, "s3native: native writes for");
        assertEquals(2, info.size(), "one per instance: " + out);
        // HadoopS3.conf sets fs.s3a.multipart.size=5M; the rest are the defaults (the target,
        // connections and parts in flight from the machine's CPUs and the budget). The default
        // budget depends on the machine's cgroup memory limit (1 GiB without one, else a share
        // of what the heap leaves, 64 MiB..1 GiB: the core's rule, unit-tested there).
        Pattern expected = Pattern.compile(".* INFO .*s3native: native writes for s3a://" + Pattern.quote(bucket)
                + " \\(memory budget (\\d+) (MiB|GiB), target [0-9.]+ Gbps, \\d+ connections, part size 5 MiB, \\d+ parts in flight\\)$");
        for (String l : info) {
            Matcher m = expected.matcher(l);
            assertTrue(m.matches(), l);
            long mib = Long.parseLong(m.group(1)) * (m.group(2).equals("GiB") ? 1024 : 1);
            assertTrue(mib >= 64 && mib <= 1024, "the default budget is 64 MiB..1 GiB: " + l);
        }
        assertTrue(lines(out, "writing through stock S3A").isEmpty(), out);
    }

    @Test
    void theSyncableWarningComesOncePerProcess() throws Exception {
        String bucket = HadoopS3.newBucket("sync");
        String out = HadoopChild.run(List.of(), "syncable", bucket);
        assertTrue(out.contains("RESULT syncable done"), out);
        List<String> warns = lines(out, "Application invoked the Syncable API");
        assertEquals(1, warns.size(), "once per process, not per stream: " + out);
        Matcher m = Pattern.compile("against stream writing to (\\S+)\\. This is unsupported").matcher(warns.get(0));
        assertTrue(m.find() && m.group(1).equals("sync/0"), "names the first stream's path: " + warns.get(0));
    }
}
