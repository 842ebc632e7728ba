//! A writer's statistics in S3A's names: the IOStatistics of S3A's block output stream
//! (`S3ABlockOutputStream`; names from hadoop-aws `StreamStatisticNames` and
//! `StoreStatisticNames`), as Hadoop 3.3.4, 3.4.1 and 3.5.0 report them for one stream, and
//! the native ones under `s3native.`. The one place this mapping lives: the JVM layer publishes
//! it as the stream's IOStatistics, and a magic file's `.pending` carries it, so job commit
//! puts it in `_SUCCESS` as S3A's magic committer does.
//!
//! The form is Hadoop's `IOStatisticsSnapshot` JSON (reference/s3a-magic-protocol.md):
//! `counters`, `gauges`, `minimums`, `maximums` map names to numbers, `meanstatistics` to
//! `{"samples": n, "sum": n}`. Durations in S3A's names are milliseconds; the native ones are
//! microseconds (`_us`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::stats::{DurationSummary, Statistics};

/// Hadoop's `MeanStatistic`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeanStatistic {
    pub samples: i64,
    pub sum: i64,
}

/// Hadoop's `IOStatisticsSnapshot`, in its JSON field names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoStatistics {
    pub counters: BTreeMap<String, i64>,
    pub gauges: BTreeMap<String, i64>,
    pub minimums: BTreeMap<String, i64>,
    pub maximums: BTreeMap<String, i64>,
    pub meanstatistics: BTreeMap<String, MeanStatistic>,
}

/// What the Hadoop stream knows beyond the writer: a magic file, `hflush`/`hsync` calls,
/// whether it was aborted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamFacts {
    pub magic: bool,
    pub hflush: u64,
    pub hsync: u64,
    pub aborted: bool,
}

/// The duration statistics of S3A's block output stream (each with `.failures`, `.min`,
/// `.max`, `.mean` forms).
pub const STREAM_DURATIONS: [&str; 8] = [
    "action_executor_acquired",
    "op_abort",
    "object_multipart_aborted",
    "multipart_upload_completed",
    "committer_magic_marker_put",
    "multipart_upload_part_put",
    "object_multipart_initiated",
    "object_put_request",
];

fn n(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// `stats` of one stream in S3A's names; see the module docs.
pub fn stream_iostatistics(stats: &Statistics, facts: StreamFacts) -> IoStatistics {
    let mut io = IoStatistics::default();
    for d in STREAM_DURATIONS {
        io.counters.insert(d.into(), 0);
        io.counters.insert(format!("{d}.failures"), 0);
        io.minimums.insert(format!("{d}.min"), -1);
        io.minimums.insert(format!("{d}.failures.min"), -1);
        io.maximums.insert(format!("{d}.max"), -1);
        io.maximums.insert(format!("{d}.failures.max"), -1);
        io.meanstatistics.insert(format!("{d}.mean"), MeanStatistic::default());
        io.meanstatistics.insert(format!("{d}.failures.mean"), MeanStatistic::default());
    }
    let q = &stats.part_queue_wait;
    let u = &stats.part_upload_time;
    let r = &stats.requests;
    let total_ms = |d: &DurationSummary| n(d.count.saturating_mul(d.mean_us) / 1000);
    let mut c = |name: &str, v: i64| {
        io.counters.insert(name.into(), v);
    };
    c("stream_write_bytes", n(stats.bytes_written));
    c("stream_write_total_data", n(stats.bytes_written));
    c("stream_write_block_uploads", n(stats.parts_uploaded + stats.single_puts));
    c("stream_write_exceptions", 0);
    c("stream_write_exceptions_completing_upload", 0);
    c("stream_write_queue_duration", total_ms(q));
    c("stream_write_total_time", total_ms(u));
    c("op_hflush", n(facts.hflush));
    c("op_hsync", n(facts.hsync));
    c("op_abort", i64::from(facts.aborted));
    c("object_multipart_initiated", n(r.create_multipart_upload));
    c("multipart_upload_part_put", n(r.upload_part));
    c("multipart_upload_completed", n(r.complete_multipart_upload));
    c("object_multipart_aborted", n(r.abort_multipart_upload));
    // A magic file's PUTs are its marker and its `.pending`: S3A's tracker counts each as
    // committer_magic_marker_put in the stream's statistics and sends them through the
    // filesystem, so its stream's object_put_request stays 0 (the filesystem's own counts
    // them; NativeS3AFileSystem adds them there). A plain file's PUT is the stream's own.
    let (puts, magic_puts) = if facts.magic { (0, r.put_object) } else { (r.put_object, 0) };
    c("object_put_request", n(puts));
    c("committer_magic_marker_put", n(magic_puts));
    // 3.5.0: conditional create (If-None-Match), which the native writer does not send.
    c("conditional_create", 0);
    c("conditional_create_failed", 0);
    // Every part waited for an upload slot: S3A's action_executor_acquired, in ms.
    c("action_executor_acquired", n(q.count));
    c("s3native.retries", n(stats.retries));
    c("s3native.budget_blocked_us", n(stats.budget_blocked_us));
    c("s3native.in_flight_blocked_us", n(stats.in_flight_blocked_us));
    c("s3native.parts_uploaded", n(stats.parts_uploaded));
    c("s3native.single_puts", n(stats.single_puts));
    c("s3native.requests", n(r.total()));
    c("s3native.complete_multipart_upload", n(r.complete_multipart_upload));
    if q.count > 0 {
        io.minimums.insert("action_executor_acquired.min".into(), n(q.min_us / 1000));
        io.maximums.insert("action_executor_acquired.max".into(), n(q.max_us / 1000));
        io.meanstatistics.insert("action_executor_acquired.mean".into(), MeanStatistic { samples: n(q.count), sum: total_ms(q) });
    }
    for g in ["stream_write_block_uploads_pending", "stream_write_block_uploads_data_pending", "stream_write_block_uploads_active"] {
        io.gauges.insert(g.into(), 0);
    }
    summary(&mut io, "s3native.part_queue_wait", q);
    summary(&mut io, "s3native.part_upload_time", u);
    io
}

/// A native duration summary: min, max and mean (µs), and p50/p99 as maximums (aggregated over
/// streams they are the highest per-file p50/p99).
fn summary(io: &mut IoStatistics, base: &str, d: &DurationSummary) {
    let any = d.count > 0;
    let or_none = |v: u64| if any { n(v) } else { -1 };
    io.minimums.insert(format!("{base}_us"), or_none(d.min_us));
    io.maximums.insert(format!("{base}_us"), or_none(d.max_us));
    io.meanstatistics.insert(format!("{base}_us"), MeanStatistic { samples: n(d.count), sum: n(d.count.saturating_mul(d.mean_us)) });
    io.maximums.insert(format!("{base}_p50_us"), or_none(d.p50_us));
    io.maximums.insert(format!("{base}_p99_us"), or_none(d.p99_us));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_counters_carry_s3as_names() {
        let mut s = Statistics { bytes_written: 1000, parts_uploaded: 2, ..Default::default() };
        s.requests.create_multipart_upload = 1;
        s.requests.upload_part = 2;
        s.requests.put_object = 2;
        s.part_queue_wait = DurationSummary { count: 2, min_us: 1000, mean_us: 1500, max_us: 2000, p50_us: 1000, p99_us: 2000 };
        let io = stream_iostatistics(&s, StreamFacts { magic: true, hflush: 1, ..Default::default() });
        assert_eq!(io.counters["stream_write_bytes"], 1000);
        assert_eq!(io.counters["stream_write_block_uploads"], 2);
        assert_eq!(io.counters["multipart_upload_part_put"], 2);
        assert_eq!(io.counters["committer_magic_marker_put"], 2, "the marker and the .pending");
        assert_eq!(io.counters["object_put_request"], 0, "a magic file's PUTs are the filesystem's, as S3A's tracker");
        let plain = stream_iostatistics(&s, StreamFacts::default());
        assert_eq!(plain.counters["object_put_request"], 2);
        assert_eq!(plain.counters["committer_magic_marker_put"], 0);
        assert_eq!(io.counters["stream_write_queue_duration"], 3);
        assert_eq!(io.counters["op_hflush"], 1);
        assert_eq!(io.maximums["s3native.part_queue_wait_p99_us"], 2000);
        assert_eq!(io.meanstatistics["action_executor_acquired.mean"], MeanStatistic { samples: 2, sum: 3 });
        let json = serde_json::to_value(&io).unwrap();
        assert!(json["meanstatistics"]["s3native.part_upload_time_us"]["samples"].is_number(), "Hadoop's JSON form");
    }
}
