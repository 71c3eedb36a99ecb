//! The Prometheus text format's histogram series, as client_golang writes them.

use std::fmt::Write as _;

/// Writes the series of the histogram `name` with `labels` (`a="b",…`): its cumulative
/// `_bucket` series (`counts[i]` observations fell at or under `bounds[i]`, then `+Inf`),
/// `_sum` and `_count`.
pub(crate) fn write_histogram(
    out: &mut String,
    name: &str,
    labels: &str,
    bounds: &[f64],
    counts: &[u64],
    count: u64,
    sum: f64,
) {
    let mut cumulative = 0;
    for (bound, n) in bounds.iter().zip(counts) {
        cumulative += n;
        let _ = writeln!(out, "{name}_bucket{{{labels},le=\"{bound}\"}} {cumulative}");
    }
    let _ = writeln!(
        out,
        "{name}_bucket{{{labels},le=\"+Inf\"}} {count}\n{name}_sum{{{labels}}} {sum}\n{name}_count{{{labels}}} {count}"
    );
}
