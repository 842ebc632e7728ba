package io.s3native.hadoop;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntFunction;

import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FileRange;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.VectoredReadUtils;
import org.apache.hadoop.fs.s3a.RangeNotSatisfiableEOFException;
import org.apache.hadoop.fs.statistics.IOStatisticsAggregator;

import io.s3native.ObjectChangedException;
import io.s3native.RangeNotSatisfiableException;
import io.s3native.S3NativeInputStream;

/**
 * {@link NativeS3AInputStream} with Hadoop's vectored reads, on the lines that have them
 * (FileRange, 3.3.5+: here 3.4.x and 3.5.0; compiled from {@code src/main/vectored} by those
 * profiles only). The ranges are validated and checked against the object's length as
 * Hadoop's {@link VectoredReadUtils#validateAndSortRanges} says (overlaps and negative
 * ranges fail the call), a range past the end makes the call throw EOFException (as S3A's
 * readVectored on 3.4.1+, whose validation is given the file's length),
 * each range gets its buffer from the
 * allocator at the call, and the native reader plans, fetches and delivers them: each
 * range's future completes as its bytes arrive (the buffer's limit at the range's end, its
 * position where the allocator left it); a range past the object's real end (a declared
 * length longer than the object) fails alone with EOFException, any other failure fails the
 * ranges not yet delivered.
 * Hadoop 3.4.2+'s overload with a release function delegates here (no buffer is dropped
 * before its future completes). close() and unbuffer() stop the reads in progress, as S3A's:
 * the native reader cancels their GETs and the futures not yet completed fail with
 * InterruptedIOException.
 */
final class NativeS3AVectoredInputStream extends NativeS3AInputStream {
    static final String VECTORED = "in:readvectored";

    /** The threads that wait for ranges and complete their futures (one per vectored call in progress). */
    private static final ExecutorService DELIVERY = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "s3native-vectored");
        t.setDaemon(true);
        return t;
    });

    NativeS3AVectoredInputStream(S3NativeInputStream in, FileSystem.Statistics fsStatistics, IOStatisticsAggregator fsIOStatistics) {
        super(in, fsStatistics, fsIOStatistics);
    }

    @Override
    public void readVectored(List<? extends FileRange> ranges, IntFunction<ByteBuffer> allocate) throws IOException {
        checkNotClosed();
        // As S3A: overlaps and bad ranges fail the call, and so does a range past the end
        // (EOFException: the native reader's end-of-file error, checked against the length it
        // opened with before anything is fetched, and before any range gets a future or a buffer).
        VectoredReadUtils.validateAndSortRanges(ranges, Optional.empty());
        int n = ranges.size();
        if (n == 0) {
            return;
        }
        long[] offsets = new long[n];
        int[] lengths = new int[n];
        ByteBuffer[] buffers = new ByteBuffer[n];
        @SuppressWarnings("unchecked")
        CompletableFuture<ByteBuffer>[] futures = new CompletableFuture[n];
        for (int i = 0; i < n; i++) {
            FileRange r = ranges.get(i);
            offsets[i] = r.getOffset();
            lengths[i] = r.getLength();
        }
        S3NativeInputStream.VectoredRead read = in.readRanges(offsets, lengths);
        try {
            for (int i = 0; i < n; i++) {
                buffers[i] = allocate.apply(lengths[i]);
            }
        } catch (RuntimeException | Error e) {
            read.close();
            throw e;
        }
        for (int i = 0; i < n; i++) {
            futures[i] = new CompletableFuture<>();
            ranges.get(i).setData(futures[i]);
        }
        DELIVERY.execute(() -> deliver(read, buffers, lengths, futures));
    }

    private void deliver(S3NativeInputStream.VectoredRead read, ByteBuffer[] buffers, int[] lengths,
            CompletableFuture<ByteBuffer>[] futures) {
        int[] failed = new int[1];
        try (read) {
            while (true) {
                int i;
                try {
                    i = read.next(buffers, failed);
                } catch (IOException e) {
                    if (failed[0] < 0) {
                        throw e;
                    }
                    // That range alone (past the object's real end): the others go on.
                    futures[failed[0]].completeExceptionally(failure(e));
                    continue;
                }
                if (i < 0) {
                    break;
                }
                ByteBuffer b = buffers[i];
                b.limit(b.position() + lengths[i]);
                futures[i].complete(b);
            }
        } catch (IOException | RuntimeException | Error e) {
            // The whole read failed, or close() or unbuffer() stopped it (as S3A's, the ranges
            // not yet delivered fail with InterruptedIOException; this thread's interrupt flag
            // is not set by that).
            Throwable failure = failure(e);
            for (CompletableFuture<ByteBuffer> f : futures) {
                f.completeExceptionally(failure);
            }
        }
    }

    /**
     * A range's failure as S3A's readVectored reports it: an object changed since open is S3A's
     * RemoteFileChangedException; a range starting at or past the object's real end (inside a
     * declared length longer than the object: S3's 416) is S3A's RangeNotSatisfiableEOFException;
     * a range that runs past the real end is an EOFException in readFully's words.
     */
    private Throwable failure(Throwable e) {
        if (e instanceof ObjectChangedException) {
            return changed((ObjectChangedException) e, "readVectored");
        }
        if (e instanceof RangeNotSatisfiableException) {
            return new RangeNotSatisfiableEOFException(e.getMessage(), null);
        }
        if (e instanceof EOFException) {
            EOFException eof = new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + ": " + e.getMessage());
            eof.initCause(e);
            return eof;
        }
        return e;
    }

    @Override
    public boolean hasCapability(String capability) {
        return VECTORED.equals(capability.toLowerCase(Locale.ENGLISH)) || super.hasCapability(capability);
    }
}
