package io.s3native.druid;

import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.jsontype.NamedType;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.google.inject.Binder;
import org.apache.druid.guice.JsonConfigProvider;
import org.apache.druid.initialization.DruidModule;

import java.util.List;

/**
 * The extension's Druid module (listed in {@code META-INF/services/org.apache.druid.initialization.DruidModule}):
 * registers the {@link S3NativeStorageConnectorProvider} as the {@code StorageConnectorProvider}
 * subtype {@code s3native}, so {@code druid.msq.intermediate.storage.type=s3native} picks it, and
 * binds Druid's S3 client properties ({@code druid.s3.*}: {@link S3NativeClientConfig}) and the
 * extension's own ({@code druid.s3native.*}: {@link S3NativeDruidConfig}) for injection into it.
 */
public class S3NativeStorageConnectorModule implements DruidModule
{
  @Override
  public List<? extends Module> getJacksonModules()
  {
    return List.of(
        new SimpleModule(getClass().getSimpleName())
            .registerSubtypes(new NamedType(S3NativeStorageConnectorProvider.class, S3NativeStorageConnectorProvider.TYPE))
            .registerSubtypes(new NamedType(S3NativeExportStorageProvider.class, S3NativeExportStorageProvider.TYPE))
    );
  }

  @Override
  public void configure(Binder binder)
  {
    JsonConfigProvider.bind(binder, "druid.s3", S3NativeClientConfig.class);
    JsonConfigProvider.bind(binder, S3NativeDruidConfig.PREFIX, S3NativeDruidConfig.class);
    JsonConfigProvider.bind(binder, S3NativeExportConfig.PREFIX, S3NativeExportConfig.class);
  }
}
