package io.s3native;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Where the library comes from, and the one clear error when it cannot be loaded. */
class NativeLibraryTest {
    @Test
    void loadsFromTheJarResources() throws Exception {
        assertTrue(NativeLibrary.isAvailable());
        assertEquals(NativeLibrary.version(), Native.version(), "library and jar versions");
        assertTrue(NativeLibrary.resourcePath().startsWith("/native/" + NativeLibrary.platform() + "/"));
        assertTrue(S3Test.runChild("load").contains("LOADED"));
    }

    @Test
    void loadsFromTheConfiguredPath() throws Exception {
        // The folder Maven packed the jar's library from (s3native.library.dir).
        File lib = new File(System.getProperty("s3native.test.library.dir"), "libs3native.so").getCanonicalFile();
        assertTrue(lib.isFile(), lib + " exists");
        String out = S3Test.runChild(List.of("-D" + NativeLibrary.PATH_PROPERTY + "=" + lib.getParent()), "load");
        assertTrue(out.contains("LOADED"), out);
    }

    @Test
    void aMissingLibraryNamesThePlatformAndThePathsTried() throws Exception {
        String out = S3Test.runChild(List.of("-D" + NativeLibrary.PATH_PROPERTY + "=/nonexistent/libs3native.so"), "load");
        assertTrue(out.contains(NativeLibrary.platform()), out);
        assertTrue(out.contains("/nonexistent/libs3native.so"), out);
    }

    @Test
    void aWrongLibraryFileIsOneClearError() throws Exception {
        File bogus = File.createTempFile("libs3native-wrong-arch", ".so");
        bogus.deleteOnExit();
        Files.write(bogus.toPath(), new byte[] {0x7f, 'E', 'L', 'F', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}); // a 32-bit ELF stub
        String out = S3Test.runChild(List.of("-D" + NativeLibrary.PATH_PROPERTY + "=" + bogus), "load");
        assertTrue(out.contains("cannot load the native library for platform " + NativeLibrary.platform()), out);
        assertTrue(out.contains(bogus.getPath()), out);
    }
}
