package io.s3native;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Operations on the objects of one bucket through the native core (native/src/objects.rs):
 * whether an object exists (HeadObject), delete one (DeleteObject), many (DeleteObjects, 1,000
 * keys a request, keys that fail named in the exception), every object under a directory, and
 * a lazy listing of a directory, page by page, with names relative to it. The same settings
 * and credentials as {@link S3NativeOutputStream} and {@link S3NativeInputStream}; the same
 * clients and process-wide statistics.
 *
 * <p>A directory {@code d} is every key under {@code d/}; {@code ""} is the whole bucket.
 * Exceptions: {@link IllegalArgumentException} for a bad key or setting,
 * {@link java.io.FileNotFoundException} for a missing bucket,
 * {@link java.nio.file.AccessDeniedException} for a 403, {@link java.io.InterruptedIOException}
 * when the thread was interrupted, {@link IOException} otherwise; messages name the keys and
 * never carry a secret. Thread-safe, except a {@link Listing}, which is used by one thread
 * at a time.
 */
public final class S3NativeObjects implements AutoCloseable {
    private static final Cleaner CLEANER = NativeHandle.cleaner("s3native-objects-cleaner");

    private final String bucket;
    private final NativeHandle handle;

    /** Operations on {@code bucket} with the settings' keys (else the default chain). */
    public S3NativeObjects(String bucket, Map<String, String> settings) throws IOException {
        this(bucket, settings, null);
    }

    /**
     * Operations on {@code bucket}; sends no request.
     *
     * @param settings the {@code fs.s3a.*} keys (endpoint, region, path style, ...)
     * @param credentials where the keys come from; null: the settings' keys, else the default chain
     */
    public S3NativeObjects(String bucket, Map<String, String> settings, CredentialSource credentials) throws IOException {
        Native.load();
        String[] kv = S3NativeOutputStream.toArray(settings);
        long ptr = CredentialSource.with(credentials, c -> Native.objectsOpen(bucket, kv, c));
        this.bucket = bucket;
        this.handle = new NativeHandle(ptr, Native::objectsFree);
        CLEANER.register(this, handle);
    }

    public String getBucket() {
        return bucket;
    }

    private <T> T call(NativeHandle.Call<T> c) throws IOException {
        return handle.call(c, this);
    }

    /** Whether an object is at {@code key} (one HeadObject). */
    public boolean exists(String key) throws IOException {
        return head(key) >= 0;
    }

    /** The length in bytes of the object at {@code key}, or -1 when there is none. */
    public long head(String key) throws IOException {
        Map<String, Object> info = call(p -> Native.objectsHead(p, key));
        return info == null ? -1 : ((Number) info.get("size")).longValue();
    }

    /** Delete the object at {@code key}; a missing key is no error. */
    public void delete(String key) throws IOException {
        call(p -> {
            Native.objectsDelete(p, key);
            return null;
        });
    }

    /**
     * Delete the objects at {@code keys} in DeleteObjects requests of up to 1,000 keys. Keys that
     * S3 could not delete throw one exception naming them (the others are deleted).
     *
     * @return the keys deleted (missing keys count, as S3 counts them)
     */
    public long deleteAll(Collection<String> keys) throws IOException {
        String[] array = keys.toArray(new String[0]);
        Map<String, Object> outcome = call(p -> Native.objectsDeleteMany(p, array));
        return ((Number) outcome.get("deleted")).longValue();
    }

    /** Delete every object under directory {@code dir}; failures as {@link #deleteAll}. Returns the keys deleted. */
    public long deleteRecursively(String dir) throws IOException {
        Map<String, Object> outcome = call(p -> Native.objectsDeleteRecursively(p, dir));
        return ((Number) outcome.get("deleted")).longValue();
    }

    /** A lazy listing of every object under {@code dir}, names relative to it; no request until the first {@code hasNext}. */
    public Listing list(String dir) throws IOException {
        return new Listing(call(p -> Native.objectsList(p, dir)));
    }

    /** The requests sent so far, by name (the core's Statistics). */
    public Statistics statistics() throws IOException {
        return new Statistics(call(Native::objectsStatistics));
    }

    /** Free the native side; listings already open stay usable. */
    @Override
    public void close() {
        handle.dispose(null);
    }

    /**
     * The names under a directory, fetched a page (up to 1,000) at a time as they are
     * consumed. A failed page throws {@link UncheckedIOException} from {@link #hasNext()} or
     * {@link #next()} (its cause the {@link IOException}); {@link #close()} frees it early.
     */
    public static final class Listing implements Iterator<String>, AutoCloseable {
        private final NativeHandle handle;
        private final ArrayDeque<String> page = new ArrayDeque<>();
        private boolean done;

        private Listing(long ptr) {
            this.handle = new NativeHandle(ptr, Native::listingFree);
            CLEANER.register(this, handle);
        }

        @Override
        public boolean hasNext() {
            if (!page.isEmpty()) {
                return true;
            }
            if (done) {
                return false;
            }
            List<Map<String, Object>> next;
            try {
                long p = handle.acquire();
                try {
                    next = Native.listingNext(p);
                } finally {
                    handle.release();
                    Reference.reachabilityFence(this);
                }
            } catch (IOException e) {
                done = true;
                close();
                throw new UncheckedIOException(e.getMessage(), e);
            }
            if (next == null) {
                done = true;
                close();
                return false;
            }
            List<String> names = new ArrayList<>(next.size());
            for (Map<String, Object> o : next) {
                names.add((String) o.get("name"));
            }
            page.addAll(names);
            return !page.isEmpty() || hasNext();
        }

        @Override
        public String next() {
            if (!hasNext()) {
                throw new NoSuchElementException("the listing is done");
            }
            return page.poll();
        }

        @Override
        public void close() {
            handle.dispose(null);
        }
    }
}
