package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Two class loaders of one JVM each load the library (each its own copy) and write. */
class ClassLoaderTest {
    @Test
    void twoClassLoadersInOneJvm() throws Exception {
        String bucket = S3Test.newBucket("loaders");
        URL classes = S3NativeOutputStream.class.getProtectionDomain().getCodeSource().getLocation();
        Class<?> first = null;
        for (int i = 0; i < 2; i++) {
            try (URLClassLoader loader = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader())) {
                Class<?> stream = loader.loadClass("io.s3native.S3NativeOutputStream");
                Class<?> mode = loader.loadClass("io.s3native.S3NativeOutputStream$Mode");
                if (first == null) {
                    first = stream;
                } else {
                    assertNotSame(first, stream);
                }
                Object publish = mode.getField("PUBLISH").get(null);
                OutputStream out = (OutputStream) stream.getConstructor(String.class, String.class, mode, Map.class)
                        .newInstance(bucket, "loader-" + i, publish, S3Test.settings());
                out.write(new byte[] {(byte) i, 1, 2});
                out.close();
            }
            assertArrayEquals(new byte[] {(byte) i, 1, 2}, S3Test.get(bucket, "loader-" + i));
        }
        // And the test's own loader still works alongside them.
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "app-loader", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            out.write(9);
        }
        assertArrayEquals(new byte[] {9}, S3Test.get(bucket, "app-loader"));
    }
}
