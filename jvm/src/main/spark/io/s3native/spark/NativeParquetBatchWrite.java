package io.s3native.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.s3native.S3NativeOutputStream;
import io.s3native.UploadResult;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's side of one write. {@link #commit} (after every task committed): with
 * truncate (save mode overwrite) the old contents of the output directory are deleted, then
 * every task's upload is completed and {@code _SUCCESS} is written as S3A's committers write
 * it (SuccessData JSON, up to 100 file names). {@link #abort} aborts every upload the
 * committed tasks handed over; failed and denied attempts abort their own
 * ({@code DataWriter.abort}).
 */
final class NativeParquetBatchWrite implements BatchWrite {
    private static final Logger LOG = LoggerFactory.getLogger(NativeParquetBatchWrite.class);
    /** SuccessData's format name, which Hadoop's {@code SuccessData.load} checks. */
    static final String SUCCESS_DATA_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1";
    static final String COMMITTER = "s3native.parquet";
    private static final int SUCCESS_FILENAMES = 100;
    /** Uploads completed at once by the job commit. */
    static final int COMPLETE_THREADS = 16;

    private final WriteSpec spec;
    private final Path output;
    private final Configuration conf;
    private final boolean truncate;

    NativeParquetBatchWrite(WriteSpec spec, Path output, Configuration conf, boolean truncate) {
        this.spec = spec;
        this.output = output;
        this.conf = conf;
        this.truncate = truncate;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new NativeParquetWriterFactory(spec);
    }

    /** Hadoop's key (S3A's committers honour it): sweep this job's pending uploads at job commit and abort; default true. */
    static final String ABORT_PENDING_UPLOADS = "fs.s3a.committer.abort.pending.uploads";
    /** Test hook: the complete of every file whose key contains this string fails (the job commit then fails). */
    static final String TEST_FAIL_COMPLETE = "s3native.parquet.test.fail.complete";

    /** Keys whose upload the job commit completed: a failed job deletes them. */
    private final java.util.Set<String> completed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The job's cleanup runs once (commit's failure path, then Spark's abort). */
    private final java.util.concurrent.atomic.AtomicBoolean cleaned = new java.util.concurrent.atomic.AtomicBoolean();

    private static List<FileCommit> files(WriterCommitMessage[] messages) {
        List<FileCommit> out = new ArrayList<>();
        for (WriterCommitMessage m : messages) {
            if (m instanceof NativeParquetCommitMessage) {
                out.addAll(((NativeParquetCommitMessage) m).files);
            }
        }
        return out;
    }

    /** A message of another kind than a task of this write sends (its uploads, if any, are left to the sweep). */
    private static WriterCommitMessage unexpected(WriterCommitMessage[] messages) {
        for (WriterCommitMessage m : messages) {
            if (m != null && !(m instanceof NativeParquetCommitMessage)) {
                return m;
            }
        }
        return null;
    }

    /**
     * The upload of {@code f} as the native library reads it: its own JSON, or, when that cannot
     * be read (a corrupt message), a result of its bucket, key and upload id only, which is enough to abort it.
     */
    private static UploadResult forAbort(FileCommit f) {
        try {
            return UploadResult.fromJson(f.upload);
        } catch (RuntimeException e) {
            return minimal(f.bucket, f.key, f.uploadId);
        }
    }

    /** A deferred result naming only an upload (no parts, no statistics): what abort needs. */
    static UploadResult minimal(String bucket, String key, String uploadId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bucket", bucket);
        m.put("key", key);
        m.put("upload_id", uploadId);
        m.put("etags", List.of());
        m.put("length", 0);
        m.put("completed", false);
        try {
            return UploadResult.fromJson(new ObjectMapper().writeValueAsString(m));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        List<FileCommit> files = files(messages);
        long start = System.currentTimeMillis();
        try {
            WriterCommitMessage other = unexpected(messages);
            if (other != null) {
                throw new IOException("s3native.parquet: job " + spec.jobId + " got a commit message of another write: "
                        + other.getClass().getName());
            }
            List<UploadResult> results = new ArrayList<>();
            for (FileCommit f : files) {
                try {
                    results.add(UploadResult.fromJson(f.upload));
                } catch (RuntimeException e) {
                    throw new IOException("s3native.parquet: the task result of s3a://" + f.bucket + "/" + f.key
                            + " cannot be read: " + e.getMessage(), e);
                }
            }
            FileSystem fs = output.getFileSystem(conf);
            if (truncate) {
                deleteContents(fs);
            }
            completeAll(files, results);
            sweep(files);
            writeSuccess(fs, files, start);
        } catch (IOException | RuntimeException e) {
            try {
                cleanup(files);
            } catch (RuntimeException c) {
                e.addSuppressed(c);
            }
            throw e instanceof IOException ? new UncheckedIOException((IOException) e) : (RuntimeException) e;
        }
        LOG.info("s3native.parquet: job {} committed {} files to {}", spec.jobId, files.size(), output);
    }

    /**
     * Complete every upload, {@link #COMPLETE_THREADS} at a time. After a failure no further
     * complete starts, and every one already started is awaited before this returns, so no
     * object appears after the job's cleanup; the first failure is thrown, naming its key.
     */
    private void completeAll(List<FileCommit> files, List<UploadResult> results) throws IOException {
        int threads = Math.min(COMPLETE_THREADS, files.size());
        if (threads == 0) {
            return;
        }
        String failKey = conf.get(TEST_FAIL_COMPLETE);
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "s3native.parquet-commit");
            t.setDaemon(true);
            return t;
        });
        IOException first = null;
        boolean interrupted = false;
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int i = 0; i < files.size(); i++) {
                FileCommit f = files.get(i);
                UploadResult r = results.get(i);
                done.add(pool.submit(() -> {
                    if (failed.get()) {
                        return null; // another complete failed: this upload is left to the cleanup's abort
                    }
                    try {
                        if (failKey != null && !failKey.isEmpty() && f.key.contains(failKey)) {
                            throw new IOException("test fault (" + TEST_FAIL_COMPLETE + ")");
                        }
                        S3NativeOutputStream.complete(r, spec.settings);
                        completed.add(f.key);
                    } catch (IOException | RuntimeException e) {
                        failed.set(true);
                        throw new IOException("s3native.parquet: completing the upload of s3a://" + f.bucket + "/" + f.key
                                + ": " + e.getMessage(), e);
                    }
                    return null;
                }));
            }
            // Await every one, also after a failure or an interrupt: a complete still running would
            // make its object appear after the cleanup deleted the completed ones.
            for (java.util.concurrent.Future<?> d : done) {
                while (true) {
                    try {
                        d.get();
                        break;
                    } catch (java.util.concurrent.ExecutionException e) {
                        if (first == null) {
                            first = e.getCause() instanceof IOException ? (IOException) e.getCause() : new IOException(e.getCause());
                        }
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true;
                        failed.set(true);
                    }
                }
            }
        } finally {
            pool.shutdown();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("s3native.parquet: job commit interrupted");
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Abort this job's multipart uploads under the output directory that no committed task
     * handed over (tasks lost after they initiated one), when {@link #ABORT_PENDING_UPLOADS}
     * is true (the default). Only uploads named as this job's files are touched
     * ({@code part-NNNNN-<job id>-...}). A listing or abort failure is logged, not thrown.
     */
    private void sweep(List<FileCommit> known) {
        if (!conf.getBoolean(ABORT_PENDING_UPLOADS, true)) {
            return;
        }
        java.util.Set<String> committedIds = new java.util.HashSet<>();
        for (FileCommit f : known) {
            if (f.uploadId != null) {
                committedIds.add(f.uploadId);
            }
        }
        java.util.regex.Pattern mine = java.util.regex.Pattern.compile(
                "part-\\d{5}-" + java.util.regex.Pattern.quote(spec.jobId) + "-[^/]*$");
        String prefix = spec.prefix.isEmpty() ? "" : spec.prefix + "/";
        int swept = 0;
        try {
            FileSystem fs = output.getFileSystem(conf);
            // S3AFileSystem.listUploads(String): its return type (and the SDK's MultipartUpload) differ
            // between Hadoop 3.3 (SDK v1) and 3.4+ (SDK v2), hence by reflection.
            Object it = fs.getClass().getMethod("listUploads", String.class).invoke(fs, prefix);
            @SuppressWarnings("unchecked")
            org.apache.hadoop.fs.RemoteIterator<Object> uploads = (org.apache.hadoop.fs.RemoteIterator<Object>) it;
            while (uploads.hasNext()) {
                Object u = uploads.next();
                String key = (String) accessor(u, "getKey", "key");
                String id = (String) accessor(u, "getUploadId", "uploadId");
                if (key == null || id == null || !key.startsWith(prefix) || committedIds.contains(id) || !mine.matcher(key).find()) {
                    continue;
                }
                try {
                    S3NativeOutputStream.abort(minimal(spec.bucket, key, id), spec.settings);
                    swept++;
                } catch (IOException e) {
                    LOG.warn("s3native.parquet: aborting the pending upload of s3a://{}/{}: {}", spec.bucket, key, e.getMessage());
                }
            }
        } catch (ReflectiveOperationException | IOException | RuntimeException e) {
            LOG.warn("s3native.parquet: job {}: listing the pending uploads under {} failed: {}", spec.jobId, output, e.toString());
        }
        if (swept > 0) {
            LOG.info("s3native.parquet: job {} aborted {} pending uploads no task committed under {}", spec.jobId, swept, output);
        }
    }

    private static Object accessor(Object o, String... names) throws ReflectiveOperationException {
        for (String n : names) {
            try {
                return o.getClass().getMethod(n).invoke(o);
            } catch (NoSuchMethodException e) {
                // the other SDK's name
            }
        }
        throw new NoSuchMethodException(o.getClass().getName() + "." + String.join("/", names));
    }

    /** What save mode overwrite replaces: everything under the output directory (as Spark's parquet source, static mode). */
    private void deleteContents(FileSystem fs) throws IOException {
        FileStatus[] children;
        try {
            children = fs.listStatus(output);
        } catch (java.io.FileNotFoundException e) {
            return;
        }
        for (FileStatus c : children) {
            if (!fs.delete(c.getPath(), true) && fs.exists(c.getPath())) {
                throw new IOException("s3native.parquet: overwrite could not delete " + c.getPath());
            }
        }
    }

    private void writeSuccess(FileSystem fs, List<FileCommit> files, long start) throws IOException {
        Map<String, Object> s = new LinkedHashMap<>();
        long now = System.currentTimeMillis();
        s.put("name", SUCCESS_DATA_NAME);
        s.put("timestamp", now);
        s.put("date", new java.util.Date(now).toString());
        s.put("hostname", hostname());
        s.put("committer", COMMITTER);
        s.put("description", "s3native.parquet DataSource V2 write: native Parquet files as deferred uploads, completed by the driver");
        s.put("jobId", spec.jobId);
        s.put("jobIdSource", spec.jobIdSource);
        Map<String, Long> metrics = new LinkedHashMap<>();
        long rows = 0;
        long bytes = 0;
        for (FileCommit f : files) {
            rows += f.rows;
            bytes += f.bytes;
        }
        metrics.put("files_committed", (long) files.size());
        metrics.put("rows", rows);
        metrics.put("bytes", bytes);
        metrics.put("commit_millis", now - start);
        s.put("metrics", metrics);
        s.put("diagnostics", Map.of());
        List<String> names = new ArrayList<>();
        for (int i = 0; i < files.size() && i < SUCCESS_FILENAMES; i++) {
            names.add("/" + files.get(i).key);
        }
        s.put("filenames", names);
        byte[] json = new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(s);
        try (FSDataOutputStream out = fs.create(new Path(output, "_SUCCESS"), true)) {
            out.write(json);
        }
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        cleanup(files(messages));
    }

    /**
     * A failed job's cleanup (once): delete the objects the job commit completed, abort every
     * other upload the tasks handed over (by bucket, key and upload id when a result cannot be
     * read), then sweep this job's pending uploads no task handed over. The first failure is thrown
     * after all were tried.
     */
    private void cleanup(List<FileCommit> files) {
        if (!cleaned.compareAndSet(false, true)) {
            return;
        }
        IOException first = null;
        int deleted = 0;
        for (FileCommit f : files) {
            try {
                if (completed.contains(f.key)) {
                    Path p = new Path("s3a://" + f.bucket + "/" + f.key);
                    FileSystem fs = p.getFileSystem(conf);
                    if (!fs.delete(p, false) && fs.exists(p)) {
                        throw new IOException("could not delete the completed object");
                    }
                    deleted++;
                } else if (f.uploadId != null) {
                    S3NativeOutputStream.abort(forAbort(f), spec.settings);
                }
            } catch (IOException e) {
                LOG.warn("s3native.parquet: cleaning up s3a://{}/{}: {}", f.bucket, f.key, e.getMessage());
                if (first == null) {
                    first = new IOException("s3native.parquet: cleaning up s3a://" + f.bucket + "/" + f.key + ": " + e.getMessage(), e);
                }
            }
        }
        sweep(files);
        LOG.info("s3native.parquet: job {} aborted: {} uploads aborted, {} completed objects deleted under {}", spec.jobId,
                files.size() - deleted, deleted, output);
        if (first != null) {
            throw new UncheckedIOException(first);
        }
    }

    @Override
    public String toString() {
        return spec.toString();
    }

}
