//! Planning the GETs of a vectored read: the ranges sorted, those closer than the hole size
//! coalesced into one GET (while it stays within the maximum request size), and any GET
//! larger than the maximum split into pieces of that size. Daft's and AAL's planners do the
//! same (reference/read-path.md); the defaults are in [`crate::config::read`].

use std::ops::Range;

/// The GETs of one vectored read and, for each range asked for, the GETs that cover it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Byte ranges to GET, in object order, none empty, none overlapping.
    pub gets: Vec<Range<u64>>,
    /// For each range asked for (in the caller's order): the GETs (indices into `gets`)
    /// whose bytes make it up, in order. Empty for an empty range.
    pub covers: Vec<Range<usize>>,
}

/// Plan `ranges` (each `start <= end`, any order, overlaps allowed) with holes up to `hole`
/// bytes coalesced and GETs of at most `max_request` bytes (at least 1).
pub(crate) fn plan(ranges: &[Range<u64>], hole: u64, max_request: u64) -> Plan {
    let max_request = max_request.max(1);
    let mut order: Vec<usize> = (0..ranges.len()).filter(|i| ranges[*i].start < ranges[*i].end).collect();
    order.sort_by_key(|i| (ranges[*i].start, ranges[*i].end));
    // Merge into runs: a range joins the run when the hole before it is small enough and
    // the run stays within the maximum (a range that overlaps the run always joins).
    let mut runs: Vec<Range<u64>> = Vec::new();
    for &i in &order {
        let r = &ranges[i];
        match runs.last_mut() {
            Some(run) if r.start <= run.end => run.end = run.end.max(r.end),
            Some(run) if r.start - run.end <= hole && r.end.max(run.end) - run.start <= max_request => run.end = r.end,
            _ => runs.push(r.clone()),
        }
    }
    // Split runs larger than the maximum.
    let mut gets = Vec::new();
    for run in runs {
        let mut at = run.start;
        while at < run.end {
            let end = run.end.min(at + max_request);
            gets.push(at..end);
            at = end;
        }
    }
    let covers = ranges
        .iter()
        .map(|r| {
            if r.start >= r.end {
                return 0..0;
            }
            let first = gets.partition_point(|g| g.end <= r.start);
            let last = gets.partition_point(|g| g.start < r.end);
            first..last
        })
        .collect();
    Plan { gets, covers }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn small_holes_coalesce_and_large_ones_do_not() {
        let p = plan(&[0..100, 200..300, 5 * MIB..5 * MIB + 10], 1024, 16 * MIB);
        assert_eq!(p.gets, vec![0..300, 5 * MIB..5 * MIB + 10]);
        assert_eq!(p.covers, vec![0..1, 0..1, 1..2]);
    }

    #[test]
    fn large_ranges_split_and_unordered_overlapping_ranges_map_back() {
        let p = plan(&[10 * MIB..11 * MIB, 0..40 * MIB, 5..10, 3..3], MIB, 16 * MIB);
        assert_eq!(p.gets, vec![0..16 * MIB, 16 * MIB..32 * MIB, 32 * MIB..40 * MIB]);
        assert_eq!(p.covers, vec![0..1, 0..3, 0..1, 0..0]);
    }

    #[test]
    fn coalescing_stops_at_the_maximum_request() {
        let p = plan(&[0..6 * MIB, 6 * MIB + 10..12 * MIB], MIB, 8 * MIB);
        assert_eq!(p.gets, vec![0..6 * MIB, 6 * MIB + 10..12 * MIB]);
        assert_eq!(p.covers, vec![0..1, 1..2]);
    }
}
