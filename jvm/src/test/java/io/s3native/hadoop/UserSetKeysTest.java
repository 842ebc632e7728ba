package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;

import io.s3native.S3NativeOutputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AUtils;
import org.junit.jupiter.api.Test;

/**
 * S3A's {@code fs.s3a.multipart.size} and {@code fs.s3a.fast.upload.active.blocks} keep their
 * meaning only when the user set them: with real Hadoop Configurations, a value that comes only
 * from hadoop-common's core-default.xml is passed to the core as not the user's
 * ({@code fs.s3a.native.keys.from.defaults}), and the core then uses its own part size and parts
 * in flight; one from a job's configuration file, set programmatically, or from a per-bucket
 * option is the user's, and wins.
 */
class UserSetKeysTest {
    private static final String PART = "fs.s3a.multipart.size";
    private static final String BLOCKS = "fs.s3a.fast.upload.active.blocks";

    /** A configuration with the defaults loaded, and an endpoint so the core needs no lookup. */
    private static Configuration conf() {
        Configuration conf = new Configuration();
        conf.set("fs.s3a.endpoint", "http://127.0.0.1:9");
        conf.set("fs.s3a.endpoint.region", "us-east-1");
        conf.set("fs.s3a.path.style.access", "true");
        return conf;
    }

    private static S3NativeOutputStream.SettingsCheck check(Configuration conf) throws IOException {
        NativeSettings s = NativeSettings.from(conf);
        assertEquals(null, s.fallback);
        return S3NativeOutputStream.checkSettings("some-bucket", s.map);
    }

    @Test
    void keysFromCoreDefaultAreNotTheUsersAndTheCoreDefaultsApply() throws Exception {
        Configuration conf = conf();
        // Both keys have a value, from hadoop-common's core-default.xml only.
        assertNotNull(conf.get(PART));
        assertNotNull(conf.get(BLOCKS));
        assertArrayEquals(new String[] {"core-default.xml"}, conf.getPropertySources(PART));
        assertEquals(PART + "," + BLOCKS, NativeSettings.keysFromDefaults(conf));
        assertEquals(PART + "," + BLOCKS, NativeSettings.from(conf).map.get(NativeSettings.KEYS_FROM_DEFAULTS));

        S3NativeOutputStream.SettingsCheck check = check(conf);
        assertEquals(8L << 20, check.number("part_size"), "the core's part size, not core-default.xml's 64M");
        long connections = check.number("connections");
        long budgetShare = check.number("memory_budget") / (8L << 20) - 1;
        assertEquals(Math.max(1, Math.min(connections, budgetShare)), check.number("parts_in_flight"),
                "the budget's share of the connections, not core-default.xml's 4: " + check.effective());
        assertEquals(connections, Math.max(1, Math.min(
                (check.number("target_throughput_mbps") + 399) / 400, check.number("memory_budget") / (5L << 20))));
    }

    @Test
    void keysFromAJobConfigurationAreTheUsersAndWin() throws Exception {
        java.nio.file.Path job = Files.createTempFile("job", ".xml");
        try {
            Files.write(job, ("<?xml version=\"1.0\"?><configuration>"
                    + "<property><name>" + BLOCKS + "</name><value>6</value></property>"
                    + "</configuration>").getBytes(StandardCharsets.UTF_8));
            Configuration conf = conf();
            conf.addResource(new Path(job.toUri()));
            assertEquals("6", conf.get(BLOCKS));
            assertFalse(java.util.Arrays.asList(conf.getPropertySources(BLOCKS)).equals(java.util.List.of("core-default.xml")));
            assertEquals(PART, NativeSettings.keysFromDefaults(conf), "only the key left at its default");
            S3NativeOutputStream.SettingsCheck check = check(conf);
            assertEquals(6, check.number("parts_in_flight"), "the job's fs.s3a.fast.upload.active.blocks");
            assertEquals(8L << 20, check.number("part_size"));

            // Set programmatically (as Spark's spark.hadoop.* keys are): the user's too.
            conf.set(PART, "16M");
            assertEquals("", NativeSettings.keysFromDefaults(conf));
            Map<String, String> map = NativeSettings.from(conf).map;
            assertFalse(map.containsKey(NativeSettings.KEYS_FROM_DEFAULTS), map.toString());
            assertEquals(16L << 20, check(conf).number("part_size"));
        } finally {
            Files.delete(job);
        }
    }

    @Test
    void aPerBucketOptionIsTheUsers() throws Exception {
        Configuration conf = conf();
        conf.set("fs.s3a.bucket.some-bucket.multipart.size", "32M");
        // What S3A's initialize does before NativeS3AFileSystem reads its configuration.
        Configuration bucketConf = S3AUtils.propagateBucketOptions(conf, "some-bucket");
        assertEquals(BLOCKS, NativeSettings.keysFromDefaults(bucketConf));
        S3NativeOutputStream.SettingsCheck check = check(bucketConf);
        assertEquals(32L << 20, check.number("part_size"));
    }
}
