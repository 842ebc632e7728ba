package io.s3native.spark;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The one place that calls Spark's internal Arrow API ({@code ArrowUtils}, {@code ArrowWriter}),
 * whose signatures differ between Spark lines. One jar serves every line of {@link #LINES}:
 * <ul>
 * <li>{@code ArrowWriter.create(VectorSchemaRoot)}, {@code write(InternalRow)}, {@code finish()},
 * {@code reset()} and {@code ArrowUtils.rootAllocator()} (a {@code RootAllocator}) are the same
 * on 3.5, 4.0, 4.1, 4.2 and 4.3: called directly.</li>
 * <li>{@code ArrowUtils.toArrowSchema} (Scala default arguments: no Java overloads) is
 * {@code (StructType, String timeZoneId, boolean errorOnDuplicatedFieldNames, boolean largeVarTypes)}
 * on 3.5, 4.0, 4.1 and 4.2; 4.2 adds {@code (StructType, String, boolean largeVarTypes)} (no
 * duplicate-name check); 4.3 keeps that 3-argument form and has the 4-argument one only with a
 * fifth boolean appended (default {@code toArrowSchema$default$5()}, false). The form taking
 * {@code (schema, timeZoneId, errorOnDuplicatedFieldNames, largeVarTypes, ...)} is found by
 * reflection once, at class initialisation, and called with {@code true, false} and any further
 * arguments at their Scala defaults: what Scala code calling {@code toArrowSchema(s, tz, true, false)}
 * does on that line.</li>
 * </ul>
 * Everything else in this package uses Arrow's and Spark's public API, whose descriptors are the
 * same on every line (the class is compiled against Spark 4.3, Scala 2.13 and Arrow 19.0.0; 3.5
 * runs it on Scala 2.12 and Arrow 12.0.1).
 */
final class SparkArrow {
    private SparkArrow() {
    }

    /** The Spark lines (major.minor) this class is built for and tested on ({@code make test-spark}). */
    static final List<String> LINES = List.of("3.5", "4.0", "4.1", "4.2", "4.3");

    /**
     * {@code ArrowUtils.toArrowSchema} bound to {@code (StructType, String) -> Schema} with
     * errorOnDuplicatedFieldNames true, largeVarTypes false and any further arguments at their
     * Scala defaults; null when this Spark has no such form ({@link #UNRESOLVED} says why).
     */
    private static final MethodHandle TO_ARROW_SCHEMA;
    private static final String UNRESOLVED;

    static {
        MethodHandle h = null;
        String why = null;
        try {
            h = resolveToArrowSchema();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            why = e.toString();
        }
        TO_ARROW_SCHEMA = h;
        UNRESOLVED = why;
    }

    private static MethodHandle resolveToArrowSchema() throws ReflectiveOperationException {
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        Method best = null;
        List<String> seen = new ArrayList<>();
        for (Method m : ArrowUtils.class.getMethods()) {
            if (!m.getName().equals("toArrowSchema") || !Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Class<?>[] p = m.getParameterTypes();
            seen.add(MethodType.methodType(m.getReturnType(), p).toString());
            if (p.length >= 4 && p[0] == StructType.class && p[1] == String.class && p[2] == boolean.class
                    && p[3] == boolean.class && m.getReturnType() == Schema.class
                    && (best == null || p.length < best.getParameterCount())) {
                best = m;
            }
        }
        if (best == null) {
            throw new NoSuchMethodException("ArrowUtils.toArrowSchema(StructType, String, boolean errorOnDuplicatedFieldNames, "
                    + "boolean largeVarTypes, ...): this Spark has " + seen);
        }
        MethodHandle h = lookup.unreflect(best);
        Object[] fixed = new Object[best.getParameterCount() - 2];
        fixed[0] = Boolean.TRUE; // errorOnDuplicatedFieldNames, as Spark's own Arrow paths
        fixed[1] = Boolean.FALSE; // largeVarTypes: Utf8 and Binary, as Spark's default
        for (int i = 4; i < best.getParameterCount(); i++) {
            // Scala's default argument of parameter i (1-based: i + 1), a static forwarder on ArrowUtils.
            Method d = ArrowUtils.class.getMethod("toArrowSchema$default$" + (i + 1));
            fixed[i - 2] = d.invoke(null);
        }
        return MethodHandles.insertArguments(h, 2, fixed)
                .asType(MethodType.methodType(Schema.class, StructType.class, String.class));
    }

    /** Spark's major.minor line of {@code sparkVersion} ("4.0.2" -> "4.0"), or the version itself. */
    private static String line(String sparkVersion) {
        for (String l : LINES) {
            if (sparkVersion.equals(l) || sparkVersion.startsWith(l + ".")) {
                return l;
            }
        }
        return null;
    }

    /** Throws, naming the line, unless {@code sparkVersion} is one of {@link #LINES} and its Arrow API resolved. */
    static void checkLine(String sparkVersion) {
        String alternative = "; write with format(\"parquet\") through NativeS3AFileSystem instead";
        if (line(sparkVersion) == null) {
            throw new UnsupportedOperationException("s3native.parquet is built for Spark " + String.join(", ", LINES)
                    + ", not Spark " + sparkVersion + " (Spark's internal Arrow API differs between lines)" + alternative);
        }
        if (TO_ARROW_SCHEMA == null) {
            throw new UnsupportedOperationException("s3native.parquet cannot use Spark " + sparkVersion
                    + "'s internal Arrow API: " + UNRESOLVED + alternative);
        }
    }

    /** The Arrow schema Spark itself uses for {@code schema}: timestamps as microseconds in {@code timeZoneId}, NTZ without zone. */
    static Schema toArrowSchema(StructType schema, String timeZoneId) {
        if (TO_ARROW_SCHEMA == null) {
            throw new UnsupportedOperationException("s3native.parquet cannot use this Spark's internal Arrow API: " + UNRESOLVED);
        }
        try {
            return (Schema) TO_ARROW_SCHEMA.invokeExact(schema, timeZoneId);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("ArrowUtils.toArrowSchema", e);
        }
    }

    /** Spark's row-to-Arrow writer over {@code root} (whose schema came from {@link #toArrowSchema}). */
    static ArrowWriter writer(VectorSchemaRoot root) {
        return ArrowWriter.create(root);
    }

    /** A child of Spark's own Arrow root allocator, for one task's files. */
    static BufferAllocator allocator(String name) {
        return ArrowUtils.rootAllocator().newChildAllocator(name, 0, Long.MAX_VALUE);
    }
}
