package io.s3native;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;

/**
 * An {@link InputStream} over one S3 object through the native reader (native/src/reader.rs).
 *
 * <p>The object's length and ETag come from the caller ({@link #open} with a length and
 * ETag) or from one HEAD at open; every GET is pinned to that ETag ({@code If-Match}), so an
 * object overwritten while it is read fails the read with an {@link IOException} naming the
 * key ({@link ObjectChangedException}) instead of mixing versions. Buffering, read-ahead, small-object and footer prefetch
 * follow the {@link ReadPolicy} and are the native reader's; this class keeps only the
 * position and the handle's lifetime.
 *
 * <p>Reads copy once: {@link #read(byte[], int, int)} from the native reader's buffers
 * straight into the array, {@link #read(ByteBuffer)} into a direct buffer without a Java
 * copy.
 * {@link #readAt(long, byte[], int, int)} (pread) does not move the position nor disturb the
 * read-ahead, and may run on other threads while a stream read is in progress.
 * {@link #readRanges} starts a vectored read whose ranges complete in any order.
 *
 * <p>Semantics, as S3A's input stream: a missing object fails {@link #open} with
 * {@link java.io.FileNotFoundException}; {@link #seek} is lazy (no request), a negative
 * position throws {@link EOFException}, a position past the end is accepted and reads there
 * return -1; {@link #available()} is the bytes left to the end of the object (at most
 * {@link Integer#MAX_VALUE}); {@link #unbuffer()} frees the buffers and keeps the stream
 * usable; a second {@link #close()} does nothing; every read, seek or {@code available}
 * after close throws {@link IOException}. A stream that becomes unreachable without close is
 * freed by a {@link Cleaner}.
 */
public final class S3NativeInputStream extends InputStream {
    /** The read policy: how the native reader fetches (ReadPolicy's serde names). */
    public enum ReadPolicy {
        /** Whole small objects, footer prefetch for .parquet/.orc keys, read-ahead once reads are sequential. */
        ADAPTIVE,
        /** Read-ahead from the first read. */
        SEQUENTIAL,
        /** No read-ahead: each read fetches what it needs. */
        RANDOM,
        /** Columnar files (Parquet, ORC): the footer region prefetched at open, no read-ahead. */
        COLUMNAR,
        /** The whole object in parallel ranges from the first read. */
        WHOLE_FILE
    }

    /** The message of a call on a closed stream (Hadoop's FSExceptionMessages.STREAM_IS_CLOSED). */
    public static final String STREAM_IS_CLOSED = "Stream is closed!";

    private static final Cleaner CLEANER = NativeHandle.cleaner("s3native-reader-cleaner");

    private final String bucket;
    private final String key;
    private final long length;
    private volatile String etag;
    private final NativeHandle handle;
    private final byte[] one = new byte[1];
    /** The position of the next stream read; guarded by this. */
    private long pos;
    private volatile boolean closed;

    /** Open {@code s3://bucket/key} with the settings' read policy (one HEAD for the length and ETag). */
    public S3NativeInputStream(String bucket, String key, Map<String, String> settings) throws IOException {
        this(bucket, key, settings, null, (String) null, -1, -1, null, -1);
    }

    /**
     * Open {@code s3://bucket/key}.
     *
     * @param settings the {@code fs.s3a.*} keys (endpoint, region, {@code fs.s3a.native.read.*}, ...)
     * @param credentials where the keys come from; null: the settings' keys, else the default chain
     * @param length the object's length in bytes, or -1 to HEAD it (with {@code etag})
     * @param etag the object's ETag, quoted as S3 returns it or not, or null to HEAD it
     * @throws java.io.FileNotFoundException for a missing object
     * @throws IllegalArgumentException for a bad bucket, key or setting
     */
    public static S3NativeInputStream open(String bucket, String key, Map<String, String> settings, CredentialSource credentials,
            ReadPolicy policy, long length, String etag) throws IOException {
        return new S3NativeInputStream(bucket, key, settings, credentials, Objects.requireNonNull(policy, "policy").name(), length,
                -1, etag, -1);
    }

    /**
     * {@link #open(String, String, Map, CredentialSource, ReadPolicy, long, String)} with the
     * policy as a {@link ReadPolicy} name or a Hadoop read-policy list
     * ({@code fs.option.openfile.read.policy}, e.g. {@code "parquet, vector, random, adaptive"}:
     * the first word the native reader knows, mapped as S3A maps them); null, or a list without
     * a known word: the settings' policy ({@code fs.s3a.native.read.policy}, else
     * {@code fs.s3a.experimental.input.fadvise}, else adaptive).
     */
    public static S3NativeInputStream open(String bucket, String key, Map<String, String> settings, CredentialSource credentials,
            String policy, long length, String etag) throws IOException {
        return new S3NativeInputStream(bucket, key, settings, credentials, policy, length, -1, etag, -1);
    }

    /**
     * {@link #open(String, String, Map, CredentialSource, String, long, String)} for a split of
     * the object that ends at {@code splitEnd} ({@code fs.option.openfile.split.end}; -1: none):
     * a hint, not a limit. The read-ahead stops there; reads past it still return the object's
     * bytes.
     */
    public static S3NativeInputStream open(String bucket, String key, Map<String, String> settings, CredentialSource credentials,
            String policy, long length, String etag, long splitEnd) throws IOException {
        return new S3NativeInputStream(bucket, key, settings, credentials, policy, length, -1, etag, splitEnd);
    }

    /**
     * {@link #open(String, String, Map, CredentialSource, String, long, String, long)} with a
     * length the caller declares without a file status ({@code declaredLength}, openFile's
     * {@code fs.option.openfile.length}; -1: none), used when {@code length} is -1 as the S3A
     * input stream of the settings uses it ({@code fs.s3a.input.stream.type} by the Hadoop line's
     * rule, {@code fs.s3a.native.input.stream.rule}): the classic and prefetching streams trust
     * it (no HEAD); the analytics stream, given no {@code etag}, does not, and the native reader
     * then sends a HEAD for the real length and ETag ({@link #getLength()} is the real one).
     */
    public static S3NativeInputStream open(String bucket, String key, Map<String, String> settings, CredentialSource credentials,
            String policy, long length, long declaredLength, String etag, long splitEnd) throws IOException {
        return new S3NativeInputStream(bucket, key, settings, credentials, policy, length, declaredLength, etag, splitEnd);
    }

    private S3NativeInputStream(String bucket, String key, Map<String, String> settings, CredentialSource credentials,
            String policy, long length, long declaredLength, String etag, long splitEnd) throws IOException {
        Native.load();
        String[] kv = S3NativeOutputStream.toArray(settings);
        String options = options(policy, length, declaredLength, etag, splitEnd);
        long ptr = CredentialSource.with(credentials, c -> Native.openReader(bucket, key, kv, c, options));
        this.handle = new NativeHandle(ptr, Native::freeReader);
        CLEANER.register(this, handle);
        this.bucket = bucket;
        this.key = key;
        this.length = call(Native::readerLength);
        this.etag = call(Native::readerEtag);
    }

    /** The native reader's options (ReadOptions of native/src/reader.rs) as JSON by name; unknowns left out. */
    static String options(String policy, long length, long declaredLength, String etag, long splitEnd) {
        StringBuilder b = new StringBuilder("{");
        if (policy != null) {
            b.append("\"policy\":").append(json(policy));
        }
        if (length >= 0) {
            b.append(b.length() > 1 ? "," : "").append("\"length\":").append(length);
        }
        if (declaredLength >= 0) {
            b.append(b.length() > 1 ? "," : "").append("\"declared_length\":").append(declaredLength);
        }
        if (etag != null) {
            b.append(b.length() > 1 ? "," : "").append("\"etag\":").append(json(etag));
        }
        if (splitEnd >= 0) {
            b.append(b.length() > 1 ? "," : "").append("\"split_end\":").append(splitEnd);
        }
        return b.append('}').toString();
    }

    /** {@code s} as a JSON string. */
    private static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    public String getBucket() {
        return bucket;
    }

    public String getKey() {
        return key;
    }

    /** The object's length in bytes, as given (or declared and used) at open, or found by the HEAD. */
    public long getLength() {
        return length;
    }

    /**
     * The ETag every GET is pinned to; opened with a length and no ETag (no HEAD), the first
     * GET's answer gives it, and until then this is empty.
     */
    public String getEtag() {
        if (etag.isEmpty() && !closed) {
            try {
                etag = call(Native::readerEtag);
            } catch (IOException e) {
                return etag;
            }
        }
        return etag;
    }

    private <T> T call(NativeHandle.Call<T> c) throws IOException {
        long p;
        try {
            p = handle.acquire();
        } catch (IOException e) {
            throw new IOException(STREAM_IS_CLOSED + " s3://" + bucket + "/" + key);
        }
        try {
            return c.run(p);
        } finally {
            handle.release();
            Reference.reachabilityFence(this);
        }
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException(STREAM_IS_CLOSED + " s3://" + bucket + "/" + key);
        }
    }

    @Override
    public synchronized int read() throws IOException {
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    /** Up to {@code len} bytes at the position into {@code b}; -1 at the end of the object. */
    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        checkOpen();
        Objects.checkFromIndexSize(off, len, Objects.requireNonNull(b, "the byte array").length);
        if (len == 0) {
            return 0;
        }
        if (pos >= length) {
            return -1;
        }
        int n = call(p -> Native.read(p, pos, b, off, len));
        if (n > 0) {
            pos += n;
        }
        return n;
    }

    /**
     * Read up to {@code dst.remaining()} bytes at the position into {@code dst} and advance
     * its position; -1 at the end of the object. A direct buffer is filled by the native
     * reader without a Java copy.
     */
    public synchronized int read(ByteBuffer dst) throws IOException {
        checkOpen();
        Objects.requireNonNull(dst, "the ByteBuffer");
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (pos >= length) {
            return -1;
        }
        int n = transfer(pos, dst, false);
        if (n > 0) {
            pos += n;
        }
        return n;
    }

    /** One native read (stream or pread) of {@code dst.remaining()} bytes at {@code position}; moves dst's position. */
    private int transfer(long position, ByteBuffer dst, boolean pread) throws IOException {
        int at = dst.position();
        int len = dst.remaining();
        int n;
        if (dst.isDirect()) {
            n = call(p -> pread ? Native.readAtDirect(p, position, dst, at, len) : Native.readDirect(p, position, dst, at, len));
        } else if (dst.hasArray()) {
            byte[] a = dst.array();
            int off = dst.arrayOffset() + at;
            n = call(p -> pread ? Native.readAt(p, position, a, off, len) : Native.read(p, position, a, off, len));
        } else {
            byte[] tmp = new byte[len]; // a read-only heap buffer cannot be written; fail as ByteBuffer.put does
            n = call(p -> pread ? Native.readAt(p, position, tmp, 0, len) : Native.read(p, position, tmp, 0, len));
            if (n > 0) {
                dst.put(tmp, 0, n);
                return n;
            }
        }
        if (n > 0) {
            dst.position(at + n);
        }
        return n;
    }

    /**
     * Positioned read (pread): up to {@code len} bytes at {@code position}, neither moving the
     * stream's position nor its read-ahead; -1 when {@code position} is at or past the end.
     *
     * @throws EOFException for a negative position
     */
    public int readAt(long position, byte[] b, int off, int len) throws IOException {
        checkOpen();
        Objects.checkFromIndexSize(off, len, Objects.requireNonNull(b, "the byte array").length);
        if (position < 0) {
            throw new EOFException("Cannot seek to a negative offset " + position + " in s3://" + bucket + "/" + key);
        }
        if (len == 0) {
            return 0;
        }
        if (position >= length) {
            return -1;
        }
        return call(p -> Native.readAt(p, position, b, off, len));
    }

    /** {@link #readAt(long, byte[], int, int)} into {@code dst} (heap or direct), advancing its position. */
    public int readAt(long position, ByteBuffer dst) throws IOException {
        checkOpen();
        Objects.requireNonNull(dst, "the ByteBuffer");
        if (position < 0) {
            throw new EOFException("Cannot seek to a negative offset " + position + " in s3://" + bucket + "/" + key);
        }
        if (!dst.hasRemaining()) {
            return 0;
        }
        if (position >= length) {
            return -1;
        }
        return transfer(position, dst, true);
    }

    /**
     * {@code len} bytes at {@code position} into {@code b}, by preads.
     *
     * @throws EOFException when the object ends first
     */
    public void readFullyAt(long position, byte[] b, int off, int len) throws IOException {
        int done = 0;
        while (done < len) {
            int n = readAt(position + done, b, off + done, len - done);
            if (n < 0) {
                throw new EOFException("End of file reached before reading fully: " + len + " bytes at " + position
                        + " of s3://" + bucket + "/" + key + " (" + length + " bytes)");
            }
            done += n;
        }
    }

    /** Move the position (no request). A position past the end is accepted; reads there return -1. */
    public synchronized void seek(long position) throws IOException {
        checkOpen();
        if (position < 0) {
            throw new EOFException("Cannot seek to a negative offset " + position + " in s3://" + bucket + "/" + key);
        }
        pos = position;
    }

    public synchronized long getPos() {
        return pos;
    }

    /** Skips up to {@code n} bytes, never past the end (no request). */
    @Override
    public synchronized long skip(long n) throws IOException {
        checkOpen();
        if (n <= 0) {
            return 0;
        }
        long skipped = Math.min(n, Math.max(0, length - pos));
        pos += skipped;
        return skipped;
    }

    /** The bytes left to the end of the object, at most {@link Integer#MAX_VALUE}. */
    @Override
    public synchronized int available() throws IOException {
        checkOpen();
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, length - pos));
    }

    /** Free the native reader's buffers (read-ahead, whole object, footer); the stream stays open. */
    public void unbuffer() throws IOException {
        if (closed) {
            return; // as S3A: unbuffer after close does nothing
        }
        call(p -> {
            Native.unbuffer(p);
            return null;
        });
    }

    /** The reader's statistics by name (ReadStatistics of native/src/reader.rs; numbers as Long). */
    public Map<String, Object> getStatistics() throws IOException {
        return call(Native::readerStatistics);
    }

    /**
     * The reader's statistics in S3A's names ({@code stream_read_*}, native ones as
     * {@code s3native.*}): Hadoop's IOStatisticsSnapshot fields by name ({@code counters},
     * {@code gauges}, {@code minimums}, {@code maximums}, {@code meanstatistics}).
     */
    public Map<String, Object> getS3AStatistics() throws IOException {
        return call(Native::readerS3aStatistics);
    }

    /** True once closed. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Frees the native reader (at once, or when a read still running on another thread ends).
     * Vectored reads still in progress are stopped, also while a read runs on another thread:
     * their ranges not yet taken fail with InterruptedIOException (the interrupt flag of the
     * thread that takes them is left alone). A second close does nothing.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            call(Native::stopVectored);
        } catch (IOException | RuntimeException e) {
            // Closing anyway; the vectored reads end when they are freed.
        }
        closed = true;
        handle.dispose(null);
    }

    /**
     * Start a vectored read of {@code offsets.length} ranges: range {@code i} is
     * {@code lengths[i]} bytes at {@code offsets[i]}. The native reader coalesces and splits
     * them and fetches in parallel; {@link VectoredRead#next} hands each range over as it
     * completes. Every range must lie inside the object: the native reader checks them
     * against the length it opened with, before any range is fetched.
     *
     * @throws EOFException when a range ends past the object (the native reader's
     *         end-of-file error, naming the range and the key)
     * @throws IllegalArgumentException when a range has a negative offset or length
     * @throws java.io.InterruptedIOException when this thread is interrupted while the read
     *         waits for the memory budget (nothing of it is left running; the flag stays set)
     */
    public VectoredRead readRanges(long[] offsets, int[] lengths) throws IOException {
        checkOpen();
        if (offsets.length != lengths.length) {
            throw new IllegalArgumentException(offsets.length + " offsets but " + lengths.length + " lengths");
        }
        long reader = handle.acquire(); // the reader stays alive until the vectored read is closed
        try {
            long v = Native.readRanges(reader, offsets, lengths);
            return new VectoredRead(v);
        } catch (IOException | RuntimeException | Error e) {
            handle.release();
            throw e;
        }
    }

    /**
     * A vectored read in progress: {@link #next} waits for a range and copies it into the
     * caller's buffer for it. Close it (also before every range was taken) to free it.
     * Not for concurrent use.
     */
    public final class VectoredRead implements AutoCloseable {
        private final NativeHandle vectored;
        private boolean released;

        private VectoredRead(long ptr) {
            this.vectored = new NativeHandle(ptr, Native::freeVectored);
        }

        /**
         * Wait for the next completed range and copy its bytes into {@code buffers[index]} from
         * that buffer's position (which is not moved); returns the index, or -1 when every
         * range was delivered. {@link #next(ByteBuffer[], int[])} says which range a failure is.
         *
         * @param buffers one buffer per range (heap or direct), each with room for its range
         * @throws IOException a failure (see {@link #next(ByteBuffer[], int[])})
         */
        public int next(ByteBuffer[] buffers) throws IOException {
            return next(buffers, new int[1]);
        }

        /**
         * {@link #next(ByteBuffer[])}, saying what a failure is: {@code failed[0]} is set to the
         * index of the range that failed alone (an {@link EOFException}: it runs past the
         * object's real end, inside a declared length longer than the object), and later calls
         * still deliver the other ranges; or to -1 when the whole read failed and nothing more
         * is delivered (a GET that failed, an object changed since open, a Java interrupt of the
         * waiting thread, or the stream's close or unbuffer: an InterruptedIOException that
         * leaves the thread's interrupt flag alone).
         *
         * @param failed at least one element; set on every call (-1 unless a range failed alone)
         */
        public int next(ByteBuffer[] buffers, int[] failed) throws IOException {
            if (failed.length < 1) {
                throw new IllegalArgumentException("failed needs room for one index");
            }
            failed[0] = -1;
            long p = vectored.acquire();
            try {
                return Native.vectoredNext(p, buffers, failed);
            } finally {
                vectored.release();
                Reference.reachabilityFence(S3NativeInputStream.this);
            }
        }

        @Override
        public synchronized void close() {
            if (released) {
                return;
            }
            released = true;
            vectored.dispose(null);
            handle.release();
        }
    }

    @Override
    public String toString() {
        return "S3NativeInputStream{s3://" + bucket + "/" + key + ", " + length + " bytes, pos " + pos + "}";
    }
}
