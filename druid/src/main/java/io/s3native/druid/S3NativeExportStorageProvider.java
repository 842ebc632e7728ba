package io.s3native.druid;

import com.fasterxml.jackson.annotation.JacksonInject;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonTypeName;
import org.apache.druid.error.DruidException;
import org.apache.druid.error.InvalidInput;
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
 *
 * <p>Errors are Druid's {@link DruidException}s with the personas and categories of Druid's
 * {@code s3} provider: a destination outside the allowed paths, a blank bucket or a missing
 * prefix is the user's (INVALID_INPUT); an unset {@code allowedExportPaths} property, or an
 * allowed path that is not an {@code s3://} URI, is the operator's (NOT_FOUND, INVALID_INPUT).
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
      throw InvalidInput.exception("s3native export: bucket must be set");
    }
    if (prefix == null) {
      throw InvalidInput.exception("s3native export: prefix must be set");
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
      throw InvalidInput.exception("s3native export: the path [%s] must not contain '..' or '//'", target);
    }
    for (String a : allowed) {
      if (a == null || !a.startsWith("s3://")) {
        throw DruidException.forPersona(DruidException.Persona.OPERATOR)
                            .ofCategory(DruidException.Category.INVALID_INPUT)
                            .build("s3native export: the allowed export path [%s] in %s is not an s3:// URI", a, ALLOWED);
      }
      String rest = strip(a.substring("s3://".length()));
      if (rest.isEmpty()) {
        continue;
      }
      if (target.startsWith("s3://" + rest + "/")) {
        return;
      }
    }
    throw InvalidInput.exception(
        "s3native export: none of the allowed export paths %s matches the path [%s]; the paths are set by the property %s",
        allowed, target, ALLOWED);
  }

  @Override
  public StorageConnector createStorageConnector(File taskTempDir)
  {
    if (exportConfig == null || exportConfig.allowedExportPaths == null) {
      throw DruidException.forPersona(DruidException.Persona.OPERATOR)
                          .ofCategory(DruidException.Category.NOT_FOUND)
                          .build("s3native export: the runtime property %s must be set for exports to [%s]", ALLOWED, getBasePath());
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
