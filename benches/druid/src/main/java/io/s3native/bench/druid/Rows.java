package io.s3native.bench.druid;

import org.apache.druid.segment.column.ColumnType;
import org.apache.druid.segment.column.RowSignature;

import java.util.Map;

/** The rows of the workload (the same in both lines): a table of a key, a time, a dimension of 100 values, an id and two metrics. */
final class Rows {
    private static final String[] COUNTRIES = new String[100];

    static {
        for (int i = 0; i < COUNTRIES.length; i++) {
            COUNTRIES[i] = "country-" + Integer.toString(i * 7919, 36);
        }
    }

    private Rows() {
    }

    static RowSignature signature() {
        return RowSignature.builder()
                .add("__time", ColumnType.LONG)
                .add("key", ColumnType.LONG)
                .add("country", ColumnType.STRING)
                .add("session", ColumnType.STRING)
                .add("bytes", ColumnType.LONG)
                .add("ratio", ColumnType.DOUBLE)
                .build();
    }

    static Map<String, Object> row(long i) {
        long h = i * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return Map.of(
                "__time", 1_700_000_000_000L + i * 10,
                "key", i,
                "country", COUNTRIES[(int) Math.floorMod(h, 100L)],
                "session", Long.toHexString(h),
                "bytes", Math.floorMod(h >>> 7, 100_000L),
                "ratio", (h >>> 11) / (double) (1L << 53));
    }
}
