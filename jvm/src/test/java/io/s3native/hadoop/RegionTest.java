package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The signing region on the wire (the fault proxy logs each request's SigV4 credential-scope
 * region) when {@code fs.s3a.endpoint.region} is unset: native writes sign with the region stock
 * S3A of the same line signs with (us-east-1 on 3.3, us-east-2 on 3.4 and 3.5 for a third-party
 * endpoint), and with the configured region when one is set.
 */
class RegionTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static String bucket;

    @BeforeAll
    static void bucket() throws IOException {
        if (HadoopS3.PROXY == null) {
            if (System.getenv("CI") != null) {
                fail("S3NATIVE_TEST_FAULT_PROXY is not set: scripts/s3-server.sh starts the fault proxy");
            }
            org.junit.jupiter.api.Assumptions.abort("S3NATIVE_TEST_FAULT_PROXY is not set");
        }
        bucket = HadoopS3.newBucket("region");
    }

    /** The region rule of this classpath's hadoop-aws, as NativeSettings finds it. */
    private static String rule() {
        return NativeSettings.regionRule(S3AFileSystem.class.getClassLoader());
    }

    @Test
    void theRuleFollowsTheHadoopLineOnTheClasspath() {
        String version = org.apache.hadoop.util.VersionInfo.getVersion();
        String expected = version.startsWith("3.3.") ? "3.3" : version.equals("3.4.0") || version.equals("3.4.1") ? "3.4.1" : "3.4.2";
        assertEquals(expected, rule(), "hadoop " + version);
    }

    @Test
    void aThirdPartyEndpointWithoutARegionSignsAsStockS3ADoes() throws Exception {
        Set<String> stock = regionsOf(false, null, "stock-unset");
        Set<String> nativeRegions = regionsOf(true, null, "native-unset");
        String expected = rule().equals("3.3") ? "us-east-1" : "us-east-2";
        assertEquals(Set.of(expected), stock, "stock S3A's region for a third-party endpoint");
        assertEquals(stock, nativeRegions, "native signs as stock S3A does");
    }

    @Test
    void aConfiguredRegionIsTheSigningRegion() throws Exception {
        Set<String> stock = regionsOf(false, "eu-west-3", "stock-set");
        assertEquals(Set.of("eu-west-3"), stock);
        assertEquals(stock, regionsOf(true, "eu-west-3", "native-set"));
    }

    @Test
    void crossRegionAccessOffKeepsTheRegionForAThirdPartyEndpoint() throws Exception {
        Configuration extra = new Configuration(false);
        extra.setBoolean("fs.s3a.cross.region.access.enabled", false);
        Set<String> stock = regionsOf(false, null, "stock-nocross", extra);
        assertEquals(stock, regionsOf(true, null, "native-nocross", extra));
        assertFalse(stock.contains(null), "every request signed: " + stock);
    }

    private static Set<String> regionsOf(boolean nativeFs, String region, String what) throws Exception {
        return regionsOf(nativeFs, region, what, new Configuration(false));
    }

    /**
     * Write a 6 MiB file (a multipart upload) through the proxy with {@code region} (null:
     * unset) and return the regions its requests were signed with.
     */
    private static Set<String> regionsOf(boolean nativeFs, String region, String what, Configuration extra)
            throws Exception {
        Configuration conf = HadoopS3.conf(nativeFs);
        conf.unset("fs.s3a.endpoint.region");
        if (region != null) {
            conf.set("fs.s3a.endpoint.region", region);
        }
        conf.set("fs.s3a.native.fallback", "fail");
        for (java.util.Map.Entry<String, String> e : extra) {
            conf.set(e.getKey(), e.getValue());
        }
        String key = "region-" + what + "-" + System.nanoTime();
        try (FileSystem fs = FileSystem.get(URI.create("s3a://" + bucket + "/"), conf)) {
            assertEquals(nativeFs, fs instanceof NativeS3AFileSystem);
            byte[] data = HadoopS3.data(6 * 1024 * 1024, 5);
            Path p = new Path("s3a://" + bucket + "/" + key);
            try (FSDataOutputStream out = fs.create(p)) {
                out.write(data);
            }
            assertEquals(data.length, fs.getFileStatus(p).getLen());
            if (nativeFs) {
                assertEquals(1, ((NativeS3AFileSystem) fs).getNativeCreateCount(), "written natively");
            }
        }
        Set<String> regions = new TreeSet<>(java.util.Comparator.nullsFirst(java.util.Comparator.naturalOrder()));
        int puts = 0;
        for (JsonNode e : JSON.readTree(get(HadoopS3.PROXY + "/__fault/log?path_contains=" + key))) {
            regions.add(e.path("region").isNull() ? null : e.path("region").asText());
            puts += e.path("method").asText().equals("PUT") ? 1 : 0;
        }
        assertTrue(puts >= 2, what + ": the parts went through the proxy (" + puts + " PUTs)");
        return regions;
    }

    private static String get(String url) throws IOException {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
