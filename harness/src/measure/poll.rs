//! Realised poll intervals: the gaps between a resource's Observe calls, against the interval
//! the settings give it ("was my setting honoured?").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One resource's Observe calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ObserveSeries<'a> {
    /// Resource (external name).
    pub name: &'a str,
    /// Expected interval P_i (s), after annotation and clamp.
    pub expected_s: f64,
    /// Observe times (µs), sorted.
    pub times_us: &'a [u64],
}

/// Realised intervals of a set of resources that share an expected interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PollStats {
    /// Expected interval (s).
    pub expected_s: f64,
    /// Resources with at least two observes.
    pub resources: u64,
    /// Gaps measured.
    pub gaps: u64,
    /// Median gap (s).
    pub median_s: f64,
    /// Mean gap (s).
    pub mean_s: f64,
    /// Shortest gap (s).
    pub min_s: f64,
    /// Longest gap (s).
    pub max_s: f64,
    /// Resources whose median gap is below half the expected interval (hot loops).
    pub hot: Vec<String>,
    /// Standard deviation of the gaps (s).
    #[serde(default)]
    pub stddev_s: f64,
    /// The realised jitter: the half-width j of a uniform P ± j with the gaps' spread,
    /// √3 × their standard deviation (s). Against the settings' jitter, "was my jitter
    /// honoured"; latency and queueing widen it a little.
    #[serde(default)]
    pub jitter_s: f64,
}

/// Groups resources by expected interval and summarises their gaps.
#[must_use]
pub fn realised_intervals(series: &[ObserveSeries<'_>]) -> Vec<PollStats> {
    let mut by: BTreeMap<u64, (PollStats, Vec<f64>)> = BTreeMap::new();
    for s in series {
        if s.times_us.len() < 2 {
            continue;
        }
        let key = (s.expected_s * 1e6) as u64;
        let (stats, gaps) = by.entry(key).or_insert_with(|| {
            (
                PollStats {
                    expected_s: s.expected_s,
                    ..PollStats::default()
                },
                Vec::new(),
            )
        });
        stats.resources += 1;
        let mut own: Vec<f64> = s
            .times_us
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / 1e6)
            .collect();
        own.sort_by(f64::total_cmp);
        if own[own.len() / 2] < s.expected_s / 2.0 {
            stats.hot.push(s.name.to_owned());
        }
        gaps.extend(own);
    }
    by.into_values()
        .map(|(mut st, mut gaps)| {
            gaps.sort_by(f64::total_cmp);
            st.gaps = gaps.len() as u64;
            st.median_s = gaps[gaps.len() / 2];
            st.mean_s = gaps.iter().sum::<f64>() / gaps.len() as f64;
            st.min_s = gaps[0];
            st.max_s = gaps[gaps.len() - 1];
            let var = gaps.iter().map(|g| (g - st.mean_s).powi(2)).sum::<f64>() / gaps.len() as f64;
            st.stddev_s = var.sqrt();
            st.jitter_s = 3f64.sqrt() * st.stddev_s;
            st
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_grouped_by_expected_interval_and_hot_loops_are_named() {
        let a = [0, 60_000_000, 121_000_000];
        let b = [0, 1_000_000, 2_000_000];
        let c = [5_000_000, 14_000_000];
        let s = realised_intervals(&[
            ObserveSeries {
                name: "a",
                expected_s: 60.0,
                times_us: &a,
            },
            ObserveSeries {
                name: "hot",
                expected_s: 60.0,
                times_us: &b,
            },
            ObserveSeries {
                name: "c",
                expected_s: 10.0,
                times_us: &c,
            },
        ]);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].expected_s, s[0].gaps, s[0].median_s), (10.0, 1, 9.0));
        assert_eq!(s[1].resources, 2);
        assert_eq!(s[1].hot, vec!["hot".to_owned()]);
        assert_eq!((s[1].min_s, s[1].max_s), (1.0, 61.0));
    }

    #[test]
    fn the_realised_jitter_of_uniform_gaps_is_their_half_width() {
        // Gaps 54, 55, …, 66 s: P = 60 s ± 6 s on a grid; σ² = (13² − 1)/12 = 14, so
        // √3·σ = √42 ≈ 6.48 (the grid's half-width plus half a step).
        let mut t = 0u64;
        let times: Vec<u64> = std::iter::once(0)
            .chain((54..=66).map(|g| {
                t += g * 1_000_000;
                t
            }))
            .collect();
        let s = realised_intervals(&[ObserveSeries {
            name: "a",
            expected_s: 60.0,
            times_us: &times,
        }]);
        assert!((s[0].stddev_s - 14f64.sqrt()).abs() < 1e-9, "{:?}", s[0]);
        assert!((s[0].jitter_s - 42f64.sqrt()).abs() < 1e-9, "{:?}", s[0]);
    }
}
