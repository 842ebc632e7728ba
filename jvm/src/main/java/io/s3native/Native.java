package io.s3native;

import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.util.Map;

/**
 * The native methods (native/src/jni.rs) and the mapping of native error kinds to Java
 * exceptions. Package-private: users go through {@link S3NativeOutputStream}.
 */
final class Native {
    // Error kinds: s3native::ErrorKind's numeric values (never change).
    static final int INVALID_ARGUMENT = 1;
    static final int UNSUPPORTED = 2;
    static final int NOT_FOUND = 3;
    static final int ACCESS_DENIED = 4;
    static final int INTERRUPTED = 5;
    static final int STATE = 6;
    static final int TOO_LARGE = 7;
    static final int IO = 8;
    static final int INTERNAL = 9;
    static final int ALREADY_EXISTS = 10;
    static final int END_OF_FILE = 11;
    static final int STOPPED = 12;

    // No static initialiser: loading happens in load() (every entry point calls it before a
    // native method, whose symbol the JVM binds at its first call). A class whose initialiser
    // threw would be unusable for good, and one that took NativeLibrary's lock could deadlock
    // with a thread inside NativeLibrary.load(), whose version check calls a native method.

    private Native() {
    }

    /**
     * Makes sure the library is loaded and bound.
     *
     * @throws IOException naming the load failure (the platform and every path tried), the
     *     same on the first and every later call
     */
    static void load() throws IOException {
        String failure = NativeLibrary.loadFailure();
        if (failure != null) {
            throw new IOException(failure);
        }
    }

    /** {@link #load()} for callers that cannot throw IOException: an {@link UncheckedIOException}. */
    static void init() {
        try {
            load();
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    /** The shutdown hook's action (NativeLibrary adds it once the library is loaded). */
    static void abortOpenUploadsQuietly() {
        try {
            abortOpenUploads();
        } catch (Throwable t) {
            System.err.println("s3native: aborting open uploads at JVM exit failed: " + t);
        }
    }

    /**
     * Called by the native code to build the exception for a failure; {@code s3Code} and
     * {@code setting} may be null.
     */
    static Throwable exception(int kind, String message, String s3Code, String setting) {
        switch (kind) {
            case INVALID_ARGUMENT:
                return setting != null ? new InvalidSettingException(message, setting) : new IllegalArgumentException(message);
            case UNSUPPORTED:
                return new UnsupportedSettingException(message, setting);
            case NOT_FOUND:
                return new FileNotFoundException(message);
            case ACCESS_DENIED:
                return new AccessDeniedException(null, null, message);
            case INTERRUPTED: {
                // The native side only reads the flag; make sure it is set when this surfaces.
                Thread.currentThread().interrupt();
                return new InterruptedIOException(message);
            }
            case INTERNAL:
                return new IOException("s3native internal error: " + message);
            case ALREADY_EXISTS:
                return new FileAlreadyExistsException(null, null, message);
            case STOPPED:
                // The stream's close or unbuffer stopped a vectored read (as S3A's): no thread
                // was interrupted, so no interrupt flag is set.
                return new InterruptedIOException(message);
            case END_OF_FILE:
                // S3's 416 to a GET starting at or past the object's end (a declared length longer
                // than the object), or a read past the length the reader knows.
                return "InvalidRange".equals(s3Code) ? new RangeNotSatisfiableException(message) : new EOFException(message);
            default:
                // A read of an object changed since open (native/src/reader.rs).
                return ObjectChangedException.PRECONDITION_FAILED.equals(s3Code) ? new ObjectChangedException(message)
                        : new IOException(message);
        }
    }

    // Names cross by name: modes, magic layouts, .pending etag forms and writer states as the
    // Rust enums' serde names (PUBLISH, MAGIC_JOB, QUOTED, OPEN, ...); results and statistics
    // as maps of the Rust field names (see native/src/jni.rs).

    /** mode: {@code PUBLISH} or {@code DEFERRED}. */
    /** credentials: a handle from {@link #credentialSource}, or 0 for the settings' keys. */
    static native long open(String bucket, String key, String mode, String[] settings, long credentials) throws IOException;

    /** layout: {@code MAGIC} (Hadoop 3.3) or {@code MAGIC_JOB} (3.4+); etags: {@code UNQUOTED}, {@code QUOTED}, {@code OBJECTS}. */
    static native long openMagic(String bucket, String magicKey, String uri, String layout, String etags, String[] settings,
            long credentials) throws IOException;

    static native void write(long handle, byte[] b, int off, int len) throws IOException;

    static native void writeDirect(long handle, ByteBuffer direct, int position, int len) throws IOException;

    /** The UploadResult as JSON; a second close returns the same result. */
    static native String close(long handle) throws IOException;

    static native void abort(long handle) throws IOException;

    /** Returns while the writer is open; else throws what a write would (closed, aborted, the first failure). */
    static native void checkOpen(long handle) throws IOException;

    /** {@code OPEN}, {@code COMPLETING}, {@code ABORTED}, {@code FAILED} or {@code CLOSED}. */
    static native String state(long handle) throws IOException;

    static native void free(long handle);

    static native Map<String, Object> statistics(long handle) throws IOException;

    static native Map<String, Object> globalStatistics();

    /**
     * Check settings as opening a writer would; returns the core's Validation by name:
     * {@code warnings} (a List of String) and {@code effective} (a Map, numbers as Long).
     */
    static native Map<String, Object> validate(String bucket, String[] settings) throws IOException;

    /** The stream's statistics in S3A's names (IOStatisticsSnapshot's fields), from {@code resultJson} when not null, else the handle. */
    static native Map<String, Object> s3aStatistics(long handle, String resultJson, boolean magic, long hflush, long hsync,
            boolean aborted) throws IOException;

    static native void complete(String resultJson, String[] settings, long credentials) throws IOException;

    static native void abortUpload(String resultJson, String[] settings, long credentials) throws IOException;

    /** A native credentials cache over {@code provider}; free with {@link #freeCredentialSource}. */
    static native long credentialSource(CredentialsProvider provider, String description) throws IOException;

    static native void freeCredentialSource(long handle);

    static native int abortOpenUploads();

    /** The UploadResult's fields by name. */
    static native Map<String, Object> parseResult(String json);

    static native String version();

    // ---- the reader (native/src/jni_reader.rs) ------------------------------------------------
    // options: ReadOptions as JSON by name ({"policy": ReadPolicy's serde name or a Hadoop
    // read-policy list, "length": bytes, "etag": "...", "split_end": bytes}, each optional);
    // without length and etag the reader sends one HEAD at open. Reads return the bytes
    // copied, or -1 at the end of the object.

    static native long openReader(String bucket, String key, String[] settings, long credentials, String options)
            throws IOException;

    static native long readerLength(long handle) throws IOException;

    static native String readerEtag(long handle) throws IOException;

    /** A stream read at {@code position} (drives sequential detection and read-ahead). */
    static native int read(long handle, long position, byte[] b, int off, int len) throws IOException;

    static native int readDirect(long handle, long position, ByteBuffer direct, int bufferPosition, int len) throws IOException;

    /** A positioned read (pread): leaves the read-ahead window alone. */
    static native int readAt(long handle, long position, byte[] b, int off, int len) throws IOException;

    static native int readAtDirect(long handle, long position, ByteBuffer direct, int bufferPosition, int len) throws IOException;

    /**
     * Start a vectored read: range {@code i} is {@code lengths[i]} bytes from {@code offsets[i]}
     * (the two arrays have one entry per range, in the caller's order). Returns a handle for
     * {@link #vectoredNext} and {@link #freeVectored}. A wait for the memory budget ends at an
     * interrupt of the calling thread (InterruptedIOException, nothing left running).
     */
    static native long readRanges(long handle, long[] offsets, int[] lengths) throws IOException;

    /**
     * Wait for the next range to complete and copy its bytes into {@code buffers[index]} (heap
     * or direct, from its position; the position is not moved). Returns the index, or -1 when
     * every range was delivered. A failure throws, with {@code failed[0]} the index of the range
     * that failed alone (the others are still delivered by later calls), or -1 when the whole
     * read failed (nothing more is delivered).
     */
    static native int vectoredNext(long vectored, ByteBuffer[] buffers, int[] failed) throws IOException;

    static native void freeVectored(long vectored);

    static native void unbuffer(long handle) throws IOException;

    static native int stopVectored(long handle) throws IOException;

    /** ReadStatistics by name (native/src/reader.rs). */
    static native Map<String, Object> readerStatistics(long handle) throws IOException;

    /** The reader's statistics in S3A's names (IOStatisticsSnapshot's fields: counters, gauges, ...). */
    static native Map<String, Object> readerS3aStatistics(long handle) throws IOException;

    static native void freeReader(long handle);

    // ---- object operations (native/src/jni_objects.rs) ---------------------------------------
    // Objects cross by name: ObjectInfo as {name, size, etag}, DeleteOutcome as {deleted,
    // failed, requests}; a delete whose keys failed throws, naming them.

    static native long objectsOpen(String bucket, String[] settings, long credentials) throws IOException;

    /** The object's ObjectInfo by name, or null when there is none. */
    static native Map<String, Object> objectsHead(long handle, String key) throws IOException;

    static native void objectsDelete(long handle, String key) throws IOException;

    static native Map<String, Object> objectsDeleteMany(long handle, String[] keys) throws IOException;

    static native Map<String, Object> objectsDeleteRecursively(long handle, String dir) throws IOException;

    /** A listing handle; no request yet. */
    static native long objectsList(long handle, String dir) throws IOException;

    /** The next page of ObjectInfo maps (names relative to the directory), or null when done. */
    static native java.util.List<Map<String, Object>> listingNext(long listing) throws IOException;

    static native void listingFree(long listing);

    static native Map<String, Object> objectsStatistics(long handle) throws IOException;

    static native void objectsFree(long handle);
}
