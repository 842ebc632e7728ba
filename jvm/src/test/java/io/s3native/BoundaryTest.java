package io.s3native;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/**
 * The JNI boundary carries data by name: every field the Rust library sends reaches Java
 * under a name Java reads, and every name Java reads is sent. A field added on one side only
 * fails here.
 */
class BoundaryTest {
    @Test
    void everyStatisticsFieldCrossesByName() {
        Set<String> sent = S3NativeOutputStream.globalStatistics().asMap().keySet();
        assertEquals(new HashSet<>(Statistics.NAMES), sent, "Statistics.NAMES against the Rust Statistics fields");
    }

    @Test
    void theEffectiveSettingsCrossByNameWithTheCoresValues() throws Exception {
        Map<String, String> settings = new java.util.HashMap<>(S3Test.settings());
        settings.put("fs.s3a.multipart.size", "5000000"); // S3A's leniency: used as 5 MiB, with a warning
        settings.put("fs.s3a.fast.upload.active.blocks", "6");
        settings.put("fs.s3a.native.request.timeout", "90s");
        S3NativeOutputStream.SettingsCheck check = S3NativeOutputStream.checkSettings("some-bucket", settings);
        assertEquals(new HashSet<>(S3NativeOutputStream.SettingsCheck.EFFECTIVE_NAMES), check.effective().keySet());
        assertEquals(5L << 20, check.number("part_size"));
        assertEquals(6, check.number("parts_in_flight"));
        assertEquals(90_000, check.number("request_timeout_ms"));
        assertEquals(Boolean.FALSE, check.effective().get("fixed_part_size"));
        assertEquals(1, check.warnings().size(), check.warnings().toString());
        assertTrue(check.warnings().get(0).contains("fs.s3a.multipart.size"), check.warnings().toString());
        assertEquals(check.warnings(), S3NativeOutputStream.validateSettings("some-bucket", settings));
        String credentials = (String) check.effective().get("credentials");
        assertEquals("static keys", credentials);
        assertFalse(check.effective().toString().contains(settings.get("fs.s3a.secret.key")), check.effective().toString());
    }

    @Test
    void everyResultFieldCrossesByName() throws Exception {
        String bucket = S3Test.newBucket("boundary");
        Map<String, String> settings = S3Test.settings();
        UploadResult r;
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.DEFERRED, settings)) {
            out.write(new byte[] {1, 2, 3});
            r = out.closeAndGetResult();
        }
        Map<String, Object> sent = Native.parseResult(r.toJson());
        assertEquals(UploadResult.FIELDS, sent.keySet(), "UploadResult.FIELDS against the Rust UploadResult fields");
        assertEquals(new HashSet<>(Statistics.NAMES), r.getStatistics().asMap().keySet());
        assertEquals(bucket, r.getBucket());
        assertEquals(3, r.getLength());
        assertEquals(1, r.getEtags().size());
        S3NativeOutputStream.abort(r, settings);
    }

    @Test
    void everyEnumCrossesByItsName() throws Exception {
        for (S3NativeOutputStream.Mode mode : S3NativeOutputStream.Mode.values()) {
            // Opening sends no request: only the name is checked here.
            S3NativeOutputStream out = new S3NativeOutputStream("some-bucket", "k", mode, Map.of());
            assertEquals("OPEN", out.getState());
            out.abort();
            assertEquals("ABORTED", out.getState());
        }
        String bucket = S3Test.newBucket("boundary-magic");
        for (S3NativeOutputStream.MagicLayout layout : S3NativeOutputStream.MagicLayout.values()) {
            String magicDir = layout == S3NativeOutputStream.MagicLayout.MAGIC ? "__magic" : "__magic_job-1";
            for (S3NativeOutputStream.PendingEtags etags : S3NativeOutputStream.PendingEtags.values()) {
                String key = "t/" + magicDir + "/" + etags + "/part-0";
                S3NativeOutputStream out = S3NativeOutputStream.openMagic(bucket, key, "s3a://" + bucket + "/" + key, layout,
                        etags, S3Test.settings());
                out.abort();
            }
        }
        Native.init();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Native.open("some-bucket", "k", "SOMETIMES", new String[0], 0));
        assertTrue(e.getMessage().contains("unknown mode 'SOMETIMES'"), e.getMessage());
    }

    @Test
    void abortAfterCloseDoesNothingAndAbortAfterAbortToo() throws IOException {
        String bucket = S3Test.newBucket("boundary-abort");
        S3NativeOutputStream out = new S3NativeOutputStream(bucket, "k", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
        out.write(7);
        out.close();
        out.abort(); // the rule of the Rust API and the C ABI: nothing happens
        assertEquals("CLOSED", out.getState());
        assertTrue(S3Test.exists(bucket, "k"));
        S3NativeOutputStream aborted = new S3NativeOutputStream(bucket, "k2", S3NativeOutputStream.Mode.PUBLISH, S3Test.settings());
        aborted.write(8);
        aborted.abort();
        aborted.abort(); // a second abort: nothing more
        assertEquals("ABORTED", aborted.getState());
        assertThrows(IOException.class, aborted::close);
        assertFalse(S3Test.exists(bucket, "k2"));
    }
}
