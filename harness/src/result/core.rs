//! What core did in a run ([`CoreReport`], read by `run::core::measure` at the source),
//! and the verdicts of the checks on it: `coreApiRequests`, `functionCalls`,
//! `xrTimeToReady`, `breakerOpens` and `staleXRs`.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Core's requests of one verb to one resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreRequests {
    /// The Kubernetes verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`).
    pub verb: String,
    /// `PLURAL[.GROUP][/status]`.
    pub resource: String,
    /// How many.
    pub count: u64,
}

/// One XR controller's breaker counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BreakerCounts {
    /// The XRD.
    pub xrd: String,
    /// Closed-to-open transitions.
    pub opens: u64,
    /// Open-to-closed transitions.
    pub closes: u64,
    /// Events let through.
    pub allowed: u64,
    /// Events dropped while open.
    pub dropped: u64,
    /// Events let through half-open.
    pub half_open_allowed: u64,
}

/// One XR's time to Ready and its composed resources'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct XrTiming {
    /// Its group.
    pub group: String,
    /// Its name.
    pub name: String,
    /// From its create to its first Ready, seconds (`None`: never Ready).
    pub ready_s: Option<f64>,
    /// From its create to the first Ready of its slowest composed resource, seconds
    /// (`None`: one never was, or none was seen).
    pub slowest_composed_s: Option<f64>,
    /// Composed resources the watches saw for it.
    pub composed: usize,
}

/// What core did in a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CoreReport {
    /// The `User-Agent` prefix its requests were told apart by.
    pub user_agent: String,
    /// Its requests in all.
    pub requests: u64,
    /// By verb and resource, most first.
    pub by_verb: Vec<CoreRequests>,
    /// When each request came, µs since the run started (for windows).
    #[serde(skip)]
    pub times_us: Vec<u64>,
    /// Function calls per function.
    pub function_calls: BTreeMap<String, u64>,
    /// Each XR controller's breaker.
    pub breakers: Vec<BreakerCounts>,
    /// Every XR the run created, in group and index order.
    pub xrs: Vec<XrTiming>,
    /// XRs left with every composed resource Ready but not Ready themselves at the end
    /// (not deleted).
    pub stale: Vec<String>,
}

impl CoreReport {
    /// The most of core's requests in any window of `w` (closed windows, every start).
    #[must_use]
    pub fn max_in_window(&self, w: Duration) -> u64 {
        let w = u64::try_from(w.as_micros()).unwrap_or(u64::MAX);
        let (mut best, mut start) = (0, 0);
        for (end, &t) in self.times_us.iter().enumerate() {
            while self.times_us[start] + w <= t {
                start += 1;
            }
            best = best.max(end + 1 - start);
        }
        best as u64
    }

    /// Breaker opens over every XR controller.
    #[must_use]
    pub fn breaker_opens(&self) -> u64 {
        self.breakers.iter().map(|b| b.opens).sum()
    }

    /// Function calls in all.
    #[must_use]
    pub fn total_function_calls(&self) -> u64 {
        self.function_calls.values().sum()
    }

    /// PATCHes (server-side applies) core made.
    #[must_use]
    pub fn patches(&self) -> u64 {
        self.by_verb
            .iter()
            .filter(|r| r.verb == "patch")
            .map(|r| r.count)
            .sum()
    }

    /// The `q` quantile of the XRs' times to Ready (only Ready ones).
    #[must_use]
    pub fn ready_quantile(&self, q: f64) -> Option<f64> {
        quantile(self.xrs.iter().filter_map(|x| x.ready_s).collect(), q)
    }

    /// The `q` quantile of the times to Ready of each XR's slowest composed resource.
    #[must_use]
    pub fn composed_ready_quantile(&self, q: f64) -> Option<f64> {
        quantile(
            self.xrs
                .iter()
                .filter_map(|x| x.slowest_composed_s)
                .collect(),
            q,
        )
    }
}

fn quantile(mut v: Vec<f64>, q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    Some(v[i])
}

use super::model::{LimitKind, Outcome, Verdict};
use crate::scenario::composite::CoreCheck;
use crate::scenario::{Assertion, Check, Scenario};

/// The check's name, as scenario files spell it.
#[must_use]
pub fn check_name(c: &CoreCheck) -> &'static str {
    match c {
        CoreCheck::ApiRequests { .. } => "coreApiRequests",
        CoreCheck::FunctionCalls { .. } => "functionCalls",
        CoreCheck::XrTimeToReady { .. } => "xrTimeToReady",
        CoreCheck::BreakerOpens { .. } => "breakerOpens",
        CoreCheck::StaleXrs { .. } => "staleXRs",
    }
}

/// The verdict of `a` (a check of `c`) on what core did (`None`: core did not run or was
/// not measured, which fails the check).
#[must_use]
pub fn verdict(a: &Assertion, c: &CoreCheck, core: Option<&CoreReport>) -> Verdict {
    #[allow(clippy::cast_precision_loss)]
    let (observed, limit, formula, note) = match (c, core) {
        (_, None) => (
            f64::NAN,
            f64::NAN,
            "explicit limit",
            Some("core was not measured: the run started no composite layer (an embedded run of a scenario with `composites` does)".to_owned()),
        ),
        (CoreCheck::ApiRequests { window, max }, Some(r)) => (
            r.max_in_window(*window) as f64,
            *max,
            "explicit limit",
            Some(format!(
                "core's requests (User-Agent {:?}…) in any {:?} window; {} in all, {} PATCHes",
                r.user_agent,
                window,
                r.requests,
                r.patches()
            )),
        ),
        (CoreCheck::FunctionCalls { max }, Some(r)) => (
            r.total_function_calls() as f64,
            *max,
            "explicit limit",
            Some(
                r.function_calls
                    .iter()
                    .map(|(f, n)| format!("{f}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        (CoreCheck::XrTimeToReady { quantile, max }, Some(r)) => (
            r.ready_quantile(*quantile).unwrap_or(f64::INFINITY),
            max.as_secs_f64(),
            "explicit limit (s)",
            Some(format!(
                "{} of {} XRs Ready; slowest composed resource's p{}: {}",
                r.xrs.iter().filter(|x| x.ready_s.is_some()).count(),
                r.xrs.len(),
                quantile * 100.0,
                r.composed_ready_quantile(*quantile)
                    .map_or_else(|| "none".to_owned(), |s| format!("{s:.3}s"))
            )),
        ),
        (CoreCheck::BreakerOpens { max }, Some(r)) => (
            r.breaker_opens() as f64,
            *max as f64,
            "max (default 0)",
            None,
        ),
        (CoreCheck::StaleXrs { max }, Some(r)) => (
            r.stale.len() as f64,
            *max as f64,
            "max (default 0)",
            (!r.stale.is_empty()).then(|| r.stale.iter().take(10).cloned().collect::<Vec<_>>().join(", ")),
        ),
    };
    Verdict {
        name: a.name.clone(),
        check: check_name(c).to_owned(),
        phase: None,
        formula: formula.to_owned(),
        inputs: String::new(),
        predicted: f64::NAN,
        limit,
        observed,
        upper: true,
        margin: limit - observed,
        pass: observed <= limit,
        outcome: Outcome::default(),
        note: note.filter(|n| !n.is_empty()),
        calls_window_s: None,
        kind: LimitKind::Given,
    }
}

/// Gives `result` what core did and judges the scenario's checks of it again (the
/// verdicts are in assertion order).
pub fn judge(s: &Scenario, result: &mut super::RunResult, core: Option<CoreReport>) {
    result.core = core;
    for (a, v) in s.assertions.iter().zip(result.verdicts.iter_mut()) {
        if let Check::Core(c) = &a.check {
            *v = verdict(a, c, result.core.as_ref());
            v.outcome = if v.pass { Outcome::Pass } else { Outcome::Fail };
            if result.partial && v.pass {
                v.outcome = Outcome::Incomplete;
                v.pass = false;
                v.note = Some(format!(
                    "the run stopped early: within its limit so far, but not a pass{}",
                    v.note.take().map(|n| format!("; {n}")).unwrap_or_default()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windowed_maximum_counts_requests_less_than_a_window_apart() {
        let r = CoreReport {
            times_us: vec![0, 500_000, 999_999, 1_000_000, 3_000_000],
            ..CoreReport::default()
        };
        assert_eq!(r.max_in_window(Duration::from_secs(1)), 3);
        assert_eq!(r.max_in_window(Duration::from_secs(10)), 5);
    }
}
