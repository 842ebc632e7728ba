package io.s3native.druid;

import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.druid.java.util.common.HumanReadableBytes;

import java.util.Map;

/**
 * The extension's own runtime properties, {@code druid.s3native.*}: process-wide settings of
 * the native writer that every task of this JVM shares (a Peon is a JVM of its own, an
 * Indexer's tasks share one).
 *
 * <ul>
 * <li>{@code memoryBudget}: bytes of part buffers in the whole process ({@code fs.s3a.native.memory.budget};
 *     default: s3native's, from the memory limit). Writers block (FIFO) while it is spent.</li>
 * <li>{@code partsInFlight}: parts one writer may have uploading at once ({@code fs.s3a.native.parts.in.flight};
 *     default: the budget's share of the connections).</li>
 * <li>{@code targetThroughput}: the process's upload target in Gbps ({@code fs.s3a.native.target.throughput}).</li>
 * </ul>
 * The first writer of the process fixes the budget and the runtime for the life of the process.
 */
public class S3NativeDruidConfig
{
  public static final String PREFIX = "druid.s3native";

  @JsonProperty
  private HumanReadableBytes memoryBudget;

  @JsonProperty
  private Integer partsInFlight;

  @JsonProperty
  private String targetThroughput;

  public HumanReadableBytes getMemoryBudget()
  {
    return memoryBudget;
  }

  public Integer getPartsInFlight()
  {
    return partsInFlight;
  }

  /** Put the s3native settings these properties give into {@code settings}. */
  public void addTo(Map<String, String> settings)
  {
    if (memoryBudget != null) {
      settings.put("fs.s3a.native.memory.budget", Long.toString(memoryBudget.getBytes()));
    }
    if (partsInFlight != null) {
      settings.put("fs.s3a.native.parts.in.flight", Integer.toString(partsInFlight));
    }
    if (targetThroughput != null && !targetThroughput.isBlank()) {
      settings.put("fs.s3a.native.target.throughput", targetThroughput.trim());
    }
  }

  @Override
  public String toString()
  {
    return "S3NativeDruidConfig{memoryBudget=" + memoryBudget + ", partsInFlight=" + partsInFlight
           + ", targetThroughput=" + targetThroughput + "}";
  }
}
