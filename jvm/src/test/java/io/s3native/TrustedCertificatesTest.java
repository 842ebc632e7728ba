package io.s3native;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The Java stream's settings name extra trusted roots by key: {@code
 * fs.s3a.native.trusted.certificates} (PEM) lets the native writer reach the local TLS front
 * (scripts/s3-server.sh: S3NATIVE_TEST_TLS_ENDPOINT, its private CA in S3NATIVE_TEST_TLS_CA);
 * without it the write fails with a certificate error naming the key.
 */
class TrustedCertificatesTest {
    private static String required(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (System.getenv("CI") != null) {
                fail(name + " is not set: make test starts the TLS front (scripts/s3-server.sh)");
            }
            org.junit.jupiter.api.Assumptions.abort(name + " is not set (the TLS front needs port 443)");
        }
        return v;
    }

    private static Map<String, String> tlsSettings() {
        Map<String, String> s = S3Test.settings(required("S3NATIVE_TEST_TLS_ENDPOINT"));
        s.put("fs.s3a.connection.ssl.enabled", "true");
        return s;
    }

    @Test
    void thePrivateCaNamedInTheSettingsIsTrusted() throws Exception {
        Map<String, String> settings = tlsSettings();
        settings.put("fs.s3a.native.trusted.certificates", Files.readString(Paths.get(required("S3NATIVE_TEST_TLS_CA"))));
        String bucket = S3Test.newBucket("trusted-ca");
        byte[] data = S3Test.data(6 * 1024 * 1024, 3);
        try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "with-ca", S3NativeOutputStream.Mode.PUBLISH, settings)) {
            out.write(data);
        }
        assertArrayEquals(data, S3Test.s3().getObjectAsBytes(b -> b.bucket(bucket).key("with-ca")).asByteArray());
    }

    @Test
    void withoutItTheWriteFailsWithACertificateError() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(caInEnvironmentRoots(), "SSL_CERT_FILE or SSL_CERT_DIR holds the test CA");
        Map<String, String> settings = tlsSettings();
        String bucket = S3Test.newBucket("untrusted-ca");
        IOException e = assertThrows(IOException.class, () -> {
            try (S3NativeOutputStream out = new S3NativeOutputStream(bucket, "without-ca", S3NativeOutputStream.Mode.PUBLISH, settings)) {
                out.write(new byte[1024]);
            }
        });
        String msg = String.valueOf(e.getMessage());
        System.out.println("without the CA: " + msg);
        assertTrue(msg.toLowerCase(Locale.ROOT).contains("certificate"), msg);
        assertTrue(msg.contains("without-ca"), "names the key: " + msg);
        assertFalse(msg.contains(S3Test.secretKey()), "no secret: " + msg);
    }

    /** Whether the CA's certificate is in SSL_CERT_FILE or a file of SSL_CERT_DIR (the roots the native client also reads). */
    private static boolean caInEnvironmentRoots() throws IOException {
        String ca = Files.readString(Paths.get(required("S3NATIVE_TEST_TLS_CA")));
        String body = ca.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        java.util.List<java.nio.file.Path> files = new java.util.ArrayList<>();
        String file = System.getenv("SSL_CERT_FILE");
        if (file != null && Files.isRegularFile(Paths.get(file))) {
            files.add(Paths.get(file));
        }
        String dir = System.getenv("SSL_CERT_DIR");
        if (dir != null && Files.isDirectory(Paths.get(dir))) {
            try (java.util.stream.Stream<java.nio.file.Path> list = Files.list(Paths.get(dir))) {
                list.filter(Files::isRegularFile).forEach(files::add);
            }
        }
        for (java.nio.file.Path f : files) {
            if (new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.ISO_8859_1).replaceAll("\\s", "").contains(body)) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aValueWithoutACertificateNamesTheKey() throws Exception {
        Map<String, String> settings = tlsSettings();
        settings.put("fs.s3a.native.trusted.certificates", "not a certificate");
        InvalidSettingException e = assertThrows(InvalidSettingException.class,
                () -> S3NativeOutputStream.validateSettings("any-bucket", settings));
        assertTrue(e.getSetting().equals("fs.s3a.native.trusted.certificates"), e.getMessage());
    }
}
