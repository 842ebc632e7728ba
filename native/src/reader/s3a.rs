//! A reader's statistics in S3A's names: the IOStatistics of S3A's input streams (names
//! from hadoop-common's `StreamStatisticNames`, the same in Hadoop 3.3.4, 3.4.x and 3.5.0),
//! and the native ones under `s3native.`, in the form of [`crate::s3a_stats`] (Hadoop's
//! `IOStatisticsSnapshot` JSON). The JVM layer publishes this as the stream's IOStatistics;
//! this is the one place the mapping lives. Durations in the native names are microseconds.
//!
//! | S3A name | from |
//! |---|---|
//! | `stream_read_bytes` | bytes handed to the caller |
//! | `stream_read_operations` | stream reads |
//! | `stream_read_fully_operations` | positioned reads |
//! | `stream_read_seek_operations` | stream reads away from where the last one ended |
//! | `stream_read_opened` | as the S3A stream of the settings counts it ([`StreamType`](crate::StreamType)): GETs of every kind (classic, prefetch), 1 a reader (analytics) |
//! | `action_http_get_request`, `.failures` | GETs of every kind, the failed ones (S3A's stream times each GET by this name) |
//! | `action_http_head_request` | HEADs S3A's stream sends itself (the analytics stream's, for a declared length without an ETag) |
//! | `stream_read_total_bytes` | bytes received in GET bodies |
//! | `stream_read_bytes_discarded_in_close` | bytes fetched but never read, vectored holes aside |
//! | `stream_read_prefetch_operations` | GETs fetched ahead (whole object, footer, read-ahead) |
//! | `stream_read_vectored_operations`, `_incoming_ranges`, `_combined_ranges` | vectored reads, their ranges, their GETs |
//! | `stream_read_vectored_read_bytes_discarded` | bytes of holes in coalesced vectored GETs |
//! | `stream_read_version_mismatches` | GETs answered 412 to `If-Match` |
//! | `stream_read_exceptions` | failed GETs |
//! | `stream_read_unbuffered` | unbuffer calls |
//! | `stream_read_active_memory_in_use` (gauge) | bytes held in buffers now |
//! | `action_file_opened` (duration: count, `.min`, `.max`, `.mean` in ms) | readers opened, the time open waited on S3 (its HEAD; none: 0) |

use crate::reader::ReadStatistics;
use crate::s3a_stats::{IoStatistics, MeanStatistic};

/// Hadoop's `StoreStatisticNames.ACTION_FILE_OPENED`.
const FILE_OPENED: &str = "action_file_opened";

fn n(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// `s` in S3A's names; see the module docs.
pub fn read_iostatistics(s: &ReadStatistics) -> IoStatistics {
    let mut io = IoStatistics::default();
    let gets = s.gets_whole + s.gets_footer + s.gets_read_ahead + s.gets_random + s.gets_pread + s.gets_vectored;
    let counters = [
        ("stream_read_bytes", s.bytes_read),
        ("stream_read_operations", s.read_operations),
        ("stream_read_fully_operations", s.pread_operations),
        ("stream_read_seek_operations", s.seeks),
        ("stream_read_opened", s.stream_opened),
        ("action_http_get_request", gets),
        ("action_http_get_request.failures", s.errors),
        ("action_http_head_request", s.stream_head_requests),
        ("stream_read_total_bytes", s.bytes_fetched),
        ("stream_read_bytes_discarded_in_close", s.bytes_discarded - s.vectored_bytes_discarded.min(s.bytes_discarded)),
        ("stream_read_prefetch_operations", s.gets_whole + s.gets_footer + s.gets_read_ahead),
        ("stream_read_vectored_operations", s.vectored_operations),
        ("stream_read_vectored_incoming_ranges", s.vectored_ranges),
        ("stream_read_vectored_combined_ranges", s.gets_vectored),
        ("stream_read_vectored_read_bytes_discarded", s.vectored_bytes_discarded),
        ("stream_read_version_mismatches", s.version_mismatches),
        ("stream_read_exceptions", s.errors),
        ("stream_read_unbuffered", s.unbuffered),
        ("s3native.object_head_requests", s.head_requests),
        ("s3native.gets_whole", s.gets_whole),
        ("s3native.gets_footer", s.gets_footer),
        ("s3native.gets_read_ahead", s.gets_read_ahead),
        ("s3native.gets_random", s.gets_random),
        ("s3native.gets_pread", s.gets_pread),
        ("s3native.gets_vectored", s.gets_vectored),
        ("s3native.prefetch_hits", s.prefetch_hits),
        ("s3native.prefetch_misses", s.prefetch_misses),
        ("s3native.read_waits", s.waits),
        ("s3native.read_wait_us", s.wait_us),
        ("s3native.read_budget_waits", s.budget_waits),
        ("s3native.read_budget_wait_us", s.budget_wait_us),
        ("s3native.read_ahead_skipped", s.read_ahead_skipped),
        ("s3native.read_ahead_dropped", s.read_ahead_dropped),
    ];
    for (name, v) in counters {
        io.counters.insert(name.to_string(), n(v));
    }
    io.gauges.insert("stream_read_active_memory_in_use".to_string(), n(s.buffered_bytes));
    // S3A's stream times its open as a duration (Hadoop's IOStatistics duration keys, in
    // milliseconds): one sample per reader; summed figures give the mean.
    io.counters.insert(FILE_OPENED.to_string(), n(s.opens));
    if s.opens > 0 {
        let ms = n(s.open_us / 1000);
        io.minimums.insert(format!("{FILE_OPENED}.min"), ms / n(s.opens));
        io.maximums.insert(format!("{FILE_OPENED}.max"), ms / n(s.opens));
        io.meanstatistics.insert(format!("{FILE_OPENED}.mean"), MeanStatistic { samples: n(s.opens), sum: ms });
    }
    io
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3a_names_carry_the_reader_figures() {
        let s = ReadStatistics {
            bytes_read: 10,
            gets_whole: 1,
            gets_read_ahead: 2,
            gets_vectored: 3,
            bytes_discarded: 7,
            vectored_bytes_discarded: 5,
            buffered_bytes: 4,
            stream_opened: 1,
            head_requests: 1,
            stream_head_requests: 1,
            errors: 2,
            ..Default::default()
        };
        let io = read_iostatistics(&s);
        assert_eq!(io.counters["stream_read_bytes"], 10);
        assert_eq!(io.counters["stream_read_opened"], 1, "as the settings' stream counts it");
        assert_eq!((io.counters["action_http_get_request"], io.counters["action_http_get_request.failures"]), (6, 2));
        assert_eq!(io.counters["action_http_head_request"], 1);
        assert_eq!(io.counters["stream_read_prefetch_operations"], 3);
        assert_eq!(io.counters["stream_read_bytes_discarded_in_close"], 2);
        assert_eq!(io.counters["stream_read_vectored_read_bytes_discarded"], 5);
        assert_eq!(io.gauges["stream_read_active_memory_in_use"], 4);
    }
}
