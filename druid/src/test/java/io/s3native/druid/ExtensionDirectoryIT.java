package io.s3native.druid;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged extension directory (extensions/druid-s3native/*.jar: this module's jar and
 * the s3native jar with the native library inside) loads in Druid's own per-extension class
 * loader, in a child JVM whose class path holds Druid but not the extension
 * ({@link ExtensionDirectoryMain}), and writes and reads through the native library there.
 */
class ExtensionDirectoryIT {
    @Test
    void theExtensionLoadsFromItsDirectoryInDruidsClassLoader() throws Exception {
        File dir = new File(System.getProperty("s3native.extension.dir"));
        String[] jars = dir.list((d, n) -> n.endsWith(".jar"));
        assertTrue(jars != null && jars.length == 2, "the extension directory " + dir + " holds " + Arrays.toString(jars));
        Arrays.sort(jars);
        assertTrue(jars[0].startsWith("druid-s3native-") && jars[1].startsWith("s3native-"), Arrays.toString(jars));

        String druidClasspath = System.getProperty("s3native.druid.classpath");
        assertTrue(druidClasspath != null && !druidClasspath.contains("s3native-0"), "Druid's class path without s3native");
        String testClasses = new File(ExtensionDirectoryMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getPath();
        String bucket = LocalS3.newBucket("extdir");
        List<String> cmd = new ArrayList<>(List.of(
                new File(System.getProperty("java.home"), "bin/java").getPath(), "-Xmx512m",
                "-cp", testClasses + File.pathSeparator + druidClasspath,
                ExtensionDirectoryMain.class.getName(), dir.getParent(), bucket, LocalS3.endpoint()));
        File log = File.createTempFile("extension-dir", ".log");
        Process child = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log).start();
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the child JVM finished");
        String out = Files.readString(log.toPath(), StandardCharsets.UTF_8);
        assertEquals(0, child.exitValue(), out);
        assertTrue(out.contains("OK org.apache.druid.guice.StandardURLClassLoader"), out);
        byte[] written = LocalS3.get(bucket, "ext/from-extension-dir");
        byte[] expected = new byte[6 << 20];
        new java.util.Random(5).nextBytes(expected);
        assertArrayEquals(expected, written);
    }
}
