//! Per-resource measurement from the journal: each resource's calls, its busiest window,
//! its realised reconcile period, and the resources that loop hot.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::window::windowed_max;

/// One resource's calls in a span, from the journal (keyed by the resource's cloud name).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceCalls {
    /// The resource's cloud name.
    pub name: String,
    /// Calls in the span.
    pub calls: u64,
    /// Observes (GETs) in the span: one per reconcile that reached Observe.
    pub observes: u64,
    /// The most calls in any closed window of the length asked for.
    pub busiest_window: u64,
    /// Mean time between Observes (s); NaN with fewer than two.
    #[serde(with = "crate::float")]
    pub mean_period_s: f64,
}

/// A call as per-resource measurement needs it.
#[derive(Clone, Copy, Debug)]
pub struct NamedCall<'a> {
    /// The resource's cloud name.
    pub name: &'a str,
    /// Arrival, µs.
    pub at_us: u64,
    /// An Observe (GET).
    pub observe: bool,
}

/// Per-resource calls among `calls` arriving in `[from_us, to_us)`, with each resource's
/// busiest window of `window_us`; sorted by calls, most first, then by name.
#[must_use]
pub fn per_resource<'a>(
    calls: impl IntoIterator<Item = NamedCall<'a>>,
    from_us: u64,
    to_us: u64,
    window_us: u64,
) -> Vec<ResourceCalls> {
    let mut by: BTreeMap<&str, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for c in calls {
        if c.at_us < from_us || c.at_us >= to_us || c.name.is_empty() {
            continue;
        }
        let entry = by.entry(c.name).or_default();
        entry.0.push(c.at_us);
        if c.observe {
            entry.1.push(c.at_us);
        }
    }
    let mut out: Vec<ResourceCalls> = by
        .into_iter()
        .map(|(name, (mut all, mut observes))| {
            all.sort_unstable();
            observes.sort_unstable();
            let mean_period_s = if observes.len() >= 2 {
                (observes[observes.len() - 1] - observes[0]) as f64
                    / 1e6
                    / (observes.len() - 1) as f64
            } else {
                f64::NAN
            };
            ResourceCalls {
                name: name.to_owned(),
                calls: all.len() as u64,
                observes: observes.len() as u64,
                busiest_window: windowed_max(&all, window_us).count,
                mean_period_s,
            }
        })
        .collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    out
}

/// The resources whose busiest window holds more than `limit` calls, most first.
#[must_use]
pub fn hot_loops(resources: &[ResourceCalls], limit: f64) -> Vec<&ResourceCalls> {
    hot_loops_by(resources, |_| limit)
}

/// The resources whose busiest window holds more than their own limit, `limit_of(resource)`
/// (a resource's limit follows its own poll interval), most first.
#[must_use]
pub fn hot_loops_by(
    resources: &[ResourceCalls],
    limit_of: impl Fn(&ResourceCalls) -> f64,
) -> Vec<&ResourceCalls> {
    let mut hot: Vec<&ResourceCalls> = resources
        .iter()
        .filter(|r| r.busiest_window as f64 > limit_of(r))
        .collect();
    hot.sort_by_key(|r| std::cmp::Reverse(r.busiest_window));
    hot
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, s: f64) -> NamedCall<'_> {
        NamedCall {
            name,
            at_us: (s * 1e6) as u64,
            observe: true,
        }
    }

    #[test]
    fn calls_are_counted_per_resource_inside_the_span_with_their_busiest_window() {
        let calls = [
            call("a", 0.0),
            call("a", 1.0),
            call("a", 3.0),
            call("a", 7.0),
            call("b", 2.0),
            call("b", 100.0),
        ];
        let got = per_resource(calls, 0, 50_000_000, 2_000_000);
        assert_eq!(got[0].name, "a");
        assert_eq!((got[0].calls, got[0].busiest_window), (4, 2));
        assert!((got[0].mean_period_s - 7.0 / 3.0).abs() < 1e-9);
        assert_eq!((got[1].name.as_str(), got[1].calls), ("b", 1));
        assert!(got[1].mean_period_s.is_nan());
    }

    #[test]
    fn a_hot_loop_is_a_resource_whose_busiest_window_passes_the_limit() {
        let calls: Vec<_> = (0..50).map(|i| call("hot", f64::from(i) * 0.1)).collect();
        let got = per_resource(
            calls.into_iter().chain([call("cool", 1.0)]),
            0,
            u64::MAX,
            1_000_000,
        );
        let hot = hot_loops(&got, 5.0);
        assert_eq!(hot.len(), 1);
        assert_eq!(hot[0].name, "hot");
    }
}
