package io.s3native.parquet;

import java.io.Closeable;
import java.io.IOException;
import java.util.Map;

/**
 * One Parquet file written natively to S3 from Arrow data that arrives through the Arrow C
 * stream interface: the caller exports one {@code ArrowArrayStream} per file (arrow-c-data's
 * {@code Data.exportArrayStream}, at the version matching the engine's arrow-vector) and
 * passes its {@code memoryAddress()}; the native writer takes the stream over at once (the
 * Java struct is left released, so closing it afterwards is harmless), reads its schema once
 * and pulls the batches by reference, encoding them with the parquet crate straight into
 * the multipart upload's part buffers.
 *
 * <p>Lifecycle, as the native writer's: {@link #writeNext} / {@link #writeAll} pull batches;
 * {@link #finish} writes the footer and closes the upload as its mode says (PUBLISH:
 * visible; DEFERRED: the result JSON carries the upload id and ETags, to complete or abort
 * later), a second call returns the same result; {@link #abort} discards the upload, also
 * from another thread while a write is blocked; the first failure is sticky (the upload is
 * aborted and every later call throws it); {@link #close} frees the native writer, aborting
 * an upload that was not finished. Bad input (a null address, a released stream, a schema
 * change mid-file) throws, it never crashes the JVM.
 */
public final class NativeParquetWriter implements Closeable {
    private final Object freeLock = new Object();
    /** The native handle; 0 once freed. Written under both locks, read under either. */
    private volatile long handle;
    private String result;

    private NativeParquetWriter(long handle) {
        this.handle = handle;
    }

    /**
     * Open a writer for {@code s3://bucket/key} on the Arrow C stream at {@code streamAddress}.
     *
     * @param mode {@code PUBLISH}, {@code DEFERRED} or {@code CREATE_IF_ABSENT}
     * @param settings the writer's settings ({@code fs.s3a.*} keys)
     * @param optionsJson the Parquet options by name (null: the defaults), e.g.
     *     {@code {"compression": "ZSTD", "row_group_rows": 100000}}
     */
    public static NativeParquetWriter open(String bucket, String key, String mode, Map<String, String> settings, String optionsJson,
            long streamAddress) throws IOException {
        ParquetNative.load();
        return new NativeParquetWriter(ParquetNative.open(bucket, key, mode, pairs(settings), 0, optionsJson, streamAddress));
    }

    /**
     * Open a writer for a file under an S3A magic path: close leaves the upload on the final
     * key uncompleted and writes the marker and {@code .pending} file the magic committer reads.
     *
     * @param layout {@code MAGIC} (Hadoop 3.3) or {@code MAGIC_JOB} (3.4+)
     * @param etags {@code UNQUOTED}, {@code QUOTED} or {@code OBJECTS}: the {@code .pending} form the Hadoop line reads
     */
    public static NativeParquetWriter openMagic(String bucket, String magicKey, String uri, String layout, String etags,
            Map<String, String> settings, String optionsJson, long streamAddress) throws IOException {
        ParquetNative.load();
        return new NativeParquetWriter(
                ParquetNative.openMagic(bucket, magicKey, uri, layout, etags, pairs(settings), 0, optionsJson, streamAddress));
    }

    private static String[] pairs(Map<String, String> settings) {
        String[] kv = new String[settings.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : settings.entrySet()) {
            kv[i++] = e.getKey();
            kv[i++] = e.getValue();
        }
        return kv;
    }

    private long live() throws IOException {
        long h = handle;
        if (h == 0) {
            throw new IOException("the Parquet writer is closed");
        }
        return h;
    }

    /**
     * Pull up to {@code maxBatches} batches from the stream (all when negative) and write them.
     *
     * @return {@code batches} and {@code rows} written by this call, {@code ended} once the stream has ended
     */
    public synchronized Map<String, Object> writeNext(long maxBatches) throws IOException {
        return ParquetNative.writeNext(live(), maxBatches);
    }

    /** Write every batch left in the stream; the rows written. */
    public long writeAll() throws IOException {
        return ((Long) writeNext(-1).get("rows")).longValue();
    }

    /** Finish the file and close the upload as the mode says; the ParquetResult JSON. */
    public synchronized String finish() throws IOException {
        if (result == null) {
            result = ParquetNative.close(live());
        }
        return result;
    }

    /** Abort the upload (nothing after a successful finish); does not wait for a write in progress. */
    public void abort() throws IOException {
        synchronized (freeLock) {
            long h = handle;
            if (h != 0) {
                ParquetNative.abort(h);
            }
        }
    }

    /** Free the native writer; an unfinished upload is aborted, never completed. A second call does nothing. */
    @Override
    public synchronized void close() {
        synchronized (freeLock) {
            long h = handle;
            if (h != 0) {
                handle = 0;
                ParquetNative.free(h);
            }
        }
    }
}
