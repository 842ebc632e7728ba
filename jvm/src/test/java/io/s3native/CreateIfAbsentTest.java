package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@link S3NativeOutputStream.Mode#CREATE_IF_ABSENT} from Java: the mode crosses by name, an
 * absent key is created, and an object already at the key (the server's own 412 to
 * {@code If-None-Match: *}, which moto honours) fails close with
 * {@link FileAlreadyExistsException} naming the key, for a single PUT and a multipart upload,
 * leaving that object and no upload behind.
 */
class CreateIfAbsentTest {
    private static void write(String bucket, String key, S3NativeOutputStream.Mode mode, byte[] data) throws IOException {
        Map<String, String> settings = S3Test.settings();
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, mode, settings)) {
            out.write(data);
        }
    }

    @Test
    void createsWhenAbsentAndRefusesWhenPresent() throws IOException {
        String bucket = S3Test.newBucket("create-if-absent");
        for (int size : new int[] {1000, 2 * S3Test.PART + 5}) {
            String key = "f-" + size;
            byte[] first = S3Test.data(size, 1);
            write(bucket, key, S3NativeOutputStream.Mode.CREATE_IF_ABSENT, first);
            assertArrayEquals(first, S3Test.get(bucket, key), "created");
            FileAlreadyExistsException e = assertThrows(FileAlreadyExistsException.class,
                    () -> write(bucket, key, S3NativeOutputStream.Mode.CREATE_IF_ABSENT, S3Test.data(size, 2)));
            assertTrue(e.getMessage().contains(key) && e.getMessage().contains("already exists"), e.getMessage());
            assertArrayEquals(first, S3Test.get(bucket, key), "the first object stays");
            assertTrue(S3Test.uploads(bucket).isEmpty(), "no upload left: " + S3Test.uploads(bucket));
        }
    }
}
