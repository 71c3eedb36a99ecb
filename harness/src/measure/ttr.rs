//! Per-resource time to Ready (and to deletion) in an HDR histogram.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// A latency distribution in milliseconds (1 ms to 7 days, 3 significant digits).
#[derive(Clone, Debug)]
pub struct Latencies {
    hist: Histogram<u64>,
}

/// A serialisable summary: quantiles and buckets for charts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Samples.
    pub count: u64,
    /// Smallest (s).
    pub min_s: f64,
    /// Largest (s).
    pub max_s: f64,
    /// Mean (s).
    pub mean_s: f64,
    /// (q, seconds) for q in 0.5, 0.9, 0.99, 0.999.
    pub quantiles: Vec<(f64, f64)>,
    /// Histogram buckets (upper edge in s, count), linear, at most 40.
    pub buckets: Vec<(f64, u64)>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

impl Latencies {
    /// Empty.
    ///
    /// # Panics
    /// Never: the bounds are constants hdrhistogram accepts.
    #[must_use]
    pub fn new() -> Self {
        Latencies {
            hist: Histogram::new_with_bounds(1, 7 * 24 * 3_600_000, 3)
                .expect("constant histogram bounds are valid"),
        }
    }

    /// Records one resource's time (µs; clamped into the histogram's range).
    pub fn record_us(&mut self, us: u64) {
        self.hist.saturating_record((us / 1000).max(1));
    }

    /// Samples.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// No samples.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// The q-quantile in seconds.
    #[must_use]
    pub fn quantile_s(&self, q: f64) -> f64 {
        self.hist.value_at_quantile(q) as f64 / 1000.0
    }

    /// Quantiles and chart buckets.
    #[must_use]
    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        let max = self.hist.max();
        let step = (max / 40).max(1);
        let buckets = self
            .hist
            .iter_linear(step)
            .map(|v| {
                (
                    v.value_iterated_to() as f64 / 1000.0,
                    v.count_since_last_iteration(),
                )
            })
            .collect();
        LatencySummary {
            count: self.hist.len(),
            min_s: self.hist.min() as f64 / 1000.0,
            max_s: max as f64 / 1000.0,
            mean_s: self.hist.mean() / 1000.0,
            quantiles: [0.5, 0.9, 0.99, 0.999]
                .iter()
                .map(|&q| (q, self.quantile_s(q)))
                .collect(),
            buckets,
        }
    }
}

impl LatencySummary {
    /// The stored quantile closest to q.
    #[must_use]
    pub fn quantile(&self, q: f64) -> Option<f64> {
        self.quantiles
            .iter()
            .min_by(|a, b| (a.0 - q).abs().total_cmp(&(b.0 - q).abs()))
            .map(|x| x.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_back_in_seconds_within_the_histograms_precision() {
        let mut l = Latencies::new();
        for i in 1..=1000u64 {
            l.record_us(i * 100_000); // 0.1 s .. 100 s
        }
        assert_eq!(l.len(), 1000);
        assert!(
            (l.quantile_s(0.5) - 50.0).abs() < 0.1,
            "{}",
            l.quantile_s(0.5)
        );
        let s = l.summary();
        assert!((s.quantile(0.99).unwrap_or(0.0) - 99.0).abs() < 0.1);
        assert_eq!(s.buckets.iter().map(|b| b.1).sum::<u64>(), 1000);
    }
}
