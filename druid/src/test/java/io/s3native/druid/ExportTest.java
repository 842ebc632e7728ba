package io.s3native.druid;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.inject.Injector;
import com.google.inject.Key;
import org.apache.druid.error.DruidException;
import org.apache.druid.guice.annotations.Json;
import org.apache.druid.storage.ExportStorageProvider;
import org.apache.druid.storage.StorageConnector;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The {@code s3native} export destination, built from JSON through the module's Jackson wiring. */
class ExportTest {
    private final DruidHarness.CollectingEmitter emitter = new DruidHarness.CollectingEmitter();

    private ExportStorageProvider provider(String allowed, String bucket, String prefix) throws Exception {
        Properties p = DruidHarness.properties(bucket, "unused", LocalS3.endpoint());
        if (allowed != null) {
            p.setProperty(S3NativeExportConfig.PREFIX + ".allowedExportPaths", allowed);
        }
        Injector injector = DruidHarness.injector(p, emitter);
        ObjectMapper json = injector.getInstance(Key.get(ObjectMapper.class, Json.class));
        return json.readValue("{\"type\":\"s3native\",\"bucket\":\"" + bucket + "\",\"prefix\":\"" + prefix + "\"}",
                ExportStorageProvider.class);
    }

    @Test
    void pathsAsDruids() throws Exception {
        ExportStorageProvider e = provider("[\"s3://b/exports\"]", "b", "exports/q1/");
        assertInstanceOf(S3NativeExportStorageProvider.class, e);
        assertEquals("s3native", e.getResourceType());
        assertEquals("s3://b/exports/q1", e.getBasePath());
        assertEquals("s3://b/exports/q1/_symlink_format_manifest/manifest", e.getFilePathForManifest("_symlink_format_manifest/manifest"));
    }

    @Test
    void allowedPaths() throws Exception {
        File tmp = new File(System.getProperty("java.io.tmpdir"));
        // As Druid's s3 provider: an unset allowedExportPaths is the operator's, a destination
        // outside them the user's.
        DruidException none = assertThrows(DruidException.class,
                () -> provider(null, "b", "x").createStorageConnector(tmp));
        assertTrue(none.getMessage().contains("druid.export.storage.s3native.allowedExportPaths"), none.getMessage());
        assertEquals(DruidException.Persona.OPERATOR, none.getTargetPersona());
        assertEquals(DruidException.Category.NOT_FOUND, none.getCategory());
        DruidException outside = assertThrows(DruidException.class,
                () -> provider("[\"s3://b/exports\"]", "b", "exportsx/q").createStorageConnector(tmp));
        assertTrue(outside.getMessage().contains("s3://b/exportsx/q/"), outside.getMessage());
        assertEquals(DruidException.Persona.USER, outside.getTargetPersona());
        assertEquals(DruidException.Category.INVALID_INPUT, outside.getCategory());
        assertThrows(DruidException.class,
                () -> provider("[\"s3://other/exports\"]", "b", "exports/q").createStorageConnector(tmp));
        assertThrows(DruidException.class,
                () -> provider("[\"s3://b/exports\"]", "b", "exports/../secret").createStorageConnector(tmp));
        DruidException notUri = assertThrows(DruidException.class,
                () -> provider("[\"b/exports\"]", "b", "exports/q").createStorageConnector(tmp));
        assertEquals(DruidException.Persona.OPERATOR, notUri.getTargetPersona());
        S3NativeExportStorageProvider.validate(List.of("s3://b/exports/"), "b", "exports");
        S3NativeExportStorageProvider.validate(List.of("s3://x/y", "s3://b"), "b", "any/where");
    }

    @Test
    void exportWrittenAndReadBack() throws Exception {
        String bucket = LocalS3.newBucket("export");
        ExportStorageProvider e = provider("[\"s3://" + bucket + "/exports/\"]", bucket, "exports/q1");
        StorageConnector c = e.createStorageConnector(new File(System.getProperty("java.io.tmpdir")));
        byte[] data = LocalS3.data(6 * 1024 * 1024 + 17, 15);
        try (OutputStream out = c.write("query-results.csv")) {
            out.write(data);
        }
        assertArrayEquals(data, LocalS3.get(bucket, "exports/q1/query-results.csv"));
        try (InputStream in = c.read("query-results.csv")) {
            assertArrayEquals(data, in.readAllBytes());
        }
    }
}
