package io.s3native.hadoop;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;

import io.s3native.S3NativeOutputStream.MagicLayout;
import io.s3native.S3NativeOutputStream.PendingEtags;

/**
 * What the Hadoop line on the classpath expects, found by reflection on hadoop-aws's own
 * classes (never from a version string): how magic paths are marked and how the
 * {@code .pending} file's etags are encoded, and which create semantics it has.
 */
final class HadoopLine {
    static final String COMMIT_CONSTANTS = "org.apache.hadoop.fs.s3a.commit.CommitConstants";
    static final String SINGLE_PENDING_COMMIT = "org.apache.hadoop.fs.s3a.commit.files.SinglePendingCommit";

    private HadoopLine() {
    }

    /** {@code __magic_job-} when CommitConstants has MAGIC_PATH_PREFIX (3.4+), else {@code __magic} (3.3). */
    static MagicLayout magicLayout(ClassLoader loader) {
        try {
            Class.forName(COMMIT_CONSTANTS, false, loader).getField("MAGIC_PATH_PREFIX");
            return MagicLayout.MAGIC_JOB;
        } catch (NoSuchFieldException e) {
            return MagicLayout.MAGIC;
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("hadoop-aws is not on the classpath", e);
        }
    }

    /**
     * The etags form SinglePendingCommit reads: a list of objects when the element type of
     * {@code getEtags()} is not String (3.5); strings otherwise, unquoted when
     * {@code bindCommitData} takes AWS SDK v1 part ETags (3.3), quoted with SDK v2 (3.4).
     */
    static PendingEtags pendingEtags(ClassLoader loader) {
        try {
            Class<?> spc = Class.forName(SINGLE_PENDING_COMMIT, false, loader);
            if (elementType(spc.getMethod("getEtags").getGenericReturnType()) != String.class) {
                return PendingEtags.OBJECTS;
            }
            for (Method m : spc.getMethods()) {
                if (m.getName().equals("bindCommitData") && m.getParameterCount() == 1) {
                    Type part = elementType(m.getGenericParameterTypes()[0]);
                    if (part instanceof Class && ((Class<?>) part).getName().startsWith("com.amazonaws.")) {
                        return PendingEtags.UNQUOTED;
                    }
                    return PendingEtags.QUOTED;
                }
            }
            throw new IllegalStateException(SINGLE_PENDING_COMMIT + " has no bindCommitData(List)");
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("cannot tell the .pending form of the hadoop-aws on the classpath", e);
        }
    }

    /**
     * True on Hadoop 3.3.4, whose createNonRecursive checks that the parent is a directory;
     * false where S3A creates files through its CreateFileBuilder (3.3.5+: 3.4.x, 3.5.0),
     * whose createNonRecursive does not probe the parent (checked with javap on 3.3.4, 3.4.1
     * and 3.5.0's S3AFileSystem).
     */
    static boolean createNonRecursiveProbesParent(ClassLoader loader) {
        try {
            Class.forName("org.apache.hadoop.fs.s3a.impl.CreateFileBuilder", false, loader);
            return false;
        } catch (ClassNotFoundException e) {
            return true;
        }
    }

    private static Type elementType(Type listType) {
        if (listType instanceof ParameterizedType) {
            Type[] args = ((ParameterizedType) listType).getActualTypeArguments();
            if (args.length == 1) {
                return args[0];
            }
        }
        throw new IllegalStateException("not a List<E>: " + listType);
    }
}
