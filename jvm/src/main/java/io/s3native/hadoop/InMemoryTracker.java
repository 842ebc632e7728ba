package io.s3native.hadoop;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.S3AFileSystem;
import org.apache.hadoop.fs.statistics.IOStatistics;

import io.s3native.UploadResult;

/**
 * S3A's in-memory magic commit tracker (Hadoop 3.4+,
 * {@code fs.s3a.committer.magic.track.commits.in.memory.enabled=true}) driven with a native
 * upload: S3A's own {@code MagicCommitIntegration.createTracker} gives the tracker for the
 * magic path (it names the final key and counts {@code committer_magic_files_created}); the
 * native writer uploads every part to that key without completing (deferred mode); close
 * hands the upload id and part ETags to the tracker's {@code aboutToComplete}, which keeps
 * the pending commit in S3A's static maps, where S3A's task commit finds it. No marker and
 * no {@code .pending} are written, as with stock S3A in this mode.
 */
final class InMemoryTracker {
    static final String CLASS = "org.apache.hadoop.fs.s3a.commit.magic.InMemoryMagicCommitTracker";
    private static final String COMPLETED_PART = "software.amazon.awssdk.services.s3.model.CompletedPart";

    private final Object tracker;
    private final String destKey;
    private final ClassLoader loader;

    private InMemoryTracker(Object tracker, String destKey, ClassLoader loader) {
        this.tracker = tracker;
        this.destKey = destKey;
        this.loader = loader;
    }

    /** True when the Hadoop line has the in-memory tracker (3.4+). */
    static boolean available(ClassLoader loader) {
        try {
            Class.forName(CLASS, false, loader);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /**
     * S3A's tracker for {@code path} (key {@code key}) of {@code fs}.
     *
     * @throws IOException when S3A did not give its in-memory tracker for the path, or its
     *         members cannot be reached on this line
     */
    static InMemoryTracker create(S3AFileSystem fs, Path path, String key) throws IOException {
        try {
            Object integration = field(fs, "committerIntegration");
            Object statsContext = field(fs, "statisticsContext");
            Object trackerStats = statsContext.getClass().getMethod("newOutputStreamStatistics").invoke(statsContext);
            Class<?> putTrackerStatistics = Class.forName("org.apache.hadoop.fs.s3a.statistics.PutTrackerStatistics", false,
                    S3AFileSystem.class.getClassLoader());
            Method create = integration.getClass().getMethod("createTracker", Path.class, String.class, putTrackerStatistics);
            Object tracker = create.invoke(integration, path, key, trackerStats);
            if (!tracker.getClass().getName().equals(CLASS)) {
                throw new IOException("s3native: S3A gave " + tracker.getClass().getName() + " for " + path
                        + ", not its in-memory magic tracker");
            }
            String destKey = (String) tracker.getClass().getMethod("getDestKey").invoke(tracker);
            return new InMemoryTracker(tracker, destKey, S3AFileSystem.class.getClassLoader());
        } catch (InvocationTargetException e) {
            throw NativeS3AFileSystem.Reflect.rethrow(e);
        } catch (ReflectiveOperationException e) {
            throw new IOException("s3native: cannot reach S3A's in-memory magic tracker on this Hadoop line", e);
        }
    }

    /** The final key the upload goes to (S3A's, for the magic path). */
    String destKey() {
        return destKey;
    }

    /**
     * Hand the deferred upload {@code result} to S3A's tracker (its {@code aboutToComplete}):
     * the upload id, each part's number and ETag (and checksum, when the upload has them),
     * the length in bytes and the stream's IOStatistics.
     */
    void aboutToComplete(UploadResult result, IOStatistics statistics) throws IOException {
        try {
            List<Object> parts = new ArrayList<>();
            Class<?> partClass = Class.forName(COMPLETED_PART, false, loader);
            Method builder = partClass.getMethod("builder");
            String algorithm = result.getChecksumAlgorithm();
            for (int i = 0; i < result.getEtags().size(); i++) {
                Object b = builder.invoke(null);
                Class<?> bc = builderInterface(b);
                bc.getMethod("partNumber", Integer.class).invoke(b, i + 1);
                bc.getMethod("eTag", String.class).invoke(b, result.getEtags().get(i));
                if (algorithm != null) {
                    bc.getMethod("checksum" + algorithm.toUpperCase(Locale.ROOT), String.class)
                            .invoke(b, result.getChecksums().get(i));
                }
                parts.add(bc.getMethod("build").invoke(b));
            }
            tracker.getClass().getMethod("aboutToComplete", String.class, List.class, long.class, IOStatistics.class)
                    .invoke(tracker, result.getUploadId(), parts, result.getLength(), statistics);
        } catch (InvocationTargetException e) {
            throw NativeS3AFileSystem.Reflect.rethrow(e);
        } catch (ReflectiveOperationException e) {
            throw new IOException("s3native: cannot hand the upload of " + destKey + " to S3A's in-memory magic tracker", e);
        }
    }

    /** The public builder interface of an SDK v2 builder (its implementation class is not public). */
    private static Class<?> builderInterface(Object builder) {
        for (Class<?> c : builder.getClass().getInterfaces()) {
            if (c.getSimpleName().equals("Builder")) {
                return c;
            }
        }
        return builder.getClass();
    }

    private static Object field(Object target, String name) throws ReflectiveOperationException {
        Field f = S3AFileSystem.class.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
    }
}
