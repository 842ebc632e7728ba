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

    private static List<FileCommit> files(WriterCommitMessage[] messages) {
        List<FileCommit> out = new ArrayList<>();
        for (WriterCommitMessage m : messages) {
            if (m instanceof NativeParquetCommitMessage) {
                out.addAll(((NativeParquetCommitMessage) m).files);
            }
        }
        return out;
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        List<FileCommit> files = files(messages);
        long start = System.currentTimeMillis();
        try {
            FileSystem fs = output.getFileSystem(conf);
            if (truncate) {
                deleteContents(fs);
            }
            completeAll(files);
            writeSuccess(fs, files, start);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        LOG.info("s3native.parquet: job {} committed {} files to {}", spec.jobId, files.size(), output);
    }

    /** Complete every upload, {@link #COMPLETE_THREADS} at a time; the first failure is thrown, naming its key. */
    private void completeAll(List<FileCommit> files) throws IOException {
        int threads = Math.min(COMPLETE_THREADS, files.size());
        if (threads == 0) {
            return;
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "s3native.parquet-commit");
            t.setDaemon(true);
            return t;
        });
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (FileCommit f : files) {
                done.add(pool.submit(() -> {
                    try {
                        S3NativeOutputStream.complete(UploadResult.fromJson(f.upload), spec.settings);
                    } catch (IOException e) {
                        throw new IOException("s3native.parquet: completing the upload of s3a://" + f.bucket + "/" + f.key
                                + ": " + e.getMessage(), e);
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<?> d : done) {
                try {
                    d.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    throw e.getCause() instanceof IOException ? (IOException) e.getCause() : new IOException(e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("s3native.parquet: job commit interrupted");
                }
            }
        } finally {
            pool.shutdownNow();
        }
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
        s.put("jobIdSource", "spark query id");
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
        List<FileCommit> files = files(messages);
        IOException first = null;
        for (FileCommit f : files) {
            try {
                S3NativeOutputStream.abort(UploadResult.fromJson(f.upload), spec.settings);
            } catch (IOException e) {
                LOG.warn("s3native.parquet: aborting the upload of s3a://{}/{}: {}", f.bucket, f.key, e.getMessage());
                if (first == null) {
                    first = e;
                }
            }
        }
        LOG.info("s3native.parquet: job {} aborted {} uploads under {}", spec.jobId, files.size(), output);
        if (first != null) {
            throw new UncheckedIOException(first);
        }
    }

    @Override
    public String toString() {
        return spec.toString();
    }

}
