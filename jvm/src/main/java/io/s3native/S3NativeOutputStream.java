package io.s3native;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An {@link OutputStream} that writes one S3 object through the native multipart writer.
 *
 * <p>Bytes go from the caller's array or buffer straight into the native part buffer (one
 * copy); {@link #write(int)} collects bytes in a small Java buffer first. Full parts upload on
 * a native thread pool while the caller goes on; memory is bounded process-wide and a write
 * blocks while it is spent. {@link #flush()} never cuts a part.
 *
 * <p>{@link #close()} finishes per {@link Mode} and a second close does nothing;
 * {@link #closeAndGetResult()} also returns the {@link UploadResult}. {@link #abort()}
 * discards the upload, from any thread, also while another thread is blocked in a write.
 * A stream that becomes unreachable without close is aborted (never completed), and uploads
 * still open when the JVM exits are aborted by a shutdown hook. The rules of every state
 * (open, completing, aborted, failed, closed) are the native writer's, the same from Rust,
 * C and Java; this class forwards and keeps only the handle's lifetime.
 *
 * <p>Exceptions: {@link IllegalArgumentException} for bad arguments or settings,
 * {@link UnsupportedSettingException} for settings the native writer cannot honour,
 * {@link java.io.FileNotFoundException} for a missing bucket,
 * {@link java.nio.file.AccessDeniedException} for a 403, {@link java.nio.file.FileAlreadyExistsException} when
 * a {@link Mode#CREATE_IF_ABSENT} close finds an object at the key, {@link java.io.InterruptedIOException}
 * when the thread was interrupted during a blocking write or close (the interrupt flag stays
 * set; the upload is aborted), {@link IOException} otherwise. Messages carry the S3 error code
 * where S3 gave one. After a failure every call fails. When the native library cannot load
 * (see {@link NativeLibrary}), opening a stream, {@link #complete} and {@link #abort(UploadResult, Map)}
 * throw an {@link IOException} naming why, the same on the first and every later call
 * ({@link #globalStatistics()}: an {@link java.io.UncheckedIOException} with that message).
 *
 * <p>Not for concurrent writes from several threads (calls are serialised), except
 * {@link #abort()}.
 */
public final class S3NativeOutputStream extends OutputStream {
    /** What close does with the upload. */
    public enum Mode {
        /** Close makes the object visible (CompleteMultipartUpload, or one PUT for small data). */
        PUBLISH,
        /** Close uploads every part but does not complete; see {@link #complete} and {@link #abort(UploadResult, Map)}. */
        DEFERRED,
        /**
         * As {@link #PUBLISH}, but close never replaces an existing object ({@code If-None-Match: *} on the PUT or
         * the complete): an object already at the key fails close with
         * {@link java.nio.file.FileAlreadyExistsException} and the upload is aborted.
         */
        CREATE_IF_ABSENT
    }

    /** How the Hadoop line on the classpath marks S3A magic-committer paths. */
    public enum MagicLayout {
        /** Hadoop 3.3.x: a path element exactly {@code __magic}. */
        MAGIC,
        /** Hadoop 3.4.0 and later: the first path element starting with {@code __magic_job-}. */
        MAGIC_JOB
    }

    /** The form of the {@code etags} of a {@code .pending} file that the Hadoop on the classpath reads. */
    public enum PendingEtags {
        /** Strings without quotes (Hadoop 3.3, AWS SDK v1). */
        UNQUOTED,
        /** Strings as S3 returns them, quotes included (Hadoop 3.4.0/3.4.1). */
        QUOTED,
        /** Objects {@code {"etag":..., "checksumAlgorithm":..., "checksum":...}} (Hadoop 3.5.0). */
        OBJECTS
    }

    /** Size of the buffer behind {@link #write(int)}. */
    static final int SMALL_BUFFER = 1024;

    private static final Cleaner CLEANER = NativeHandle.cleaner("s3native-cleaner");

    private final String bucket;
    private final String key;
    private final Mode mode;
    private final NativeHandle handle;
    private final ReentrantLock lock = new ReentrantLock();

    // Guarded by lock: bytes of write(int) not yet handed to the native writer.
    private final byte[] small = new byte[SMALL_BUFFER];
    private int smallCount;

    /** The result of the successful close, kept so that every call returns the same object. */
    private volatile UploadResult result;

    /**
     * Open a stream to {@code s3://bucket/key}. No request is sent until data needs one.
     *
     * @param settings the {@code fs.s3a.*} keys (endpoint, credentials, part size, ...)
     * @throws IllegalArgumentException for a bad bucket, key or setting
     * @throws UnsupportedSettingException for a setting the native writer cannot honour
     */
    public S3NativeOutputStream(String bucket, String key, Mode mode, Map<String, String> settings) throws IOException {
        this(bucket, key, mode, settings, null);
    }

    /**
     * {@link #S3NativeOutputStream(String, String, Mode, Map)} with credentials from
     * {@code credentials} instead of the settings' keys (null: the settings' keys, else the
     * {@code AWS_*} environment variables).
     */
    public S3NativeOutputStream(String bucket, String key, Mode mode, Map<String, String> settings, CredentialSource credentials)
            throws IOException {
        this(bucket, key, Objects.requireNonNull(mode, "mode"), open(bucket, key, mode, settings, credentials));
    }

    private static long open(String bucket, String key, Mode mode, Map<String, String> settings, CredentialSource credentials)
            throws IOException {
        Native.load();
        String[] kv = toArray(settings);
        return CredentialSource.with(credentials, c -> Native.open(bucket, key, mode.name(), kv, c));
    }


    private S3NativeOutputStream(String bucket, String key, Mode mode, long ptr) {
        this.bucket = bucket;
        this.key = key;
        this.mode = mode;
        this.handle = new NativeHandle(ptr);
        CLEANER.register(this, handle);
    }

    /**
     * Open a stream for a file under an S3A magic-committer path, written as S3A's magic
     * committer writes it (native/src/magic.rs): the multipart upload goes to the final key and
     * is never completed; close uploads at least one part, then PUTs the marker at
     * {@code magicKey} ({@code x-hadoop-s3a-magic-data-length}) and {@code magicKey + ".pending"}
     * (SinglePendingCommit JSON with {@code etags} in the given form), and returns the deferred
     * result. {@link #getKey()} is the magic key.
     *
     * @param magicKey the object key of the magic path (no leading '/')
     * @param uri the magic path's URI, recorded in the {@code .pending} file
     * @throws IllegalArgumentException when {@code magicKey} is not a magic path under {@code layout},
     *     or for a bad setting
     * @throws UnsupportedSettingException for a setting the native writer cannot honour
     */
    public static S3NativeOutputStream openMagic(String bucket, String magicKey, String uri, MagicLayout layout,
            PendingEtags etags, Map<String, String> settings) throws IOException {
        return openMagic(bucket, magicKey, uri, layout, etags, settings, null);
    }

    /** {@link #openMagic(String, String, String, MagicLayout, PendingEtags, Map)} with credentials from {@code credentials}. */
    public static S3NativeOutputStream openMagic(String bucket, String magicKey, String uri, MagicLayout layout,
            PendingEtags etags, Map<String, String> settings, CredentialSource credentials) throws IOException {
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(etags, "etags");
        Native.load();
        String[] kv = toArray(settings);
        long ptr = CredentialSource.with(credentials, c -> Native.openMagic(bucket, magicKey, uri, layout.name(), etags.name(), kv, c));
        return new S3NativeOutputStream(bucket, magicKey, Mode.DEFERRED, ptr);
    }

    public String getBucket() {
        return bucket;
    }

    public String getKey() {
        return key;
    }

    public Mode getMode() {
        return mode;
    }

    /** Run {@code c} on the native writer, keeping the handle alive (and this stream reachable) meanwhile. */
    private <T> T call(NativeHandle.Call<T> c) throws IOException {
        return handle.call(c, this);
    }

    @Override
    public void write(int b) throws IOException {
        lock.lock();
        try {
            if (smallCount == 0) {
                call(p -> {
                    Native.checkOpen(p); // fail now, not at the hand-over, after close, abort or a failure
                    return null;
                });
            }
            small[smallCount++] = (byte) b;
            if (smallCount == small.length) {
                call(this::drainSmall);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Copy {@code len} bytes of {@code b} from {@code off} into the native part buffer.
     *
     * @throws IllegalArgumentException for a null array or an offset or length out of range
     */
    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        lock.lock();
        try {
            call(p -> {
                drainSmall(p);
                Native.write(p, b, off, len);
                return null;
            });
        } finally {
            lock.unlock();
        }
    }

    /**
     * Write the remaining bytes of {@code src} (heap or direct) and advance its position to
     * its limit. Direct and array-backed buffers are copied once, straight into the native
     * part buffer; a read-only heap buffer goes through the small Java buffer.
     */
    public void write(ByteBuffer src) throws IOException {
        if (src == null) {
            throw new IllegalArgumentException("the ByteBuffer is null");
        }
        lock.lock();
        try {
            call(p -> {
                drainSmall(p);
                int n = src.remaining();
                int pos = src.position();
                if (src.isDirect()) {
                    Native.writeDirect(p, src, pos, n);
                    src.position(pos + n);
                } else if (src.hasArray()) {
                    Native.write(p, src.array(), src.arrayOffset() + pos, n);
                    src.position(pos + n);
                } else {
                    Native.checkOpen(p);
                    while (src.hasRemaining()) {
                        int chunk = Math.min(small.length, src.remaining());
                        src.get(small, 0, chunk);
                        Native.write(p, small, 0, chunk);
                    }
                }
                return null;
            });
        } finally {
            lock.unlock();
        }
    }

    /**
     * Hand bytes buffered by {@link #write(int)} to the native writer. Never cuts a part and
     * never sends a request. Does nothing after a successful close; throws after abort or a
     * failure.
     */
    @Override
    public void flush() throws IOException {
        lock.lock();
        try {
            if (result != null) {
                return; // flushing a closed stream does nothing
            }
            call(p -> {
                Native.checkOpen(p);
                return drainSmall(p);
            });
        } finally {
            lock.unlock();
        }
    }

    /** {@link #closeAndGetResult()} without the result. */
    @Override
    public void close() throws IOException {
        closeAndGetResult();
    }

    /**
     * Finish the upload (see {@link Mode}) and return its result. A second call returns the
     * same result. After {@link #abort()} or a failure it throws, and never completes.
     */
    public UploadResult closeAndGetResult() throws IOException {
        lock.lock();
        try {
            if (result == null) {
                result = call(p -> {
                    drainSmall(p);
                    return UploadResult.fromJson(Native.close(p));
                });
                // Closed: free the native writer now. Later calls get its answer for a closed
                // writer, taken here; close returns the result, abort does nothing.
                IOException closedAnswer = null;
                try {
                    call(p -> {
                        Native.checkOpen(p);
                        return null;
                    });
                } catch (IOException e) {
                    closedAnswer = e;
                }
                handle.dispose(closedAnswer);
            }
            return result;
        } finally {
            lock.unlock();
        }
    }

    /** The result once {@link #close()} succeeded, else null. */
    public UploadResult getResult() {
        return result;
    }

    /**
     * Discard the upload: stop, abort the multipart upload. Works from any thread, also while
     * another thread is blocked in a write or close (that call then fails). Does nothing after
     * a successful close (use {@link #abort(UploadResult, Map)} for a deferred upload) or a
     * second time. An abort racing a close on another thread that is already completing the
     * upload does not stop it: that close then succeeds, and this call throws.
     *
     * @throws IOException when the abort itself failed after retries (the message names the
     *     upload id so an operator can clean up), or came too late: a close on another thread
     *     was already completing the upload
     */
    public void abort() throws IOException {
        long p;
        try {
            p = handle.acquire();
        } catch (IOException freed) {
            return; // closed, and its native writer freed: abort after close does nothing
        }
        try {
            Native.abort(p);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    /** True once {@link #abort()} (or the shutdown hook) aborted this stream; false after a successful close. */
    public boolean isAborted() {
        if (result != null) {
            return false;
        }
        try {
            return "ABORTED".equals(call(Native::state));
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Where the native writer is: {@code OPEN}, {@code COMPLETING}, {@code ABORTED},
     * {@code FAILED} or {@code CLOSED} (the Rust {@code WriterState}'s names).
     */
    public String getState() throws IOException {
        return result != null ? "CLOSED" : call(Native::state);
    }

    /** The writer's statistics now (after close, those at close). Never waits for a write. */
    public Statistics getStatistics() throws IOException {
        UploadResult r = result;
        if (r != null) {
            return r.getStatistics();
        }
        return new Statistics(call(Native::statistics));
    }

    /**
     * The stream's statistics in S3A's names, as S3A's block output stream reports them
     * (native/src/s3a_stats.rs, the one mapping): Hadoop's IOStatisticsSnapshot fields by name
     * ({@code counters}, {@code gauges}, {@code minimums}, {@code maximums} to {@code Long}s,
     * {@code meanstatistics} to maps of {@code samples} and {@code sum}). The Hadoop layer
     * says what only it knows: a magic file, hflush and hsync calls, an abort.
     */
    public Map<String, Object> getS3AStatistics(boolean magic, long hflush, long hsync, boolean aborted) throws IOException {
        UploadResult r = result;
        if (r != null) {
            return Native.s3aStatistics(0, r.toJson(), magic, hflush, hsync, aborted);
        }
        return call(p -> Native.s3aStatistics(p, null, magic, hflush, hsync, aborted));
    }

    // ---- static API -------------------------------------------------------------------

    /**
     * Complete a deferred upload from its result, in this or any other JVM. Completing an
     * upload already completed with this result succeeds.
     *
     * @throws java.io.FileNotFoundException when the upload is gone (aborted)
     */
    public static void complete(UploadResult result, Map<String, String> settings) throws IOException {
        complete(result, settings, null);
    }

    /** {@link #complete(UploadResult, Map)} with credentials from {@code credentials} (null: the settings' keys). */
    public static void complete(UploadResult result, Map<String, String> settings, CredentialSource credentials) throws IOException {
        Native.load();
        String json = UploadResult.requireJson(result);
        String[] kv = toArray(settings);
        CredentialSource.with(credentials, c -> {
            Native.complete(json, kv, c);
            return null;
        });
    }

    /** Abort a deferred upload from its result, in this or any other JVM; a gone upload counts as aborted. */
    public static void abort(UploadResult result, Map<String, String> settings) throws IOException {
        abort(result, settings, null);
    }

    /** {@link #abort(UploadResult, Map)} with credentials from {@code credentials} (null: the settings' keys). */
    public static void abort(UploadResult result, Map<String, String> settings, CredentialSource credentials) throws IOException {
        Native.load();
        String json = UploadResult.requireJson(result);
        String[] kv = toArray(settings);
        CredentialSource.with(credentials, c -> {
            Native.abortUpload(json, kv, c);
            return null;
        });
    }

    /**
     * Check {@code settings} for writing to {@code bucket} as opening a stream would, without
     * sending a request; returns what was adjusted (S3A's leniency, e.g. a
     * {@code fs.s3a.multipart.size} below 5 MiB) for the caller to report once.
     *
     * @throws IllegalArgumentException naming the key of an invalid value
     * @throws UnsupportedSettingException naming a setting the native writer cannot honour
     * @throws IOException when the native library cannot load
     */
    public static java.util.List<String> validateSettings(String bucket, Map<String, String> settings) throws IOException {
        return checkSettings(bucket, settings).warnings();
    }

    /**
     * {@link #validateSettings}, with the values a stream opened with {@code settings} uses, as
     * the native writer computes them (defaults and S3A's leniency applied).
     *
     * @throws IllegalArgumentException naming the key of an invalid value
     * @throws UnsupportedSettingException naming a setting the native writer cannot honour
     * @throws IOException when the native library cannot load
     */
    public static SettingsCheck checkSettings(String bucket, Map<String, String> settings) throws IOException {
        Native.load();
        return new SettingsCheck(Native.validate(bucket, toArray(settings)));
    }

    /** What {@link #checkSettings} found. */
    public static final class SettingsCheck {
        /** The names of {@link #effective()}, as the native library sends them. */
        public static final java.util.List<String> EFFECTIVE_NAMES = java.util.List.of("memory_budget", "runtime_threads",
                "part_size", "fixed_part_size", "max_parts", "parts_in_flight", "target_throughput_mbps", "connections",
                "request_timeout_ms", "max_retries",
                "max_concurrent_uploads", "endpoint", "region", "credentials");

        private final java.util.List<String> warnings;
        private final Map<String, Object> effective;

        @SuppressWarnings("unchecked")
        SettingsCheck(Map<String, Object> nativeForm) {
            this.warnings = java.util.List.copyOf((java.util.List<String>) nativeForm.get("warnings"));
            this.effective = java.util.Collections.unmodifiableMap((Map<String, Object>) nativeForm.get("effective"));
        }

        /** What was adjusted, to report once (one WARN each). */
        public java.util.List<String> warnings() {
            return warnings;
        }

        /**
         * The effective values by the native writer's names: {@code memory_budget},
         * {@code part_size} (bytes, Long), {@code fixed_part_size} (Boolean), {@code max_parts},
         * {@code parts_in_flight}, {@code target_throughput_mbps}, {@code connections},
         * {@code runtime_threads}, {@code request_timeout_ms},
         * {@code max_retries}, {@code max_concurrent_uploads} (Long), {@code endpoint} (String or
         * null), {@code region}, {@code credentials} (String: where they come from, no secret).
         */
        public Map<String, Object> effective() {
            return effective;
        }

        /** The effective value {@code name} as a number; throws when it is not one. */
        public long number(String name) {
            Object v = effective.get(name);
            if (!(v instanceof Long)) {
                throw new IllegalStateException("the native writer reported no number " + name + ": " + effective);
            }
            return (Long) v;
        }
    }

    /**
     * Process-wide statistics of every writer of this copy of the native library.
     *
     * @throws java.io.UncheckedIOException when the library cannot load (the message names why)
     */
    public static Statistics globalStatistics() {
        Native.init();
        return new Statistics(Native.globalStatistics());
    }

    /** Abort the uploads of every writer still open in this JVM (what the shutdown hook does); returns how many. */
    public static int abortOpenUploads() {
        if (!NativeLibrary.isAvailable()) {
            return 0; // no library, no writer
        }
        return Native.abortOpenUploads();
    }

    // ---- internals --------------------------------------------------------------------

    /** Hand the write(int) bytes to the native writer; the caller holds {@code lock}. */
    private Void drainSmall(long p) throws IOException {
        if (smallCount > 0) {
            int n = smallCount;
            smallCount = 0;
            Native.write(p, small, 0, n);
        }
        return null;
    }

    /** The JVM's maximum heap, by name, for the core's default memory budget (unless set). */
    static final String JVM_HEAP_MAX = "fs.s3a.native.jvm.heap.max";

    static String[] toArray(Map<String, String> settings) {
        if (settings == null) {
            settings = Map.of();
        }
        long heap = Runtime.getRuntime().maxMemory();
        boolean addHeap = heap != Long.MAX_VALUE && !settings.containsKey(JVM_HEAP_MAX);
        String[] kv = new String[settings.size() * 2 + (addHeap ? 2 : 0)];
        int i = 0;
        for (Map.Entry<String, String> e : settings.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new IllegalArgumentException("settings must not hold null keys or values (key " + e.getKey() + ")");
            }
            kv[i++] = e.getKey();
            kv[i++] = e.getValue();
        }
        if (addHeap) {
            kv[i++] = JVM_HEAP_MAX;
            kv[i] = Long.toString(heap);
        }
        return kv;
    }
}
