package io.s3native;

import java.time.Instant;
import java.util.Objects;

/**
 * AWS credentials as a {@link CredentialsProvider} hands them to the native writer: an access
 * key id, a secret access key, an optional session token and an optional expiry. The native
 * side caches them until 5 minutes before the expiry (or half their remaining life when that
 * is shorter), or for one second when they have none. {@link #toString()} never shows the
 * secret or the token.
 */
public final class Credentials {
    private final String accessKeyId;
    private final String secretAccessKey;
    private final String sessionToken;
    private final Instant expiration;

    /**
     * @param sessionToken null for long-term keys
     * @param expiration when the credentials stop working, or null when unknown
     * @throws NullPointerException for a null key id or secret
     */
    public Credentials(String accessKeyId, String secretAccessKey, String sessionToken, Instant expiration) {
        this.accessKeyId = Objects.requireNonNull(accessKeyId, "accessKeyId");
        this.secretAccessKey = Objects.requireNonNull(secretAccessKey, "secretAccessKey");
        this.sessionToken = sessionToken;
        this.expiration = expiration;
    }

    public String getAccessKeyId() {
        return accessKeyId;
    }

    public String getSecretAccessKey() {
        return secretAccessKey;
    }

    /** The session token, or null. */
    public String getSessionToken() {
        return sessionToken;
    }

    /** The expiry, or null when unknown. */
    public Instant getExpiration() {
        return expiration;
    }

    /** The expiry in milliseconds since the epoch, or -1 when unknown (what the native side reads). */
    public long getExpirationEpochMillis() {
        return expiration == null ? -1 : expiration.toEpochMilli();
    }

    @Override
    public String toString() {
        return "Credentials{accessKeyId=" + accessKeyId + ", secretAccessKey=****"
                + (sessionToken != null ? ", sessionToken=****" : "") + ", expiration=" + expiration + "}";
    }
}
