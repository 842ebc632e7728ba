package io.s3native.hadoop;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.fs.Abortable;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.Syncable;
import org.apache.hadoop.fs.statistics.IOStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsAggregator;
import org.apache.hadoop.fs.statistics.IOStatisticsSnapshot;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.hadoop.fs.statistics.MeanStatistic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.s3native.S3NativeOutputStream;

/**
 * The stream {@link NativeS3AFileSystem} returns (inside an FSDataOutputStream): forwards to
 * {@link S3NativeOutputStream} and answers like S3A's block output stream: capabilities,
 * {@link Abortable}, {@link Syncable} per {@code fs.s3a.downgrade.syncable.exceptions} (the
 * downgraded call warns once per process, as S3A), and IOStatistics under S3A's names plus the
 * native ones ({@code s3native.*}).
 *
 * <p>Statistics travel where S3A's block output stream sends its own: when the stream closes
 * or is aborted (once), its IOStatistics are merged into the filesystem's
 * ({@link FileSystemStatistics}: S3AInstrumentation's store, plus the request counters S3A
 * would have counted itself for the same requests) and, on Hadoop 3.4+, into the creating
 * thread's IOStatisticsContext, as S3A's stream does. The magic committer's {@code _SUCCESS}
 * gets a stream's statistics only through its {@code .pending} file, which the native writer
 * writes (S3A's own task commit resets the thread context before it would add it).
 *
 * <p>Hadoop's FileSystem.Statistics, whose thread-level bytesWritten Spark reports as a task's
 * output bytes, are counted by the FSDataOutputStream {@link NativeS3AFileSystem} wraps this
 * stream in, on the writing thread as each write returns; S3A's stream adds its bytes at close,
 * on the closing thread. A task writes and closes on its own thread, so the task sees the same
 * bytes either way (ThreadStatisticsTest), and on the native path they show while it writes.
 */
final class NativeS3AOutputStream extends OutputStream implements StreamCapabilities, Abortable, Syncable, IOStatisticsSource {
    private static final Logger LOG = LoggerFactory.getLogger(NativeS3AOutputStream.class);

    /** What runs after a successful close (parent directory markers); may be null. */
    interface AfterClose {
        void run() throws IOException;
    }

    static final String MAGIC_CAPABILITY = "fs.s3a.capability.magic.output.stream";
    static final String MAGIC_CAPABILITY_OLD = "s3a:magic.output.stream";
    static final String ABORTABLE = "fs.capability.outputstream.abortable";
    static final String IOSTATISTICS = "iostatistics";
    /** Hadoop 3.5's {@code Options.CreateFileOptionKeys.FS_OPTION_CREATE_CONDITIONAL_OVERWRITE}. */
    static final String CONDITIONAL_OVERWRITE = "fs.option.create.conditional.overwrite";

    /** S3A's LogExactlyOnce WARN_ON_SYNCABLE: the downgraded Syncable warning, once per process. */
    private static final AtomicBoolean WARNED_SYNCABLE = new AtomicBoolean();

    private final S3NativeOutputStream out;
    private final boolean magic;
    private final boolean downgradeSyncable;
    private final AfterClose afterClose;
    private boolean warnedSyncable;
    /** S3A's rule (S3ABlockOutputStream): close or abort acts once, even when it failed; later ones do nothing. */
    private final AtomicBoolean finishCalled = new AtomicBoolean();
    /** Where the statistics go at close or abort; may be null. */
    private final FileSystemStatistics fsStatistics;
    /** The creating thread's IOStatisticsContext aggregator (Hadoop 3.4+), else null. */
    private final IOStatisticsAggregator threadStatistics;
    private final AtomicLong hflushCalls = new AtomicLong();
    private final AtomicLong hsyncCalls = new AtomicLong();
    /** True once abort() acted (S3A's op_abort). */
    private volatile boolean abortCalled;
    /** The statistics are merged once, at the first close or abort. */
    private final AtomicBoolean merged = new AtomicBoolean();

    NativeS3AOutputStream(S3NativeOutputStream out, boolean magic, boolean downgradeSyncable, AfterClose afterClose) {
        this(out, magic, downgradeSyncable, afterClose, null);
    }

    NativeS3AOutputStream(S3NativeOutputStream out, boolean magic, boolean downgradeSyncable, AfterClose afterClose,
            FileSystemStatistics fsStatistics) {
        this.out = out;
        this.magic = magic;
        this.downgradeSyncable = downgradeSyncable;
        this.afterClose = afterClose;
        this.fsStatistics = fsStatistics;
        this.threadStatistics = threadAggregator();
    }

    /** The native stream (its UploadResult after close). */
    S3NativeOutputStream nativeStream() {
        return out;
    }

    @Override
    public void write(int b) throws IOException {
        out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
        if (!finishCalled.get()) { // like S3A: flushing a closed or aborted stream does nothing
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        if (finishCalled.getAndSet(true)) {
            return; // like S3A: closing twice, or after abort(), does nothing
        }
        try {
            out.close();
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // A create-if-absent write found an object at the key (412): S3A's word for it.
            throw new org.apache.hadoop.fs.s3a.RemoteFileChangedException("s3a://" + out.getBucket() + "/" + out.getKey(),
                    "close", "PreconditionFailed (412)", e);
        } finally {
            mergeStatistics(); // as S3A: in close's finally, also when the upload failed
        }
        if (afterClose != null) {
            afterClose.run();
        }
    }

    @Override
    public AbortableResult abort() {
        final boolean wasClosed = finishCalled.getAndSet(true);
        IOException failure = null;
        if (!wasClosed) {
            abortCalled = true;
            try {
                out.abort();
            } catch (IOException e) {
                failure = e;
            }
            mergeStatistics();
        }
        final IOException f = failure;
        return new AbortableResult() {
            @Override
            public boolean alreadyClosed() {
                return wasClosed;
            }

            @Override
            public IOException anyCleanupException() {
                return f;
            }
        };
    }

    @Override
    public boolean hasCapability(String capability) {
        switch (capability.toLowerCase(Locale.ENGLISH)) {
            case MAGIC_CAPABILITY:
            case MAGIC_CAPABILITY_OLD:
                return magic;
            case ABORTABLE:
            case IOSTATISTICS:
                return true;
            case CONDITIONAL_OVERWRITE: // S3A 3.5 reports its stream's write flags
                return out.getMode() == S3NativeOutputStream.Mode.CREATE_IF_ABSENT;
            default:
                return false; // hflush, hsync and the rest
        }
    }

    @Override
    public void hflush() throws IOException {
        syncable("hflush");
    }

    @Override
    public void hsync() throws IOException {
        syncable("hsync");
    }

    private void syncable(String call) {
        (call.equals("hflush") ? hflushCalls : hsyncCalls).incrementAndGet();
        if (!downgradeSyncable) {
            throw new UnsupportedOperationException("S3A streams are not Syncable. See HADOOP-17597.");
        }
        // S3A's words and rule: one WARN per process, naming the first stream's path.
        if (WARNED_SYNCABLE.compareAndSet(false, true)) {
            LOG.warn("Application invoked the Syncable API against stream writing to {}. This is unsupported",
                    out.getKey());
        } else {
            LOG.debug("Downgrading Syncable call {} on {}", call, out.getKey());
        }
    }

    @Override
    public IOStatistics getIOStatistics() {
        try {
            return snapshot(out.getS3AStatistics(magic, hflushCalls.get(), hsyncCalls.get(), abortCalled));
        } catch (IOException e) {
            return new IOStatisticsSnapshot();
        }
    }

    /** Hadoop's IOStatisticsSnapshot from the native library's form of it (field names as in its JSON). */
    @SuppressWarnings("unchecked")
    static IOStatisticsSnapshot snapshot(Map<String, Object> io) {
        IOStatisticsSnapshot snap = new IOStatisticsSnapshot();
        snap.counters().putAll((Map<String, Long>) io.get("counters"));
        snap.gauges().putAll((Map<String, Long>) io.get("gauges"));
        snap.minimums().putAll((Map<String, Long>) io.get("minimums"));
        snap.maximums().putAll((Map<String, Long>) io.get("maximums"));
        for (Map.Entry<String, Object> e : ((Map<String, Object>) io.get("meanstatistics")).entrySet()) {
            Map<String, Long> m = (Map<String, Long>) e.getValue();
            snap.meanStatistics().put(e.getKey(), new MeanStatistic(m.get("samples"), m.get("sum")));
        }
        return snap;
    }

    /** Once: the stream's statistics into the filesystem's and the thread's. */
    /** S3A's name for multipart uploads initiated. */
    static final String INITIATED = "object_multipart_initiated";
    /** Initiates the filesystem already counted at create (see {@link #initiatesAtCreate()}). */
    private long initiatesCountedAtCreate;

    /**
     * The multipart uploads this stream has initiated so far (a magic file initiates at
     * create, as S3A's does), which the filesystem counts at once, as S3A does at create;
     * the merge at close leaves them out of the filesystem's total.
     */
    long initiatesAtCreate() {
        initiatesCountedAtCreate = getIOStatistics().counters().getOrDefault(INITIATED, 0L);
        return initiatesCountedAtCreate;
    }

    private void mergeStatistics() {
        if (!merged.compareAndSet(false, true)) {
            return;
        }
        try {
            IOStatisticsSnapshot snap = (IOStatisticsSnapshot) getIOStatistics();
            if (fsStatistics != null) {
                fsStatistics.streamClosed(snap, magic, initiatesCountedAtCreate);
            }
            if (threadStatistics != null) {
                threadStatistics.aggregate(snap);
            }
        } catch (RuntimeException e) {
            LOG.debug("s3native: merging the statistics of {} failed", this, e);
        }
    }

    // ---- statistics in S3A's names ------------------------------------------------------------

    /** IOStatisticsContext.getCurrentIOStatisticsContext().getAggregator() on Hadoop 3.4+, else null. */
    private static IOStatisticsAggregator threadAggregator() {
        try {
            Class<?> ctx = Class.forName("org.apache.hadoop.fs.statistics.IOStatisticsContext", true,
                    IOStatistics.class.getClassLoader());
            Object current = ctx.getMethod("getCurrentIOStatisticsContext").invoke(null);
            Method aggregator = ctx.getMethod("getAggregator");
            return (IOStatisticsAggregator) aggregator.invoke(current);
        } catch (ClassNotFoundException e) {
            return null; // Hadoop 3.3: no thread-level statistics
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.debug("s3native: no thread IOStatisticsContext", e);
            return null;
        }
    }

    /**
     * The filesystem's side: for each closed or aborted stream, the counters S3A's filesystem
     * counts for the same requests go through S3AInstrumentation's incrementCounter (its
     * metrics, which Hadoop's cost tests read, and its store), the stream's statistics are
     * aggregated into the store (which keeps only the names it has), as S3A's merge does
     * ({@link #streamClosed}; {@code files_created} and {@code committer_magic_files_created}
     * are counted at create, as S3A does); the native names, which that store does not have,
     * are kept here and shown by {@link #view(IOStatistics)} next to S3A's.
     */
    static final class FileSystemStatistics {
        /**
         * S3AInstrumentation's two sides: its metrics counters (what S3A's tests read through
         * {@code getInstrumentation().getCounterValue}) and its IOStatistics store.
         */
        interface Instrumentation {
            /** S3A's {@code incrementCounter}: both the metric and the store (unknown names: nothing). */
            void increment(String name, long value);

            /** The metric alone (S3A's {@code incrementMutableCounter}). */
            void incrementMetric(String name, long value);

            /**
             * True when S3A's merge of a closed stream adds the filesystem's
             * {@code committer_magic_marker_put} total to that metric (3.4+; 3.3.4 does not).
             */
            boolean mergeCountsMagicMarkerMetric();

            /**
             * True when S3A's stream statistics carry its requests' durations
             * ({@code object_put_request}, {@code multipart_upload_part_put},
             * {@code object_multipart_initiated}: 3.4+). On 3.3.4 they do not: its filesystem
             * counts a plain file's PUT and initiate, not the parts nor a magic file's marker
             * and {@code .pending}, and its merge counts only multipart blocks as uploads.
             */
            boolean streamCountsRequests();
        }

        /** The stream counters S3A's merge at stream close adds through incrementCounter (S3AInstrumentation, 3.3.4 to 3.5.0). */
        private static final String[] MERGED_COUNTERS = {"stream_write_total_time", "stream_write_queue_duration",
            "stream_write_total_data", "stream_write_block_uploads", "stream_write_exceptions"};

        private final IOStatistics s3a;
        private final Instrumentation instrumentation;
        private final IOStatisticsSnapshot nativeTotals = new IOStatisticsSnapshot();

        /**
         * @param s3a S3AFileSystem's own IOStatistics (its instrumentation's store); may be null
         * @param instrumentation its counters; may be null (then only the store gets them)
         */
        FileSystemStatistics(IOStatistics s3a, Instrumentation instrumentation) {
            this.s3a = s3a;
            this.instrumentation = instrumentation;
        }

        FileSystemStatistics(IOStatistics s3a) {
            this(s3a, null);
        }

        /**
         * What S3A's filesystem counts for the requests of a stream and at its close: per PUT
         * or part (S3AStore), {@code object_put_bytes} and {@code object_put_request_completed};
         * per request, {@code store_io_request}; for a magic file, the marker and
         * {@code .pending} PUTs as {@code object_put_request} (S3A's tracker sends them through
         * the filesystem); then the merge: five stream counters through incrementCounter, the
         * stream's statistics aggregated into the store, and on 3.4+ the metric
         * {@code committer_magic_marker_put} raised by the store's total.
         */
        void streamClosed(IOStatisticsSnapshot stream, boolean magic, long initiatesCountedAtCreate) {
            if (s3a instanceof IOStatisticsAggregator) {
                Map<String, Long> sc = stream.counters();
                long bytes = sc.getOrDefault("stream_write_bytes", 0L);
                long puts = sc.getOrDefault("object_put_request", 0L);
                long parts = sc.getOrDefault("multipart_upload_part_put", 0L);
                long magicPuts = magic ? sc.getOrDefault("committer_magic_marker_put", 0L) : 0L;
                IOStatisticsSnapshot fs = new IOStatisticsSnapshot(stream);
                Map<String, Long> c = fs.counters();
                Map<String, Long> counted = new java.util.LinkedHashMap<>();
                if (magic) {
                    counted.put("committer_bytes_uploaded", bytes);
                }
                // S3A's filesystem counts each initiate when it sends it (a magic file's at
                // create, NativeS3AFileSystem.magicStream); the stream's own count is merged too.
                counted.put(INITIATED, Math.max(0L, sc.getOrDefault(INITIATED, 0L) - initiatesCountedAtCreate));
                counted.put("object_put_bytes", bytes);
                counted.put("object_put_request_completed", puts + parts + magicPuts);
                counted.put("store_io_request", sc.getOrDefault("s3native.requests", 0L));
                counted.put("object_put_request", magicPuts);
                if (instrumentation != null) {
                    for (String name : MERGED_COUNTERS) {
                        counted.merge(name, sc.getOrDefault(name, 0L), Long::sum);
                    }
                    if (!instrumentation.streamCountsRequests()) { // Hadoop 3.3.4
                        c.remove("object_put_request");
                        c.remove("multipart_upload_part_put");
                        c.remove(INITIATED);
                        counted.put("object_put_request", magic ? 0L : puts);
                        counted.put("stream_write_block_uploads", parts);
                    }
                }
                if (instrumentation != null) {
                    counted.forEach(instrumentation::increment);
                } else {
                    counted.forEach((k, v) -> c.merge(k, v, Long::sum));
                }
                ((IOStatisticsAggregator) s3a).aggregate(fs); // unknown names are ignored by S3A's store
                if (instrumentation != null && instrumentation.mergeCountsMagicMarkerMetric()) {
                    Long total = s3a.counters().get("committer_magic_marker_put");
                    if (total != null) {
                        instrumentation.incrementMetric("committer_magic_marker_put", total);
                    }
                }
            }
            IOStatisticsSnapshot only = new IOStatisticsSnapshot();
            stream.counters().forEach((k, v) -> {
                if (k.startsWith("s3native.")) {
                    only.counters().put(k, v);
                }
            });
            copyNative(stream.minimums(), only.minimums());
            copyNative(stream.maximums(), only.maximums());
            stream.meanStatistics().forEach((k, v) -> {
                if (k.startsWith("s3native.")) {
                    only.meanStatistics().put(k, v.copy());
                }
            });
            nativeTotals.aggregate(only);
        }

        private static void copyNative(Map<String, Long> from, Map<String, Long> to) {
            from.forEach((k, v) -> {
                if (k.startsWith("s3native.")) {
                    to.put(k, v);
                }
            });
        }

        /** S3A's IOStatistics of the filesystem and the native totals, as one (a live view). */
        IOStatistics view(IOStatistics s3aNow) {
            return new IOStatistics() {
                @Override
                public Map<String, Long> counters() {
                    return union(s3aNow == null ? null : s3aNow.counters(), nativeTotals.counters());
                }

                @Override
                public Map<String, Long> gauges() {
                    return union(s3aNow == null ? null : s3aNow.gauges(), nativeTotals.gauges());
                }

                @Override
                public Map<String, Long> minimums() {
                    return union(s3aNow == null ? null : s3aNow.minimums(), nativeTotals.minimums());
                }

                @Override
                public Map<String, Long> maximums() {
                    return union(s3aNow == null ? null : s3aNow.maximums(), nativeTotals.maximums());
                }

                @Override
                public Map<String, MeanStatistic> meanStatistics() {
                    return union(s3aNow == null ? null : s3aNow.meanStatistics(), nativeTotals.meanStatistics());
                }

                @Override
                public String toString() {
                    return org.apache.hadoop.fs.statistics.IOStatisticsLogging.ioStatisticsToString(this);
                }
            };
        }

        private static <V> Map<String, V> union(Map<String, V> a, Map<String, V> b) {
            Map<String, V> m = new java.util.TreeMap<>();
            if (a != null) {
                m.putAll(a);
            }
            m.putAll(b); // ConcurrentHashMaps: safe while a stream merges
            return java.util.Collections.unmodifiableMap(m);
        }
    }

    @Override
    public String toString() {
        return "NativeS3AOutputStream{s3://" + out.getBucket() + "/" + out.getKey() + (magic ? ", magic" : "") + "}";
    }
}
