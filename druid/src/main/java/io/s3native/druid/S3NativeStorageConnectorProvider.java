package io.s3native.druid;

import com.fasterxml.jackson.annotation.JacksonInject;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonTypeName;
import io.s3native.InvalidSettingException;
import io.s3native.S3NativeOutputStream;
import org.apache.druid.java.util.common.HumanReadableBytes;
import org.apache.druid.java.util.emitter.service.ServiceEmitter;
import org.apache.druid.storage.StorageConnector;
import org.apache.druid.storage.StorageConnectorProvider;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code s3native} storage connector: {@code druid.msq.intermediate.storage.type=s3native}
 * with {@code bucket} and {@code prefix} (required), {@code chunkSize} (the part size of a
 * multipart upload, 5 MiB to 5 GiB; default: s3native's part size) and {@code maxRetry} (retries
 * of one request; default 10, as Druid's S3 connector). {@code tempDir} is accepted for
 * compatibility with the {@code s3} type and unused: nothing is written to local disk.
 * The S3 client comes from {@code druid.s3.*} ({@link S3NativeClientConfig}), the process-wide
 * budget from {@code druid.s3native.*} ({@link S3NativeDruidConfig}); upload metrics go to
 * Druid's {@link ServiceEmitter}.
 */
@JsonTypeName(S3NativeStorageConnectorProvider.TYPE)
public class S3NativeStorageConnectorProvider implements StorageConnectorProvider
{
  public static final String TYPE = "s3native";

  /** Druid's S3 connector's default retries of one request. */
  static final int DEFAULT_MAX_RETRY = 10;

  private final String bucket;
  private final String prefix;
  private final File tempDir;
  private final HumanReadableBytes chunkSize;
  private final Integer maxRetry;

  @JacksonInject
  S3NativeClientConfig clientConfig;

  @JacksonInject
  S3NativeDruidConfig extensionConfig;

  @JacksonInject
  ServiceEmitter emitter;

  @JsonCreator
  public S3NativeStorageConnectorProvider(
      @JsonProperty(value = "bucket", required = true) String bucket,
      @JsonProperty(value = "prefix", required = true) String prefix,
      @JsonProperty("tempDir") File tempDir,
      @JsonProperty("chunkSize") HumanReadableBytes chunkSize,
      @JsonProperty("maxRetry") Integer maxRetry
  )
  {
    if (bucket == null || bucket.isBlank()) {
      throw new IllegalArgumentException("s3native storage connector: bucket must be set");
    }
    this.bucket = bucket;
    this.prefix = Objects.requireNonNull(prefix, "s3native storage connector: prefix must be set");
    this.tempDir = tempDir;
    this.chunkSize = chunkSize;
    if (maxRetry != null && maxRetry < 0) {
      throw new IllegalArgumentException("s3native storage connector: maxRetry must be at least 0, not " + maxRetry);
    }
    this.maxRetry = maxRetry;
  }

  @JsonProperty
  public String getBucket()
  {
    return bucket;
  }

  @JsonProperty
  public String getPrefix()
  {
    return prefix;
  }

  @JsonProperty
  public File getTempDir()
  {
    return tempDir;
  }

  @JsonProperty
  public HumanReadableBytes getChunkSize()
  {
    return chunkSize;
  }

  @JsonProperty
  public Integer getMaxRetry()
  {
    return maxRetry;
  }

  /**
   * The s3native settings of this connector: the client's ({@code druid.s3.*}), the
   * extension's ({@code druid.s3native.*}), the part size and retries. Holds secrets: never
   * log it.
   */
  Map<String, String> settings()
  {
    Map<String, String> s = new HashMap<>();
    (clientConfig == null ? new S3NativeClientConfig() : clientConfig).addTo(s);
    if (extensionConfig != null) {
      extensionConfig.addTo(s);
    }
    if (chunkSize != null) {
      s.put("fs.s3a.native.part.size", Long.toString(chunkSize.getBytes()));
    }
    s.put("fs.s3a.retry.limit", Integer.toString(maxRetry == null ? DEFAULT_MAX_RETRY : maxRetry));
    return s;
  }

  /** The Druid property that an s3native setting came from, for messages. */
  static String druidName(String setting)
  {
    if (setting == null) {
      return null;
    }
    switch (setting) {
      case "fs.s3a.native.part.size":
        return "druid.msq.intermediate.storage.chunkSize";
      case "fs.s3a.retry.limit":
        return "druid.msq.intermediate.storage.maxRetry";
      case "fs.s3a.endpoint":
        return "druid.s3.endpoint.url";
      case "fs.s3a.endpoint.region":
        return "druid.s3.endpoint.signingRegion";
      case "fs.s3a.path.style.access":
        return "druid.s3.enablePathStyleAccess";
      case "fs.s3a.native.memory.budget":
        return "druid.s3native.memoryBudget";
      case "fs.s3a.native.parts.in.flight":
        return "druid.s3native.partsInFlight";
      case "fs.s3a.native.target.throughput":
        return "druid.s3native.targetThroughput";
      default:
        return setting;
    }
  }

  /**
   * A connector on {@code s3://bucket/prefix}. The settings are checked here, so a bad value
   * fails the task at once, naming the Druid property.
   */
  @Override
  public StorageConnector createStorageConnector(File defaultTempDir)
  {
    Map<String, String> settings = settings();
    try {
      S3NativeOutputStream.checkSettings(bucket, settings);
      return new S3NativeStorageConnector(bucket, prefix, settings, new UploadMetrics(emitter));
    }
    catch (InvalidSettingException e) {
      if (e.getSetting() == null) {
        throw e;
      }
      String name = druidName(e.getSetting());
      throw new InvalidSettingException(e.getMessage().replace(e.getSetting(), name), name);
    }
    catch (IOException e) {
      throw new UncheckedIOException("s3native storage connector on s3://" + bucket + "/" + prefix + ": " + e.getMessage(), e);
    }
  }

  @Override
  public String toString()
  {
    return "S3NativeStorageConnectorProvider{bucket=" + bucket + ", prefix=" + prefix + ", chunkSize=" + chunkSize
           + ", maxRetry=" + maxRetry + ", client=" + clientConfig + ", native=" + extensionConfig + "}";
  }
}
