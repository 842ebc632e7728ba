package io.s3native.druid;

import io.s3native.S3NativeInputStream;
import io.s3native.S3NativeObjects;
import io.s3native.S3NativeOutputStream;
import io.s3native.UploadResult;
import org.apache.druid.storage.StorageConnector;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Druid's {@link StorageConnector} on the native core: paths are keys under
 * {@code s3://bucket/prefix/}.
 *
 * <ul>
 * <li>{@link #write}: the native writer ({@link S3NativeOutputStream}): bytes go straight into
 *     native part buffers, full parts upload in parallel under the process-wide budget (FIFO
 *     admission shared by every task of the JVM); an output that fits in one part is one
 *     PutObject, an empty one too; nothing touches local disk. A failed write or close aborts
 *     the upload and says so; metrics go to Druid's emitter at close ({@link UploadMetrics}).</li>
 * <li>{@link #read} and {@link #readRange}: the native reader ({@link S3NativeInputStream}), every
 *     GET pinned to the object's ETag; a missing path is a {@link java.io.FileNotFoundException}
 *     naming it.</li>
 * <li>{@link #pathExists}, {@link #deleteFile}, {@link #deleteFiles} (DeleteObjects, 1,000 keys a
 *     request), {@link #deleteRecursively}, {@link #listDir} (lazy, names relative to the
 *     directory): the native object operations ({@link S3NativeObjects}).</li>
 * </ul>
 */
public class S3NativeStorageConnector implements StorageConnector
{
  /** Ranges up to this size are read without read-ahead (trailers, footers, small frames). */
  static final long SMALL_RANGE = 1 << 20;

  private final String bucket;
  private final String prefix;
  private final Map<String, String> settings;
  private final UploadMetrics metrics;
  private final S3NativeObjects objects;
  private final long partSize;

  S3NativeStorageConnector(String bucket, String prefix, Map<String, String> settings, UploadMetrics metrics) throws IOException
  {
    this.bucket = bucket;
    String p = prefix;
    while (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    while (p.startsWith("/")) {
      p = p.substring(1);
    }
    this.prefix = p;
    this.settings = Map.copyOf(settings);
    this.metrics = metrics;
    this.objects = new S3NativeObjects(bucket, this.settings);
    this.partSize = S3NativeOutputStream.checkSettings(bucket, this.settings).number("part_size");
  }

  public String getBucket()
  {
    return bucket;
  }

  public String getPrefix()
  {
    return prefix;
  }

  /** The object key of {@code path}: prefix + "/" + path. */
  String key(String path)
  {
    String p = path == null ? "" : path;
    while (p.startsWith("/")) {
      p = p.substring(1);
    }
    if (prefix.isEmpty()) {
      return p;
    }
    return p.isEmpty() ? prefix : prefix + "/" + p;
  }

  private String where(String path)
  {
    return "s3://" + bucket + "/" + key(path);
  }

  @Override
  public boolean pathExists(String path) throws IOException
  {
    return objects.exists(key(path));
  }

  @Override
  public InputStream read(String path) throws IOException
  {
    return S3NativeInputStream.open(bucket, key(path), settings, null, S3NativeInputStream.ReadPolicy.SEQUENTIAL, -1, null);
  }

  @Override
  public InputStream readRange(String path, long from, long size) throws IOException
  {
    if (from < 0 || size < 0) {
      throw new IllegalArgumentException("readRange of " + where(path) + ": offset " + from + " and size " + size
                                         + " must not be negative");
    }
    S3NativeInputStream.ReadPolicy policy = size <= SMALL_RANGE
                                            ? S3NativeInputStream.ReadPolicy.RANDOM
                                            : S3NativeInputStream.ReadPolicy.SEQUENTIAL;
    S3NativeInputStream in = S3NativeInputStream.open(bucket, key(path), settings, null, policy, -1, null);
    try {
      in.seek(from);
    }
    catch (IOException | RuntimeException e) {
      in.close();
      throw e;
    }
    return new RangeInputStream(in, size);
  }

  @Override
  public OutputStream write(String path) throws IOException
  {
    return new UploadStream(new S3NativeOutputStream(bucket, key(path), S3NativeOutputStream.Mode.PUBLISH, settings));
  }

  @Override
  public void deleteFile(String path) throws IOException
  {
    objects.delete(key(path));
  }

  @Override
  public void deleteFiles(Iterable<String> paths) throws IOException
  {
    List<String> keys = new ArrayList<>();
    for (String p : paths) {
      keys.add(key(p));
    }
    if (!keys.isEmpty()) {
      objects.deleteAll(keys);
    }
  }

  @Override
  public void deleteRecursively(String dirName) throws IOException
  {
    objects.deleteRecursively(key(dirName));
  }

  @Override
  public Iterator<String> listDir(String dirName) throws IOException
  {
    return objects.list(key(dirName));
  }

  @Override
  public String toString()
  {
    return "S3NativeStorageConnector{s3://" + bucket + "/" + prefix + "}";
  }

  /** At most {@code size} bytes of the stream from its position. */
  static final class RangeInputStream extends InputStream
  {
    private final S3NativeInputStream in;
    private long left;

    RangeInputStream(S3NativeInputStream in, long size)
    {
      this.in = in;
      this.left = size;
    }

    @Override
    public int read() throws IOException
    {
      if (left <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        left--;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException
    {
      if (len == 0) {
        return 0;
      }
      if (left <= 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException
    {
      long skipped = in.skip(Math.min(Math.max(n, 0), left));
      left -= skipped;
      return skipped;
    }

    @Override
    public int available() throws IOException
    {
      return (int) Math.min(in.available(), left);
    }

    @Override
    public void close()
    {
      in.close();
    }
  }

  /** The native writer, with the failure message Druid needs and the metrics at close. */
  final class UploadStream extends FilterOutputStream
  {
    private final S3NativeOutputStream out;
    private final long opened = System.nanoTime();
    private boolean closed;

    UploadStream(S3NativeOutputStream out)
    {
      super(out);
      this.out = out;
    }

    private IOException failed(IOException e)
    {
      String state;
      try {
        out.abort();
        state = "the upload was aborted: nothing was written and no multipart upload is left";
      }
      catch (IOException abortFailed) {
        state = "aborting the upload failed too (" + abortFailed.getMessage() + ")";
      }
      return new IOException("Writing s3://" + bucket + "/" + out.getKey() + " failed and " + state + ": " + e.getMessage(), e);
    }

    @Override
    public void write(int b) throws IOException
    {
      try {
        out.write(b);
      }
      catch (IOException e) {
        throw failed(e);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException
    {
      try {
        out.write(b, off, len);
      }
      catch (IOException e) {
        throw failed(e);
      }
    }

    @Override
    public void flush()
    {
      // The native writer never cuts a part on flush; nothing to do.
    }

    @Override
    public void close() throws IOException
    {
      if (closed) {
        return;
      }
      closed = true;
      UploadResult r;
      try {
        r = out.closeAndGetResult();
      }
      catch (IOException e) {
        throw failed(e);
      }
      metrics.emit(r, (System.nanoTime() - opened) / 1_000_000, partSize);
    }
  }
}
