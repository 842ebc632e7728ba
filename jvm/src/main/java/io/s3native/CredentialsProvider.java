package io.s3native;

import java.io.IOException;

/**
 * Where the native writer gets credentials when they are not in its settings: the caller's
 * own provider, or an AWS SDK provider through {@link CredentialSource#fromAwsSdk(Object, String)}.
 * Called from native I/O threads (attached to the JVM), at most once a second for credentials
 * without an expiry and otherwise shortly before they expire; never while a writer's lock is
 * held. Must be thread-safe.
 */
@FunctionalInterface
public interface CredentialsProvider {
    /**
     * Current credentials.
     *
     * @throws IOException when none can be had (the request that needed them fails with the message)
     */
    Credentials getCredentials() throws IOException;
}
