package io.s3native.bench.druid;

import com.amazonaws.ClientConfiguration;
import com.amazonaws.ClientConfigurationFactory;
import com.amazonaws.Protocol;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder.EndpointConfiguration;
import com.amazonaws.handlers.HandlerBeforeAttemptContext;
import com.amazonaws.handlers.RequestHandler2;
import com.amazonaws.services.s3.AmazonS3Client;
import com.amazonaws.services.s3.AmazonS3ClientBuilder;
import org.apache.druid.common.config.NullHandling;
import org.apache.druid.data.input.MapBasedRow;
import org.apache.druid.data.input.Row;
import org.apache.druid.frame.Frame;
import org.apache.druid.frame.FrameType;
import org.apache.druid.frame.allocation.ArenaMemoryAllocatorFactory;
import org.apache.druid.frame.channel.ByteTracker;
import org.apache.druid.frame.channel.FrameWithPartition;
import org.apache.druid.frame.channel.WritableFrameFileChannel;
import org.apache.druid.frame.file.FrameFileWriter;
import org.apache.druid.frame.write.FrameWriter;
import org.apache.druid.frame.write.FrameWriterFactory;
import org.apache.druid.frame.write.FrameWriters;
import org.apache.druid.java.util.common.HumanReadableBytes;
import org.apache.druid.segment.ColumnSelectorFactory;
import org.apache.druid.segment.RowAdapters;
import org.apache.druid.segment.RowBasedColumnSelectorFactory;
import org.apache.druid.segment.column.RowSignature;
import org.apache.druid.storage.StorageConnector;
import org.apache.druid.storage.s3.NoopServerSideEncryption;
import org.apache.druid.storage.s3.S3StorageConfig;
import org.apache.druid.storage.s3.ServerSideEncryptingAmazonS3;
import org.apache.druid.storage.s3.output.S3OutputConfig;
import org.apache.druid.storage.s3.output.S3StorageConnector;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Druid 29.0.0 with its own S3 connector (druid-s3-extensions 29.0.0): S3StorageConnector over
 * S3OutputConfig (the bucket, prefix, its local tempDir, chunkSize, maxRetry) and a
 * ServerSideEncryptingAmazonS3 built as its S3StorageDruidModule builds it from druid.s3.*
 * (ClientConfigurationFactory's configuration with the protocol, path-style access, the
 * endpoint and signing region, static keys, no server-side encryption); frames written by
 * Druid 29's FrameFileWriter. Each writer stages 5 MiB chunks in tempDir and uploads them one
 * after another (RetryableS3OutputStream): the seed's "before".
 */
final class Line {
    static final String NAME = "druid-s3-extensions 29.0.0 (Druid 29.0.0)";
    static final RowSignature SIGNATURE = Rows.signature();
    /** Requests the AWS SDK sent (each attempt), by the SDK request's type. */
    static final Map<String, LongAdder> REQUESTS = new ConcurrentHashMap<>();

    private Line() {
    }

    static StorageConnector connector(Map<String, String> a, File tempDir) {
        // What a Druid 29 process's Guice wiring does at startup (NullValueHandlingConfig, defaults).
        NullHandling.initializeForTests();
        String endpoint = a.get("endpoint");
        ClientConfiguration configuration = new ClientConfigurationFactory().getConfig()
                .withProtocol(endpoint.startsWith("https:") ? Protocol.HTTPS : Protocol.HTTP);
        AmazonS3ClientBuilder builder = AmazonS3Client.builder()
                .withCredentials(new AWSStaticCredentialsProvider(new BasicAWSCredentials(a.get("access_key"), a.get("secret_key"))))
                .withClientConfiguration(configuration)
                .withChunkedEncodingDisabled(false) // druid.s3.disableChunkedEncoding's default
                .withPathStyleAccessEnabled(true)
                .withForceGlobalBucketAccessEnabled(false)
                .withRequestHandlers(new RequestHandler2() {
                    @Override
                    public void beforeAttempt(HandlerBeforeAttemptContext context) {
                        String type = context.getRequest().getOriginalRequest().getClass().getSimpleName();
                        REQUESTS.computeIfAbsent(type, k -> new LongAdder()).increment();
                    }
                });
        builder.setEndpointConfiguration(new EndpointConfiguration(endpoint, a.getOrDefault("region", "us-east-1")));
        ServerSideEncryptingAmazonS3 s3 = ServerSideEncryptingAmazonS3.builder()
                .setAmazonS3ClientBuilder(builder)
                .setS3StorageConfig(new S3StorageConfig(new NoopServerSideEncryption()))
                .build();
        S3OutputConfig config = new S3OutputConfig(a.get("bucket"), a.get("prefix"), tempDir,
                new HumanReadableBytes(a.getOrDefault("chunk", "5MiB")), Integer.parseInt(a.getOrDefault("retries", "10")));
        return new S3StorageConnector(config, s3);
    }

    /** Frames of at most {@code frameBytes} holding rows {@code first} .. {@code first + rows - 1}. */
    static List<Frame> frames(long first, int rows, int frameBytes) {
        FrameWriterFactory factory = FrameWriters.makeFrameWriterFactory(FrameType.COLUMNAR,
                new ArenaMemoryAllocatorFactory(frameBytes), SIGNATURE, Collections.emptyList());
        Row[] current = new Row[1];
        ColumnSelectorFactory selectors =
                RowBasedColumnSelectorFactory.create(RowAdapters.standardRow(), () -> current[0], SIGNATURE, false, false);
        List<Frame> out = new ArrayList<>();
        long i = first;
        while (i < first + rows) {
            try (FrameWriter writer = factory.newFrameWriter(selectors)) {
                int n = 0;
                for (; i < first + rows; i++, n++) {
                    current[0] = new MapBasedRow(0L, Rows.row(i));
                    if (!writer.addSelection()) {
                        break;
                    }
                }
                if (n == 0) {
                    throw new IllegalStateException("row " + i + " does not fit a frame of " + frameBytes + " bytes");
                }
                out.add(Frame.wrap(writer.toByteArray()));
            }
        }
        return out;
    }

    /** A frame file of {@code frames} onto {@code out}, as MSQ's durable-storage channels write it; closes it. */
    static void writeFrameFile(OutputStream out, List<Frame> frames) throws IOException {
        try (WritableFrameFileChannel ch = new WritableFrameFileChannel(
                FrameFileWriter.open(Channels.newChannel(out), null, ByteTracker.unboundedTracker()))) {
            for (Frame f : frames) {
                ch.write(new FrameWithPartition(f, FrameWithPartition.NO_PARTITION));
            }
        }
    }

    /** The SDK's requests so far, by kind in s3native's names where one exists. */
    static Map<String, Long> requests() {
        Map<String, Long> out = new TreeMap<>();
        REQUESTS.forEach((type, n) -> out.merge("druid29." + kind(type), n.sum(), Long::sum));
        return out;
    }

    private static String kind(String sdkType) {
        switch (sdkType) {
            case "InitiateMultipartUploadRequest":
                return "create_multipart_upload";
            case "UploadPartRequest":
                return "upload_part";
            case "CompleteMultipartUploadRequest":
                return "complete_multipart_upload";
            case "AbortMultipartUploadRequest":
                return "abort_multipart_upload";
            case "PutObjectRequest":
                return "put_object";
            case "GetObjectMetadataRequest":
                return "head_object";
            default:
                return sdkType;
        }
    }

    /** No native buffers: Druid 29 buffers its chunks on local disk (the temp directory's peak). */
    static long bufferPeakBytes() {
        return 0;
    }
}
