package io.s3native;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A {@link CredentialsProvider} registered with the native library, with its native cache
 * (see {@link Credentials}). Streams opened with the same source share one native S3 client.
 * {@link #close()} (or the garbage collector) drops this handle; streams still using the
 * source keep it alive.
 */
public final class CredentialSource implements AutoCloseable {
    private static final Cleaner CLEANER = NativeHandle.cleaner("s3native-credentials-cleaner");

    private final String description;
    private final Handle handle;
    private final Cleaner.Cleanable cleanable;

    /** The native handle, freed once: at close or by the Cleaner, when no open is using it. */
    private static final class Handle implements Runnable {
        private long ptr;
        private int uses;
        private boolean closed;

        Handle(long ptr) {
            this.ptr = ptr;
        }

        synchronized long acquire() throws IOException {
            if (closed) {
                throw new IOException("the credential source is closed");
            }
            uses++;
            return ptr;
        }

        void release() {
            long p;
            synchronized (this) {
                if (--uses > 0 || !closed || ptr == 0) {
                    return;
                }
                p = ptr;
                ptr = 0;
            }
            Native.freeCredentialSource(p);
        }

        @Override
        public void run() {
            long p;
            synchronized (this) {
                closed = true;
                if (uses > 0 || ptr == 0) {
                    return;
                }
                p = ptr;
                ptr = 0;
            }
            Native.freeCredentialSource(p);
        }
    }

    /** A native call that takes the source's handle. */
    interface Use<T> {
        T run(long handle) throws IOException;
    }

    private CredentialSource(long ptr, String description) {
        this.description = description;
        this.handle = new Handle(ptr);
        this.cleanable = CLEANER.register(this, handle);
    }

    /**
     * Register {@code provider}; {@code description} names it in error messages (no secrets).
     */
    public static CredentialSource of(CredentialsProvider provider, String description) throws IOException {
        Objects.requireNonNull(provider, "provider");
        Native.load();
        // Native I/O threads carry no context class loader of the application's (Spark puts
        // --jars and --packages in a child loader): the provider runs with the one of the
        // thread that registered it, as it would in the JVM.
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        CredentialsProvider withLoader = () -> {
            Thread t = Thread.currentThread();
            ClassLoader before = t.getContextClassLoader();
            t.setContextClassLoader(loader);
            try {
                return provider.getCredentials();
            } finally {
                t.setContextClassLoader(before);
            }
        };
        return new CredentialSource(Native.credentialSource(withLoader, description), description);
    }

    /**
     * Register an AWS SDK credentials provider: an SDK v2
     * {@code software.amazon.awssdk.auth.credentials.AwsCredentialsProvider} (its
     * {@code resolveCredentials()}, with the session token and expiry when the credentials
     * carry them) or an SDK v1 {@code com.amazonaws.auth.AWSCredentialsProvider} (its
     * {@code getCredentials()}, with the session token; no expiry). Found by reflection, so
     * neither SDK is needed on the classpath.
     *
     * @throws IllegalArgumentException when {@code provider} is neither
     */
    public static CredentialSource fromAwsSdk(Object provider, String description) throws IOException {
        return of(awsSdkAdapter(provider), description);
    }

    static CredentialsProvider awsSdkAdapter(Object provider) {
        Objects.requireNonNull(provider, "provider");
        Method v2 = publicMethod(provider.getClass(), "resolveCredentials");
        if (v2 != null) {
            return () -> fromV2(invoke(v2, provider));
        }
        Method v1 = publicMethod(provider.getClass(), "getCredentials");
        if (v1 != null && v1.getReturnType().getName().equals("com.amazonaws.auth.AWSCredentials")) {
            return () -> fromV1(invoke(v1, provider));
        }
        throw new IllegalArgumentException(provider.getClass().getName() + " is not an AWS SDK v1 or v2 credentials provider");
    }

    private static Credentials fromV2(Object c) throws IOException {
        String token = (String) optional(c, "sessionToken");
        Object expiry = optional(c, "expirationTime");
        Instant expiration = expiry instanceof Optional ? (Instant) ((Optional<?>) expiry).orElse(null) : null;
        return new Credentials((String) call(c, "accessKeyId"), (String) call(c, "secretAccessKey"), token, expiration);
    }

    private static Credentials fromV1(Object c) throws IOException {
        String token = (String) optional(c, "getSessionToken");
        return new Credentials((String) call(c, "getAWSAccessKeyId"), (String) call(c, "getAWSSecretKey"), token, null);
    }

    /** A public method without parameters, or null. */
    private static Method publicMethod(Class<?> c, String name) {
        try {
            Method m = c.getMethod(name);
            m.setAccessible(true); // the public method of a class that is not public itself
            return m;
        } catch (NoSuchMethodException | RuntimeException e) {
            return null;
        }
    }

    private static Object call(Object target, String name) throws IOException {
        Method m = publicMethod(target.getClass(), name);
        if (m == null) {
            throw new IOException(target.getClass().getName() + " has no " + name + "()");
        }
        return invoke(m, target);
    }

    private static Object optional(Object target, String name) throws IOException {
        Method m = publicMethod(target.getClass(), name);
        return m == null ? null : invoke(m, target);
    }

    private static Object invoke(Method m, Object target) throws IOException {
        try {
            return m.invoke(target);
        } catch (InvocationTargetException e) {
            Throwable t = e.getCause();
            if (t instanceof IOException) {
                throw (IOException) t;
            }
            throw new IOException("getting credentials: " + t, t);
        } catch (IllegalAccessException e) {
            throw new IOException("getting credentials: " + e, e);
        }
    }

    /**
     * Run {@code use} with the native handle, which stays valid meanwhile (the native side
     * keeps its own reference to the source from then on).
     *
     * @throws IOException when the source was closed
     */
    <T> T with(Use<T> use) throws IOException {
        long p = handle.acquire();
        try {
            return use.run(p);
        } finally {
            handle.release();
            java.lang.ref.Reference.reachabilityFence(this);
        }
    }

    /** {@link #with} for an optional source: 0 stands for none. */
    static <T> T with(CredentialSource source, Use<T> use) throws IOException {
        return source == null ? use.run(0) : source.with(use);
    }

    /** What it was registered as. */
    public String getDescription() {
        return description;
    }

    /** Drop this handle (streams that use the source keep it). */
    @Override
    public void close() {
        cleanable.clean();
    }

    @Override
    public String toString() {
        return "CredentialSource{" + description + "}";
    }
}
