package io.s3native.hadoop;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.fs.ByteBufferPositionedReadable;
import org.apache.hadoop.fs.ByteBufferReadable;
import org.apache.hadoop.fs.CanUnbuffer;
import org.apache.hadoop.fs.FSExceptionMessages;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.s3a.RemoteFileChangedException;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsAggregator;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.s3native.ObjectChangedException;
import io.s3native.S3NativeInputStream;

/**
 * The stream {@link NativeS3AFileSystem#open} returns (inside an FSDataInputStream): forwards
 * to {@link S3NativeInputStream} and answers as Hadoop's input stream contract and S3A's
 * stream do, adding ByteBuffer reads, which S3A's streams lack.
 *
 * <p>Seekable (lazy seek; negative: EOFException; past the end: accepted, reads there return
 * -1), PositionedReadable (preads that leave the read-ahead alone), ByteBufferReadable and
 * ByteBufferPositionedReadable (a direct buffer is filled natively without a Java copy),
 * CanUnbuffer, StreamCapabilities ({@code in:readbytebuffer}, {@code in:preadbytebuffer},
 * {@code in:unbuffer}, {@code iostatistics}; {@code in:readvectored} where the Hadoop line
 * has vectored reads: {@code NativeS3AVectoredInputStream}) and IOStatisticsSource with S3A's
 * {@code stream_read_*} names where S3A has one and the native figures as {@code s3native.*}
 * (the native reader's mapping). Close twice does nothing; reads, seeks and
 * {@code available()} after close throw {@link IOException} ({@code Stream is closed!}).
 *
 * <p>An object changed since open fails the read with S3A's
 * {@link RemoteFileChangedException} (the native reader's GETs are pinned to the ETag, as
 * S3A's are with its default {@code fs.s3a.change.detection.mode=server}), naming the path.
 *
 * <p>Bytes read count in the filesystem's {@link FileSystem.Statistics} as they are read (as
 * S3A's stream counts them: Spark's input metrics). At close the stream's statistics go where
 * S3A's stream puts its own (S3AInstrumentation.InputStreamStatistics#merge, the same on
 * 3.3.4, 3.4.x and 3.5.0): every counter, by its S3A name, is added to the S3AInstrumentation
 * metric of that name where one exists (what Hadoop's cost tests read through
 * {@code getCounterValue}: {@code action_http_get_request}, {@code stream_read_opened},
 * {@code stream_read_bytes}, ...), the IOStatistics are aggregated into the filesystem's, and
 * the bytes fetched count in {@code FileSystem.Statistics} at distance 5. An unbuffer adds the
 * counters' growth since the last such promotion to the metrics, as S3A's does.
 */
class NativeS3AInputStream extends FSInputStream
        implements ByteBufferReadable, ByteBufferPositionedReadable, CanUnbuffer, StreamCapabilities, IOStatisticsSource {
    private static final Logger LOG = LoggerFactory.getLogger(NativeS3AInputStream.class);

    static final String READBYTEBUFFER = "in:readbytebuffer";
    static final String PREADBYTEBUFFER = "in:preadbytebuffer";
    static final String UNBUFFER = "in:unbuffer";
    static final String IOSTATISTICS = "iostatistics";

    final S3NativeInputStream in;
    private final FileSystem.Statistics fsStatistics;
    private final IOStatisticsAggregator fsIOStatistics;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The figures at close, so statistics stay readable after the native reader is freed. */
    private volatile IOStatisticsSnapshot atClose;

    /**
     * @param fsStatistics the filesystem's Statistics (bytes read), may be null
     * @param fsIOStatistics where the stream's IOStatistics go at close, may be null
     */
    NativeS3AInputStream(S3NativeInputStream in, FileSystem.Statistics fsStatistics, IOStatisticsAggregator fsIOStatistics) {
        this.in = in;
        this.fsStatistics = fsStatistics;
        this.fsIOStatistics = fsIOStatistics;
    }

    /**
     * The stream for {@code in}: {@code NativeS3AVectoredInputStream} where the Hadoop line has
     * vectored reads and this jar was built with them (src/main/vectored), else this class.
     */
    static NativeS3AInputStream create(S3NativeInputStream in, FileSystem.Statistics fsStatistics,
            IOStatisticsAggregator fsIOStatistics, AtomicLong fsNativeBytes,
            NativeS3AOutputStream.FileSystemStatistics.Instrumentation fsMetrics) {
        NativeS3AInputStream s;
        if (VECTORED != null) {
            try {
                s = (NativeS3AInputStream) VECTORED.newInstance(in, fsStatistics, fsIOStatistics);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("s3native: cannot create the vectored input stream", e);
            }
        } else {
            s = new NativeS3AInputStream(in, fsStatistics, fsIOStatistics);
        }
        s.fsNativeBytes = fsNativeBytes;
        s.fsMetrics = fsMetrics;
        return s;
    }

    /** The filesystem's total of native bytes read, added at close; may be null. */
    private AtomicLong fsNativeBytes;
    /** The filesystem's S3AInstrumentation metrics, where the counters go at unbuffer and close; may be null. */
    private NativeS3AOutputStream.FileSystemStatistics.Instrumentation fsMetrics;
    /** The counters already added to {@link #fsMetrics} (by unbuffer): S3A's {@code mergedStats}. */
    private final Map<String, Long> promoted = new HashMap<>();

    private static final java.lang.reflect.Constructor<?> VECTORED = vectoredConstructor();

    private static java.lang.reflect.Constructor<?> vectoredConstructor() {
        try {
            Class.forName("org.apache.hadoop.fs.FileRange", false, FSInputStream.class.getClassLoader());
            Class<?> c = Class.forName("io.s3native.hadoop.NativeS3AVectoredInputStream", false,
                    NativeS3AInputStream.class.getClassLoader());
            return c.getDeclaredConstructor(S3NativeInputStream.class, FileSystem.Statistics.class, IOStatisticsAggregator.class);
        } catch (ClassNotFoundException | NoSuchMethodException | LinkageError e) {
            return null; // Hadoop 3.3.4 (no FileRange), or a jar built without src/main/vectored
        }
    }

    /** The object's length. */
    long length() {
        return in.getLength();
    }

    void checkNotClosed() throws IOException {
        if (closed.get()) {
            throw new IOException(FSExceptionMessages.STREAM_IS_CLOSED + " s3a://" + in.getBucket() + "/" + in.getKey());
        }
    }

    /** S3A's exception for a read of an object changed since open ({@code ChangeTracker}'s). */
    RemoteFileChangedException changed(ObjectChangedException e, String operation) {
        return new RemoteFileChangedException("s3a://" + in.getBucket() + "/" + in.getKey(), operation, e.getMessage(), e);
    }

    private int counted(int n) {
        if (n > 0 && fsStatistics != null) {
            fsStatistics.incrementBytesRead(n);
        }
        return n;
    }

    @Override
    public synchronized int read() throws IOException {
        checkNotClosed();
        int b;
        try {
            b = in.read();
        } catch (ObjectChangedException e) {
            throw changed(e, "read");
        }
        if (b >= 0) {
            counted(1);
        }
        return b;
    }

    @Override
    public synchronized int read(byte[] b, int off, int len) throws IOException {
        checkNotClosed();
        if (b == null) {
            throw new NullPointerException("Null buffer");
        }
        if (off < 0 || len < 0 || len > b.length - off) {
            throw new IndexOutOfBoundsException("offset " + off + ", length " + len + ", buffer " + b.length);
        }
        try {
            return counted(in.read(b, off, len));
        } catch (ObjectChangedException e) {
            throw changed(e, "read");
        }
    }

    /** ByteBufferReadable: fills {@code buf} from its position; -1 at the end of the object. */
    @Override
    public synchronized int read(ByteBuffer buf) throws IOException {
        checkNotClosed();
        try {
            return counted(in.read(buf));
        } catch (ObjectChangedException e) {
            throw changed(e, "read");
        }
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int length) throws IOException {
        checkNotClosed();
        validatePositionedReadArgs(position, buffer, offset, length);
        if (length == 0) {
            return 0;
        }
        try {
            return counted(in.readAt(position, buffer, offset, length));
        } catch (ObjectChangedException e) {
            throw changed(e, "read");
        }
    }

    @Override
    public void readFully(long position, byte[] buffer, int offset, int length) throws IOException {
        checkNotClosed();
        validatePositionedReadArgs(position, buffer, offset, length);
        int done = 0;
        while (done < length) {
            int n = read(position + done, buffer, offset + done, length - done);
            if (n < 0) {
                throw new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + " (" + length + " bytes at " + position
                        + " of s3a://" + in.getBucket() + "/" + in.getKey() + ", " + in.getLength() + " bytes)");
            }
            done += n;
        }
    }

    /** ByteBufferPositionedReadable: up to {@code buf.remaining()} bytes at {@code position}; -1 at or past the end. */
    @Override
    public int read(long position, ByteBuffer buf) throws IOException {
        checkNotClosed();
        if (position < 0) {
            throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + position);
        }
        try {
            return counted(in.readAt(position, buf));
        } catch (ObjectChangedException e) {
            throw changed(e, "read");
        }
    }

    @Override
    public void readFully(long position, ByteBuffer buf) throws IOException {
        checkNotClosed();
        int want = buf.remaining();
        long at = position;
        while (buf.hasRemaining()) {
            int n = read(at, buf);
            if (n < 0) {
                throw new EOFException(FSExceptionMessages.EOF_IN_READ_FULLY + " (" + want + " bytes at " + position
                        + " of s3a://" + in.getBucket() + "/" + in.getKey() + ", " + in.getLength() + " bytes)");
            }
            at += n;
        }
    }

    @Override
    public synchronized void seek(long pos) throws IOException {
        checkNotClosed();
        if (pos < 0) {
            throw new EOFException(FSExceptionMessages.NEGATIVE_SEEK + " " + pos);
        }
        in.seek(pos);
    }

    @Override
    public synchronized long getPos() throws IOException {
        return in.getPos();
    }

    @Override
    public boolean seekToNewSource(long targetPos) {
        return false;
    }

    @Override
    public synchronized long skip(long n) throws IOException {
        checkNotClosed();
        return in.skip(n);
    }

    /** The bytes left to the end of the object (at most Integer.MAX_VALUE), as S3A's stream answers. */
    @Override
    public synchronized int available() throws IOException {
        checkNotClosed();
        return in.available();
    }

    @Override
    public void unbuffer() {
        if (closed.get()) {
            return;
        }
        try {
            in.unbuffer();
        } catch (IOException e) {
            LOG.debug("s3native: unbuffer of {} failed", this, e);
        }
        promoteToMetrics(snapshot(false));
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        IOStatisticsSnapshot last = snapshot(true);
        atClose = last;
        in.close();
        if (fsNativeBytes != null) {
            fsNativeBytes.addAndGet(last.counters().getOrDefault("stream_read_bytes", 0L));
        }
        promoteToMetrics(last);
        if (fsStatistics != null) { // S3A's merge at close: the bytes fetched, at distance 5
            fsStatistics.incrementBytesReadByDistance(5, last.counters().getOrDefault("stream_read_total_bytes", 0L));
        }
        if (fsIOStatistics != null) {
            try {
                fsIOStatistics.aggregate(last);
            } catch (RuntimeException e) {
                LOG.debug("s3native: merging the statistics of {} failed", this, e);
            }
        }
    }

    @Override
    public boolean hasCapability(String capability) {
        switch (capability.toLowerCase(Locale.ENGLISH)) {
            case READBYTEBUFFER:
            case PREADBYTEBUFFER:
            case UNBUFFER:
            case IOSTATISTICS:
                return true;
            default:
                return false;
        }
    }

    @Override
    public IOStatistics getIOStatistics() {
        IOStatisticsSnapshot last = atClose;
        return last != null ? last : snapshot(false);
    }

    /**
     * S3A's promotion of a stream's counters (S3AInstrumentation.InputStreamStatistics
     * #promoteInputStreamCountersToMetrics): each counter's growth since the last promotion is
     * added to the filesystem's metric of that name, where S3AInstrumentation has one (the
     * metric alone: the store gets the statistics by aggregation, at close). The native
     * figures ({@code s3native.*}) have no metric.
     */
    private synchronized void promoteToMetrics(IOStatisticsSnapshot now) {
        if (fsMetrics == null) {
            return;
        }
        try {
            now.counters().forEach((name, value) -> {
                long growth = value - promoted.getOrDefault(name, 0L);
                if (growth > 0 && !name.startsWith("s3native.")) {
                    fsMetrics.incrementMetric(name, growth);
                }
                promoted.put(name, value);
            });
        } catch (RuntimeException e) {
            LOG.debug("s3native: counting the statistics of {} in the filesystem's metrics failed", this, e);
        }
    }

    /**
     * The stream's figures in S3A's names (the native reader's mapping,
     * native/src/reader/s3a.rs, with the GETs as {@code action_http_get_request}, which
     * ITestCommitOperationCost reads for a {@code .pending} load), plus what only this stream
     * knows: {@code stream_read_close_operations}.
     */
    private IOStatisticsSnapshot snapshot(boolean closing) {
        IOStatisticsSnapshot snap;
        try {
            snap = NativeS3AOutputStream.snapshot(in.getS3AStatistics());
        } catch (IOException e) {
            snap = new IOStatisticsSnapshot();
        }
        Map<String, Long> c = snap.counters();
        c.put("stream_read_close_operations", closing || closed.get() ? 1L : 0L);
        return snap;
    }

    /** S3A's StoreStatisticNames.ACTION_HTTP_GET_REQUEST. */
    static final String ACTION_HTTP_GET_REQUEST = "action_http_get_request";

    @Override
    public String toString() {
        return "NativeS3AInputStream{s3a://" + in.getBucket() + "/" + in.getKey() + ", " + in.getLength() + " bytes}";
    }
}
