package io.s3native.druid;

import com.fasterxml.jackson.annotation.JsonProperty;
import org.apache.druid.metadata.PasswordProvider;

import java.util.Locale;
import java.util.Map;

/**
 * Druid's own S3 client properties, {@code druid.s3.*}, as the S3 extension reads them
 * (druid-aws-common's AWSClientConfig, AWSEndpointConfig and AWSCredentialsConfig), and their
 * mapping onto s3native's settings ({@code fs.s3a.*} keys):
 *
 * <table>
 * <caption>druid.s3.* to s3native</caption>
 * <tr><th>Druid</th><th>s3native</th></tr>
 * <tr><td>{@code druid.s3.endpoint.url} (a host, or a URL; without a scheme {@code druid.s3.protocol} is used)</td><td>{@code fs.s3a.endpoint}</td></tr>
 * <tr><td>{@code druid.s3.endpoint.signingRegion}</td><td>{@code fs.s3a.endpoint.region}</td></tr>
 * <tr><td>{@code druid.s3.enablePathStyleAccess} (false)</td><td>{@code fs.s3a.path.style.access}</td></tr>
 * <tr><td>{@code druid.s3.protocol} ({@code https})</td><td>{@code fs.s3a.connection.ssl.enabled}</td></tr>
 * <tr><td>{@code druid.s3.accessKey}, {@code druid.s3.secretKey}, {@code druid.s3.sessionToken} (PasswordProviders)</td>
 *     <td>{@code fs.s3a.access.key}, {@code fs.s3a.secret.key}, {@code fs.s3a.session.token}</td></tr>
 * </table>
 *
 * <p>Without keys, s3native's default chain applies, as Druid falls back to the AWS SDK's
 * default chain: {@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}, web identity,
 * container credentials, instance metadata. Secrets are read from their PasswordProvider only
 * when the settings are built and never logged; {@link #toString()} shows none.
 */
public class S3NativeClientConfig
{
  /** {@code druid.s3.endpoint.*}. */
  public static class Endpoint
  {
    @JsonProperty
    private String url;

    @JsonProperty
    private String signingRegion;

    public String getUrl()
    {
      return url;
    }

    public String getSigningRegion()
    {
      return signingRegion;
    }
  }

  @JsonProperty
  private PasswordProvider accessKey;

  @JsonProperty
  private PasswordProvider secretKey;

  @JsonProperty
  private PasswordProvider sessionToken;

  @JsonProperty
  private Endpoint endpoint = new Endpoint();

  @JsonProperty
  private boolean enablePathStyleAccess = false;

  @JsonProperty
  private String protocol = "https";

  public Endpoint getEndpoint()
  {
    return endpoint;
  }

  public boolean isEnablePathStyleAccess()
  {
    return enablePathStyleAccess;
  }

  public String getProtocol()
  {
    return protocol;
  }

  /** Whether static keys are configured (else the default chain is used). */
  public boolean hasKeys()
  {
    return password(accessKey) != null && password(secretKey) != null;
  }

  private static String password(PasswordProvider p)
  {
    if (p == null) {
      return null;
    }
    String v = p.getPassword();
    return v == null || v.isEmpty() ? null : v;
  }

  /** Put the s3native settings these properties give into {@code settings}. */
  public void addTo(Map<String, String> settings)
  {
    String scheme = protocol == null ? "https" : protocol.trim().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("druid.s3.protocol must be http or https, not [" + protocol + "]");
    }
    settings.put("fs.s3a.connection.ssl.enabled", Boolean.toString(scheme.equals("https")));
    settings.put("fs.s3a.path.style.access", Boolean.toString(enablePathStyleAccess));
    Endpoint e = endpoint == null ? new Endpoint() : endpoint;
    if (e.url != null && !e.url.isBlank()) {
      String url = e.url.trim();
      settings.put("fs.s3a.endpoint", url.contains("://") ? url : scheme + "://" + url);
    }
    if (e.signingRegion != null && !e.signingRegion.isBlank()) {
      settings.put("fs.s3a.endpoint.region", e.signingRegion.trim());
    }
    String access = password(accessKey);
    String secret = password(secretKey);
    if (access != null && secret != null) {
      settings.put("fs.s3a.access.key", access);
      settings.put("fs.s3a.secret.key", secret);
      String token = password(sessionToken);
      if (token != null) {
        settings.put("fs.s3a.session.token", token);
      }
    } else if (access != null || secret != null) {
      throw new IllegalArgumentException(
          "druid.s3.accessKey and druid.s3.secretKey must be set together (one of them is empty)"
      );
    }
  }

  @Override
  public String toString()
  {
    return "S3NativeClientConfig{endpoint.url=" + (endpoint == null ? null : endpoint.url)
           + ", endpoint.signingRegion=" + (endpoint == null ? null : endpoint.signingRegion)
           + ", enablePathStyleAccess=" + enablePathStyleAccess + ", protocol=" + protocol
           + ", credentials=" + (hasKeys() ? "static keys" : "default chain") + "}";
  }
}
