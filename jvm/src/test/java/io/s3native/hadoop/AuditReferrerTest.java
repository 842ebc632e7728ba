package io.s3native.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.junit.jupiter.api.Test;

/**
 * S3A's audit context on native requests: S3A's {@code LoggingAuditor} (the default) adds
 * a {@code Referer} header, {@code https://audit.example.org/hadoop/1/<op>/<span id>/?op=..&p1=..},
 * to every request made in a span when {@code fs.s3a.audit.referrer.enabled} (default true).
 * For a plain and a magic file, every request from create to close (read from the fault
 * proxy's log, which every request of these tests goes through) carries one Referer with the
 * create's operation and span: on stock S3AFileSystem (S3A's own requests), and on
 * {@link NativeS3AFileSystem}, where the native requests carry the same operation and the
 * span id of the create's own S3A requests. With the referrer disabled, none carries one.
 */
class AuditReferrerTest {
    /** Two full 5 MiB parts and a short last one: initiate, 3 parts, complete. */
    private static final int SIZE = 2 * 5 * 1024 * 1024 + 1000;

    /** One request's audit context: the Referer's op and span id (its path) and its query. */
    private record Audit(String operation, String op, String spanId, Map<String, String> params) {
    }

    private static Audit parse(HadoopS3.Referred r) {
        assertNotNull(r.referer(), "every request of the write carries a Referer: " + r.operation());
        URI u = URI.create(r.referer());
        String[] path = u.getPath().split("/");
        // "", "hadoop", "1", op, span id
        assertEquals("hadoop", path[1], r.referer());
        assertEquals("1", path[2], r.referer());
        Map<String, String> params = new HashMap<>();
        for (String p : u.getRawQuery().split("&")) {
            String[] kv = p.split("=", 2);
            params.put(kv[0], kv.length == 2 ? URLDecoder.decode(kv[1], StandardCharsets.UTF_8) : "");
        }
        assertEquals(path[3], params.get("op"), "the query's op is the path's: " + r.referer());
        return new Audit(r.operation(), path[3], path[4], params);
    }

    /** The requests on the bucket from create to close of {@code key}, with their Referers. */
    private static List<HadoopS3.Referred> write(boolean nativeFs, String key, boolean audit, boolean referrer)
            throws Exception {
        return write(nativeFs, key, audit, referrer, Map.of());
    }

    private static List<HadoopS3.Referred> write(boolean nativeFs, String key, boolean audit, boolean referrer,
            Map<String, String> settings) throws Exception {
        String bucket = HadoopS3.newBucket("audit-" + (nativeFs ? "n" : "s"));
        Configuration conf = HadoopS3.conf(nativeFs);
        settings.forEach(conf::set);
        // Auditing is off by default on 3.3.x (HADOOP-18091), on from 3.4.0.
        conf.setBoolean("fs.s3a.audit.enabled", audit);
        conf.setBoolean("fs.s3a.audit.referrer.enabled", referrer);
        conf.set("fs.s3a.native.fallback", "fail");
        String marker = "/" + bucket; // path-style: every request on the bucket
        Path path = new Path("s3a://" + bucket + "/" + key);
        try (FileSystem fs = HadoopS3.fs(bucket, conf)) {
            int before = settled(marker).size();
            try (FSDataOutputStream out = fs.create(path, true)) {
                assertEquals(nativeFs, out.getWrappedStream() instanceof NativeS3AOutputStream, "route of " + path);
                out.write(new byte[SIZE]);
            }
            List<HadoopS3.Referred> all = settled(marker);
            return new ArrayList<>(all.subList(before, all.size()));
        }
    }

    private static List<HadoopS3.Referred> settled(String marker) throws Exception {
        List<HadoopS3.Referred> last = HadoopS3.referred(marker);
        for (int i = 0; i < 20; i++) {
            Thread.sleep(100);
            List<HadoopS3.Referred> now = HadoopS3.referred(marker);
            if (now.size() == last.size()) {
                return now;
            }
            last = now;
        }
        return last;
    }

    /** Every request is in one span of one operation; answers that span's first request's audit. */
    private static Audit oneSpan(List<HadoopS3.Referred> requests, String what) {
        assertFalse(requests.isEmpty(), what + ": requests were logged");
        List<Audit> audits = requests.stream().map(AuditReferrerTest::parse).toList();
        Audit first = audits.get(0);
        for (Audit a : audits) {
            assertEquals(first.op(), a.op(), what + ": one operation on every request " + requests);
            assertEquals(first.spanId(), a.spanId(), what + ": one span on every request " + requests);
            assertEquals(first.params().get("p1"), a.params().get("p1"), what + ": one path " + requests);
            assertEquals(first.params().get("id"), a.params().get("id"), what + ": one id " + requests);
        }
        System.out.println(what + ": " + requests.stream().map(HadoopS3.Referred::operation).toList() + ", all in " + first.op() + " span "
                + first.spanId() + " p1=" + first.params().get("p1"));
        return first;
    }

    private static Set<String> operations(List<HadoopS3.Referred> requests) {
        Set<String> ops = new TreeSet<>();
        requests.forEach(r -> ops.add(r.operation()));
        return ops;
    }

    private static void assertSameAudit(String key, Set<String> nativeOps) throws Exception {
        assertSameAudit(key, nativeOps, Map.of());
    }

    private static void assertSameAudit(String key, Set<String> nativeOps, Map<String, String> settings)
            throws Exception {
        List<HadoopS3.Referred> stock = write(false, key, true, true, settings);
        List<HadoopS3.Referred> ours = write(true, key, true, true, settings);
        Audit s = oneSpan(stock, "stock " + key);
        Audit n = oneSpan(ours, "native " + key);
        assertEquals(s.op(), n.op(), "the create's operation, as stock S3A names it");
        assertEquals(s.params().keySet(), n.params().keySet(), "the same audit fields: " + stock + " / " + ours);
        // p1 names the path without the bucket on every line: the same key in another bucket.
        assertEquals(s.params().get("p1").replaceFirst("^[^/]*/", ""), n.params().get("p1").replaceFirst("^[^/]*/", ""));
        assertTrue(operations(ours).containsAll(nativeOps), "the native requests are among them: " + ours);
        assertTrue(operations(stock).containsAll(nativeOps), "stock sends the same kinds: " + stock);
    }

    @Test
    void aPlainFileCarriesTheCreatesAuditContext() throws Exception {
        assertSameAudit("dir/plain.bin", Set.of("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"));
    }

    @Test
    void aMagicFileCarriesTheCreatesAuditContext() throws Exception {
        assertSameAudit(RequestCostTest.magicKey(), Set.of("CreateMultipartUpload", "UploadPart", "PutObject"));
    }

    /** S3A's in-memory magic tracker (3.4+): the upload's requests (no marker, no .pending). */
    @Test
    void anInMemoryTrackedMagicFileCarriesTheCreatesAuditContext() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(InMemoryTracker.available(getClass().getClassLoader()),
                "this Hadoop line has no in-memory magic tracker");
        assertSameAudit(RequestCostTest.magicKey(), Set.of("CreateMultipartUpload", "UploadPart"),
                Map.of("fs.s3a.committer.magic.track.commits.in.memory.enabled", "true"));
    }

    /** The referrer disabled, or auditing off (3.3's default): no request carries a Referer. */
    @Test
    void noRefererWhenTheReferrerOrAuditingIsDisabled() throws Exception {
        for (boolean nativeFs : new boolean[] {false, true}) {
            for (String key : List.of("dir/plain.bin", RequestCostTest.magicKey())) {
                List<HadoopS3.Referred> requests = write(nativeFs, key, true, false);
                requests.addAll(write(nativeFs, key, false, true));
                assertTrue(operations(requests).contains("UploadPart"), "the write was logged: " + requests);
                for (HadoopS3.Referred r : requests) {
                    assertNull(r.referer(), (nativeFs ? "native " : "stock ") + key + ": " + r);
                }
            }
        }
    }
}
