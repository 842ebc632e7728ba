package io.s3native;

import static io.s3native.S3Test.PART;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Credentials from a provider of the caller: the native side asks it again as the keys age,
 * uses the new keys on later requests, and refetches once when S3 says the token expired.
 * The keys on the wire are read by the fault proxy from each request's Authorization header
 * (moto accepts any key pair).
 */
class CredentialsTest {
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3Test.newBucket("credentials");
    }

    /** Settings through the fault proxy without keys: the source provides them. */
    private static Map<String, String> keyless() {
        Map<String, String> s = new HashMap<>(S3Test.settings(S3Test.faultProxy()));
        s.remove("fs.s3a.access.key");
        s.remove("fs.s3a.secret.key");
        return s;
    }

    private static List<String> keyIds(String key) throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode e : S3Test.proxyLog(key)) {
            out.add(e.path("access_key_id").asText(null));
        }
        return out;
    }

    @Test
    void rotatingKeysAreUsedForLaterParts() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        long start = System.nanoTime();
        // A new key id every 1.5 s, no expiry: the native side asks again at most every second.
        CredentialsProvider rotating = () -> {
            asked.incrementAndGet();
            long generation = (System.nanoTime() - start) / 1_500_000_000L;
            return new Credentials("AKIDROTATE" + generation, "secret-" + generation, null, null);
        };
        String key = "rotating-" + System.nanoTime();
        byte[] part = S3Test.data(PART, 11);
        try (CredentialSource source = CredentialSource.of(rotating, "the test's rotating provider");
                S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, keyless(), source)) {
            for (int i = 0; i < 4; i++) {
                out.write(part);
                Thread.sleep(1600); // the next part goes up after the keys rotated
            }
            out.write(1);
        }
        assertEquals(4L * PART + 1, S3Test.get(bucket, key).length);
        Set<String> seen = new LinkedHashSet<>(keyIds(key));
        assertTrue(seen.size() >= 3, "later parts were signed with newer keys: " + seen);
        assertFalse(seen.contains(null), "every request was signed: " + seen);
        assertTrue(asked.get() >= 3, "the provider was asked again: " + asked);
        assertTrue(asked.get() < 40, "but not on every request: " + asked);
    }

    @Test
    void anExpiredTokenAnswerFetchesNewCredentialsOnce() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        // Credentials valid for an hour: without S3's answer they would be used for the whole upload.
        CredentialsProvider provider = () -> new Credentials("AKIDEXPIRY" + asked.incrementAndGet(), "secret", "token",
                Instant.now().plusSeconds(3600));
        String key = "expired-token-" + System.nanoTime();
        S3Test.addFaultRule("{\"match\": {\"method\": \"PUT\", \"query_has\": \"partNumber\", \"path_contains\": \"" + key
                + "\"}, \"action\": \"status\", \"status\": 400, \"code\": \"ExpiredToken\", \"count\": 1}");
        byte[] data = S3Test.data(PART + 10, 12);
        try (CredentialSource source = CredentialSource.of(provider, "the test's provider");
                S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, keyless(), source)) {
            out.write(data);
            UploadResult r = out.closeAndGetResult();
            assertEquals(1, r.getStatistics().getRetries(), "the refused part was sent once more");
        }
        assertArrayEquals(data, S3Test.get(bucket, key));
        assertEquals(2, asked.get(), "asked at the first request and after ExpiredToken, not more");
        List<String> ids = keyIds(key);
        assertEquals("AKIDEXPIRY1", ids.get(0));
        assertEquals("AKIDEXPIRY2", ids.get(ids.size() - 1), "after the answer the new key signs: " + ids);
    }

    @Test
    void aFailingProviderFailsTheWriteWithItsMessage() throws Exception {
        CredentialsProvider broken = () -> {
            throw new IOException("no credentials for you");
        };
        String key = "broken-provider-" + System.nanoTime();
        try (CredentialSource source = CredentialSource.of(broken, "the test's broken provider")) {
            S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, keyless(), source);
            out.write(new byte[] {1});
            IOException e = assertThrows(IOException.class, out::close);
            assertTrue(e.getMessage().contains("no credentials for you") && e.getMessage().contains("the test's broken provider"),
                    e.getMessage());
        }
        assertFalse(S3Test.exists(bucket, key));
    }

    @Test
    void awsSdkV2ProvidersAreAdapted() throws Exception {
        software.amazon.awssdk.auth.credentials.AwsCredentialsProvider v2 =
                software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
                        software.amazon.awssdk.auth.credentials.AwsSessionCredentials.create("AKIDV2", "v2-secret", "v2-token"));
        Credentials c = CredentialSource.awsSdkAdapter(v2).getCredentials();
        assertEquals("AKIDV2", c.getAccessKeyId());
        assertEquals("v2-secret", c.getSecretAccessKey());
        assertEquals("v2-token", c.getSessionToken());
        assertFalse(c.toString().contains("v2-secret") || c.toString().contains("v2-token"), c.toString());
        assertThrows(IllegalArgumentException.class, () -> CredentialSource.awsSdkAdapter("not a provider"));
        String key = "sdk-v2-" + System.nanoTime();
        try (CredentialSource source = CredentialSource.fromAwsSdk(v2, "a static SDK v2 provider");
                S3NativeOutputStream out = new S3NativeOutputStream(bucket, key, S3NativeOutputStream.Mode.PUBLISH, keyless(), source)) {
            out.write(new byte[] {7});
        }
        assertEquals(List.of("AKIDV2"), keyIds(key));
    }
}
