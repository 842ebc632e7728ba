package io.s3native.druid;

import com.fasterxml.jackson.annotation.JacksonInject;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonTypeName;
import org.apache.druid.java.util.emitter.service.ServiceEmitter;
import org.apache.druid.storage.ExportStorageProvider;
import org.apache.druid.storage.StorageConnector;

import java.io.File;
import java.util.List;

/**
 * The {@code s3native} export destination ({@code EXTERN(s3native(bucket => ..., prefix => ...))}):
 * the same contract as Druid's {@code s3} one. The destination {@code s3://bucket/prefix} must
 * lie under one of {@code druid.export.storage.s3native.allowedExportPaths}; the files are
 * written through the native {@link S3NativeStorageConnector}.
 */
@JsonTypeName(S3NativeExportStorageProvider.TYPE)
public class S3NativeExportStorageProvider implements ExportStorageProvider
{
  public static final String TYPE = "s3native";
  static final String ALLOWED = S3NativeExportConfig.PREFIX + ".allowedExportPaths";

  private final String bucket;
  private final String prefix;

  @JacksonInject
  S3NativeExportConfig exportConfig;

  @JacksonInject
  S3NativeClientConfig clientConfig;

  @JacksonInject
  S3NativeDruidConfig extensionConfig;

  @JacksonInject
  ServiceEmitter emitter;

  @JsonCreator
  public S3NativeExportStorageProvider(
      @JsonProperty(value = "bucket", required = true) String bucket,
      @JsonProperty(value = "prefix", required = true) String prefix
  )
  {
    if (bucket == null || bucket.isBlank()) {
      throw new IllegalArgumentException("s3native export: bucket must be set");
    }
    if (prefix == null) {
      throw new IllegalArgumentException("s3native export: prefix must be set");
    }
    this.bucket = bucket;
    this.prefix = prefix;
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

  @Override
  public String getResourceType()
  {
    return TYPE;
  }

  /** {@code s3://bucket/prefix}, the prefix without leading or trailing slashes. */
  @Override
  public String getBasePath()
  {
    return uri(prefix);
  }

  @Override
  public String getFilePathForManifest(String fileName)
  {
    return uri(strip(prefix) + "/" + strip(fileName));
  }

  private String uri(String path)
  {
    String p = strip(path);
    return "s3://" + bucket + (p.isEmpty() ? "" : "/" + p);
  }

  private static String strip(String s)
  {
    int a = 0;
    int b = s.length();
    while (a < b && s.charAt(a) == '/') {
      a++;
    }
    while (b > a && s.charAt(b - 1) == '/') {
      b--;
    }
    return s.substring(a, b);
  }

  /**
   * Throws unless {@code s3://bucket/prefix} lies under one of the allowed paths (compared
   * as whole path segments: {@code s3://b/ab} is not under {@code s3://b/a}).
   */
  static void validate(List<String> allowed, String bucket, String prefix)
  {
    String target = "s3://" + bucket + "/" + strip(prefix) + "/";
    if (strip(prefix).isEmpty()) {
      target = "s3://" + bucket + "/";
    }
    if (strip(prefix).contains("..") || strip(prefix).contains("//")) {
      throw new IllegalArgumentException("s3native export: the path [" + target + "] must not contain '..' or '//'");
    }
    for (String a : allowed) {
      if (a == null || !a.startsWith("s3://")) {
        throw new IllegalArgumentException("s3native export: the allowed export path [" + a + "] in " + ALLOWED + " is not an s3:// URI");
      }
      String rest = strip(a.substring("s3://".length()));
      if (rest.isEmpty()) {
        continue;
      }
      if (target.startsWith("s3://" + rest + "/")) {
        return;
      }
    }
    throw new IllegalArgumentException("s3native export: none of the allowed export paths " + allowed
        + " matches the path [" + target + "]; the paths are set by the property " + ALLOWED);
  }

  @Override
  public StorageConnector createStorageConnector(File taskTempDir)
  {
    if (exportConfig == null || exportConfig.allowedExportPaths == null) {
      throw new IllegalArgumentException("s3native export: the runtime property " + ALLOWED
          + " must be set for exports to [" + getBasePath() + "]");
    }
    validate(exportConfig.allowedExportPaths, bucket, prefix);
    S3NativeStorageConnectorProvider connector = new S3NativeStorageConnectorProvider(
        bucket, prefix, exportConfig.tempLocalDir, exportConfig.chunkSize, exportConfig.maxRetry);
    connector.clientConfig = clientConfig;
    connector.extensionConfig = extensionConfig;
    connector.emitter = emitter;
    return connector.createStorageConnector(taskTempDir);
  }
}
