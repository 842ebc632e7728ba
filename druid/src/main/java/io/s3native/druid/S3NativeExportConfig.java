package io.s3native.druid;

import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.druid.java.util.common.HumanReadableBytes;

import java.io.File;
import java.util.List;

/**
 * {@code druid.export.storage.s3native.*}: the export destination's runtime properties, as
 * Druid's {@code druid.export.storage.s3.*}: {@code allowedExportPaths} (required: the
 * {@code s3://bucket/prefix} URIs under which exports may write), {@code chunkSize},
 * {@code maxRetry}; {@code tempLocalDir} is accepted and unused (nothing goes to local disk).
 */
public class S3NativeExportConfig
{
  public static final String PREFIX = "druid.export.storage.s3native";

  @JsonProperty
  File tempLocalDir;

  @JsonProperty
  List<String> allowedExportPaths;

  @JsonProperty
  HumanReadableBytes chunkSize;

  @JsonProperty
  Integer maxRetry;

  public List<String> getAllowedExportPaths()
  {
    return allowedExportPaths;
  }
}
