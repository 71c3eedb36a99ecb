//! Per-resource poll intervals (docs/budget.md §3.7):
//! each resource's P_i, from its `crossplane.io/poll-interval` annotation clamped to the
//! floor, or the provider's P. Computed once per group or share as a histogram of the
//! distinct intervals, and once per run as a lookup by cloud name, never per resource per
//! check.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use crate::scenario::Scenario;

/// How many of group `g`'s resources with an index in `range` poll at each interval: (P_i
/// in seconds, count), ascending. A group without annotations is one entry at P.
#[must_use]
pub fn histogram(s: &Scenario, g: usize, range: Range<u32>) -> Vec<(f64, f64)> {
    let Some(group) = s.groups.get(g) else {
        return Vec::new();
    };
    let range = range.start.min(group.count)..range.end.min(group.count);
    if range.is_empty() {
        return Vec::new();
    }
    if group.annotations.is_empty() {
        return vec![(
            s.settings.poll_interval.as_secs_f64(),
            f64::from(range.end - range.start),
        )];
    }
    let mut by: BTreeMap<std::time::Duration, f64> = BTreeMap::new();
    let key = limiter::crossplane::POLL_INTERVAL_ANNOTATION;
    let mut covered = 0;
    // A share's annotation that does not use {{index}} gives each of its resources the same
    // interval: one render per share, not per resource.
    for share in &group.annotations {
        let Some(template) = share.values.get(key) else {
            continue;
        };
        let (lo, hi) = (share.start.max(range.start), share.end.min(range.end));
        if lo >= hi {
            continue;
        }
        covered += hi - lo;
        if template.uses_index() {
            for i in lo..hi {
                *by.entry(group.poll_interval_of(i, &s.settings, &s.name))
                    .or_default() += 1.0;
            }
        } else {
            *by.entry(group.poll_interval_of(lo, &s.settings, &s.name))
                .or_default() += f64::from(hi - lo);
        }
    }
    let rest = range.end - range.start - covered;
    if rest > 0 {
        *by.entry(s.settings.poll_interval).or_default() += f64::from(rest);
    }
    by.into_iter().map(|(d, n)| (d.as_secs_f64(), n)).collect()
}

/// Σ n_i·f(P_i) over a histogram.
pub fn sum_over(hist: &[(f64, f64)], f: impl Fn(f64) -> f64) -> f64 {
    hist.iter().map(|&(p, n)| n * f(p)).sum()
}

/// Each resource's own poll interval by cloud name, for the per-resource checks. Only the
/// resources whose interval is not the provider's P are stored; every other name (and a
/// name the scenario does not know) polls at P.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnIntervals {
    default: f64,
    by_name: HashMap<String, f64>,
    distinct: Vec<f64>,
}

impl OwnIntervals {
    /// The scenario's resources' intervals: O(resources of annotated groups), once.
    #[must_use]
    pub fn of(s: &Scenario) -> OwnIntervals {
        let default = s.settings.poll_interval.as_secs_f64();
        let mut by_name = HashMap::new();
        let mut distinct: Vec<f64> = Vec::new();
        for g in &s.groups {
            if g.annotations.is_empty() {
                if g.count > 0 {
                    distinct.push(default);
                }
                continue;
            }
            for i in 0..g.count {
                let p = g.poll_interval_of(i, &s.settings, &s.name).as_secs_f64();
                if p != default {
                    by_name.insert(g.resource_name(i, &s.name), p);
                }
                distinct.push(p);
            }
        }
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        OwnIntervals {
            default,
            by_name,
            distinct,
        }
    }

    /// P_i of the resource with this cloud name.
    #[must_use]
    pub fn get(&self, name: &str) -> f64 {
        self.by_name.get(name).copied().unwrap_or(self.default)
    }

    /// The provider's P.
    #[must_use]
    pub fn default(&self) -> f64 {
        self.default
    }

    /// The distinct intervals of the scenario's resources, ascending.
    #[must_use]
    pub fn distinct(&self) -> &[f64] {
        &self.distinct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "apiVersion: harness/v1\nname: own\nprovider: {maxReconcileRate: 100, pollInterval: 1m}\nresources:\n  - name: b\n    kind: Bucket\n    count: 100\n    annotations: [{percent: 20, values: {crossplane.io/poll-interval: 10s}}, {percent: 30, values: {crossplane.io/poll-interval: 1h}}]\n  - {name: c, kind: Bucket, count: 5}\nphases:\n  - {name: create, action: create}\n";

    #[test]
    fn histograms_and_the_lookup_agree_with_each_resources_own_interval() {
        let s = crate::scenario::parse(YAML, "own.yaml").expect("valid");
        let h = histogram(&s, 0, 0..100);
        assert_eq!(h, vec![(10.0, 20.0), (60.0, 50.0), (3600.0, 30.0)]);
        assert_eq!(histogram(&s, 0, 10..30), vec![(10.0, 10.0), (3600.0, 10.0)]);
        assert_eq!(histogram(&s, 1, 0..5), vec![(60.0, 5.0)]);
        assert_eq!(histogram(&s, 1, 7..9), Vec::<(f64, f64)>::new());
        let own = OwnIntervals::of(&s);
        assert_eq!(own.distinct(), &[10.0, 60.0, 3600.0]);
        for (g, group) in s.groups.iter().enumerate() {
            for i in 0..group.count {
                let want = group
                    .poll_interval_of(i, &s.settings, &s.name)
                    .as_secs_f64();
                assert_eq!(own.get(&group.resource_name(i, &s.name)), want, "{g}/{i}");
            }
        }
        // Only the 50 annotated resources off P are stored.
        assert_eq!(own.by_name.len(), 50);
        assert_eq!(own.get("unknown"), 60.0);
        assert_eq!(
            sum_over(&h, |p| 1.0 / p),
            20.0 / 10.0 + 50.0 / 60.0 + 30.0 / 3600.0
        );
    }
}
