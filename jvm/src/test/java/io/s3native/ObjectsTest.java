package io.s3native;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

/** {@link S3NativeObjects} against the local server: exists, delete one and many, recursive delete, lazy listing. */
class ObjectsTest {
    private static void put(String bucket, String key, byte[] b) throws IOException {
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, S3Test.settings())) {
            out.write(b);
        }
    }

    @Test
    void existsDeleteListAndDeleteRecursively() throws IOException {
        String bucket = S3Test.newBucket("objects");
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 1_010; i++) {
            keys.add("dir/sub" + (i % 2) + "/f" + i);
        }
        for (String k : keys) {
            put(bucket, k, new byte[] {1});
        }
        put(bucket, "dir2/other", new byte[] {2, 3});
        try (S3NativeObjects objects = new S3NativeObjects(bucket, S3Test.settings())) {
            assertTrue(objects.exists("dir/sub0/f0"));
            assertEquals(2, objects.head("dir2/other"));
            assertFalse(objects.exists("dir"));
            assertEquals(-1, objects.head("nope"));

            List<String> names = new ArrayList<>();
            try (S3NativeObjects.Listing l = objects.list("dir")) {
                l.forEachRemaining(names::add);
            }
            assertEquals(1_010, names.size());
            assertTrue(names.contains("sub1/f1009"), names.subList(0, 3).toString());

            objects.delete("dir2/other");
            assertFalse(S3Test.exists(bucket, "dir2/other"));
            assertEquals(1_000, objects.deleteAll(keys.subList(0, 1_000)));
            assertFalse(S3Test.exists(bucket, keys.get(999)));
            assertEquals(10, objects.deleteRecursively("dir"));
            assertFalse(objects.list("").hasNext());
            assertEquals(0, objects.deleteAll(Collections.emptyList()));

            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> objects.exists(""));
            assertTrue(bad.getMessage().contains("key"), bad.getMessage());
        }
        try (S3NativeObjects missing = new S3NativeObjects("jvm-objects-no-such-bucket-" + Long.toHexString(System.nanoTime()), S3Test.settings())) {
            UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> missing.list("").hasNext());
            assertTrue(e.getCause() instanceof FileNotFoundException, e.toString());
            assertThrows(FileNotFoundException.class, () -> missing.deleteAll(List.of("a")));
        }
    }
}
