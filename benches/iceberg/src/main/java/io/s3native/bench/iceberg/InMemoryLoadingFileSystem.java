package io.s3native.bench.iceberg;

import java.io.EOFException;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.util.functional.FutureIO;

/**
 * The seed's ceiling (its InMemoryLoadingFileSystem): every file is fetched whole into memory
 * at open, with one GET through stock S3A's classic stream (set {@code fs.s3a.input.stream.type=classic}
 * where the default differs), and then read from the heap. The reader above it (Iceberg, Parquet)
 * is the same; only the store's latency per request is gone, so this is what a reader that
 * fetched everything up front would reach. Files must fit in a Java array (2 GiB).
 *
 * <p>Both open paths load: {@code open(Path, int)} (S3A's open: one HEAD, then one GET) and
 * {@code openFile} (Parquet 1.16's route, with a file status: S3A's openFile, one GET). The
 * first read asks for the whole object, so S3A's classic stream sends one GET for all of it
 * whatever the read policy.
 */
public class InMemoryLoadingFileSystem extends S3AFileSystem {
    private final AtomicLong loadedBytes = new AtomicLong();
    private final AtomicLong loadedFiles = new AtomicLong();

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return load(f, super.open(f, bufferSize));
    }

    @Override
    public CompletableFuture<FSDataInputStream> openFileWithOptions(Path path, OpenFileParameters parameters)
            throws IOException {
        CompletableFuture<FSDataInputStream> result = new CompletableFuture<>();
        try {
            // S3A's own openFile (the caller's status: no HEAD); its stream fetches the whole
            // object with the first read below, which asks for all of it.
            result.complete(load(path, FutureIO.awaitFuture(super.openFileWithOptions(path, parameters))));
        } catch (IOException | RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private FSDataInputStream load(Path f, FSDataInputStream stream) throws IOException {
        byte[] bytes;
        try (FSDataInputStream in = stream) {
            // S3A's classic stream: available() is the bytes left to the end of the object.
            int length = in.available();
            if (length == Integer.MAX_VALUE) {
                throw new IOException(f + " is too large to load into memory");
            }
            bytes = new byte[length];
            in.readFully(bytes);
            if (in.read() != -1) {
                throw new IOException(f + ": more than the " + length + " bytes available() announced");
            }
        }
        loadedFiles.incrementAndGet();
        loadedBytes.addAndGet(bytes.length);
        return new FSDataInputStream(new HeapStream(bytes));
    }

    /** Files loaded into memory so far. */
    public long getLoadedFiles() {
        return loadedFiles.get();
    }

    /** Bytes loaded into memory so far. */
    public long getLoadedBytes() {
        return loadedBytes.get();
    }

    /** A seekable stream over a byte array (PositionedReadable by FSInputStream's seek and read). */
    static final class HeapStream extends FSInputStream {
        private final byte[] bytes;
        private int pos;
        private boolean closed;

        HeapStream(byte[] bytes) {
            this.bytes = bytes;
        }

        private void checkOpen() throws IOException {
            if (closed) {
                throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED);
            }
        }

        @Override
        public synchronized void seek(long target) throws IOException {
            checkOpen();
            if (target < 0) {
                throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK);
            }
            if (target > bytes.length) {
                throw new EOFException(FSExceptionMessages.CANNOT_SEEK_PAST_EOF + " " + target);
            }
            pos = (int) target;
        }

        @Override
        public synchronized long getPos() throws IOException {
            return pos;
        }

        @Override
        public boolean seekToNewSource(long targetPos) {
            return false;
        }

        @Override
        public synchronized int read() throws IOException {
            checkOpen();
            return pos < bytes.length ? bytes[pos++] & 0xff : -1;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) throws IOException {
            checkOpen();
            if (len == 0) {
                return 0;
            }
            if (pos >= bytes.length) {
                return -1;
            }
            int n = Math.min(len, bytes.length - pos);
            System.arraycopy(bytes, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public synchronized int read(long position, byte[] b, int off, int len) throws IOException {
            checkOpen();
            if (position < 0) {
                throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK);
            }
            if (position >= bytes.length) {
                return -1;
            }
            int n = (int) Math.min(len, bytes.length - position);
            System.arraycopy(bytes, (int) position, b, off, n);
            return n;
        }

        @Override
        public synchronized int available() throws IOException {
            checkOpen();
            return bytes.length - pos;
        }

        @Override
        public synchronized void close() {
            closed = true;
        }
    }
}
