//! Memory over a run: samples of each measured component and their growth between two
//! moments. Plain data and pure functions; the run's sampler fills the samples.

use serde::{Deserialize, Serialize};

/// One sample of every measured component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemorySample {
    /// When, µs since the run started.
    pub at_us: u64,
    /// Each component's value: (name, value). Names end in their unit (`_bytes`,
    /// `_objects`, `_entries`).
    pub values: Vec<(String, f64)>,
}

/// The live heap outside the journals, when the program counts its heap: the figure an
/// embedded run's `memoryGrowth` judges for the process.
pub const HEAP_LIVE: &str = "heap_live_bytes";

/// The process's resident set.
pub const PROCESS_RSS: &str = "process_rss_bytes";

/// Whether a component holds data by design for the whole run (a journal that keeps every
/// request for the measurements grows with the run's length, not with a leak).
#[must_use]
pub fn retained_by_design(component: &str) -> bool {
    component.contains("journal")
}

/// Whether a component is shown but not judged, among the `sampled` ones: the resident set
/// when the live heap is sampled too (it holds the journals, and the pages the allocator
/// keeps after a free, which follow the timing of frees across threads rather than what
/// the program holds).
#[must_use]
pub fn shown_only(component: &str, sampled: &[&str]) -> bool {
    component == PROCESS_RSS && sampled.contains(&HEAP_LIVE)
}

/// A component's growth between two moments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Growth {
    /// Component.
    pub component: String,
    /// The sample at the start: the first at or after the start moment, µs.
    pub from_us: u64,
    /// Its value there.
    pub from: f64,
    /// The sample at the end: the last at or before the end moment, µs.
    pub to_us: u64,
    /// Its value there.
    pub to: f64,
    /// The largest value in between.
    pub peak: f64,
    /// (to − from) / from, percent; 0 when both are 0.
    pub percent: f64,
}

/// Each component's growth from `from_us` to `to_us`, for the components sampled at both
/// ends, in the order of the first sample.
#[must_use]
pub fn growth(samples: &[MemorySample], from_us: u64, to_us: u64) -> Vec<Growth> {
    let inside: Vec<&MemorySample> = samples
        .iter()
        .filter(|s| s.at_us >= from_us && s.at_us <= to_us)
        .collect();
    let (Some(first), Some(last)) = (inside.first(), inside.last()) else {
        return Vec::new();
    };
    let value =
        |s: &MemorySample, name: &str| s.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    first
        .values
        .iter()
        .filter_map(|(name, from)| {
            let to = value(last, name)?;
            let peak = inside
                .iter()
                .filter_map(|s| value(s, name))
                .fold(f64::NEG_INFINITY, f64::max);
            let percent = if *from == 0.0 {
                if to == 0.0 { 0.0 } else { f64::INFINITY }
            } else {
                (to - from) / from * 100.0
            };
            Some(Growth {
                component: name.clone(),
                from_us: first.at_us,
                from: *from,
                to_us: last.at_us,
                to,
                peak,
                percent,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: u64, rss: f64, journal: f64) -> MemorySample {
        MemorySample {
            at_us: t,
            values: vec![
                ("process_rss_bytes".into(), rss),
                ("cloud_journal_bytes".into(), journal),
            ],
        }
    }

    #[test]
    fn growth_runs_from_the_first_sample_after_the_start_to_the_last_before_the_end() {
        let samples = [
            at(0, 50.0, 0.0),
            at(10, 100.0, 10.0),
            at(20, 130.0, 20.0),
            at(30, 104.0, 30.0),
            at(40, 500.0, 40.0),
        ];
        let g = growth(&samples, 5, 35);
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].from_us, g[0].to_us), (10, 30));
        assert!((g[0].percent - 4.0).abs() < 1e-9);
        assert_eq!(g[0].peak, 130.0);
        assert!((g[1].percent - 200.0).abs() < 1e-9);
        assert!(retained_by_design(&g[1].component) && !retained_by_design(&g[0].component));
    }

    #[test]
    fn the_resident_set_is_judged_only_when_the_live_heap_is_not_counted() {
        assert!(!shown_only(PROCESS_RSS, &[PROCESS_RSS, "cloud_objects"]));
        assert!(shown_only(PROCESS_RSS, &[HEAP_LIVE, PROCESS_RSS]));
        assert!(!shown_only(HEAP_LIVE, &[HEAP_LIVE, PROCESS_RSS]));
    }

    #[test]
    fn no_sample_in_the_span_gives_no_growth() {
        assert!(growth(&[at(0, 1.0, 1.0)], 5, 10).is_empty());
    }
}
