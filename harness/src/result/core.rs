//! What core did in a run ([`CoreReport`], read by `run::core::measure` at the source);
//! `core_verdict` judges the checks of it.

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
    /// Of a `patch` row's, those that changed nothing: the API server answered with the
    /// object as it was, no new resourceVersion (its journal's `changed: false`).
    #[serde(default)]
    pub no_op: u64,
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
    /// Times its circuit opened.
    #[serde(default)]
    pub opens: u32,
    /// Seconds its circuit was open in all (a circuit open at the end counts to the XR's
    /// delete, or to the end).
    #[serde(default)]
    pub open_s: f64,
}

/// One span during which an XR's circuit was open.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenSpan {
    /// The XR controller's XRD.
    pub xrd: String,
    /// The XR.
    pub xr: String,
    /// When it opened, seconds since the run started.
    pub opened_s: f64,
    /// When it closed (`None`: still open at the XR's delete or the end).
    pub closed_s: Option<f64>,
    /// The source that triggered the open (core's `triggeredBy`: the most frequent of the
    /// XR's recent event sources, e.g. `Bucket/a-1` or `XBucketSet/a`).
    #[serde(default)]
    pub triggered_by: String,
    /// The spans within it during which the circuit was half-open (its next event would
    /// pass as a probe), `[from, to]` in seconds since the run started: from a half-open
    /// interval after the open or the last probe, to the next probe or the span's end.
    #[serde(default)]
    pub half_open_s: Vec<[f64; 2]>,
}

/// Whether a request at `t_us` belongs to the phase from `start_us` to `end_us`. Phases
/// meet at an instant (in virtual time the next phase's writes, and what core does about
/// them, come at the very microsecond the previous phase ended), and that instant belongs to
/// the phase that starts there: a phase is `[start, end)`, but for the run's last, which ends
/// at `last_end_us` and keeps its end.
#[must_use]
pub fn in_phase(t_us: u64, start_us: u64, end_us: u64, last_end_us: u64) -> bool {
    t_us >= start_us && (t_us < end_us || (t_us == end_us && end_us >= last_end_us))
}

/// What core did during one phase: its counters read at the phase's start and end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CorePhase {
    /// The phase.
    pub phase: String,
    /// Its action, as scenarios name it.
    pub action: String,
    /// Its start, µs since the run started.
    pub start_us: u64,
    /// Its end.
    pub end_us: u64,
    /// Core's API requests in it.
    pub requests: u64,
    /// Core's function calls in it, per function (`function_run_function_request_total`).
    pub function_calls: BTreeMap<String, u64>,
    /// The calls that reached each in-process function (its own count).
    pub function_reached: BTreeMap<String, u64>,
    /// Of those, answered with a FATAL result by an injected fault.
    pub function_failed: BTreeMap<String, u64>,
    /// Core's function calls that its reconcile deadline ended (`DeadlineExceeded`).
    pub deadline_exceeded: u64,
    /// Breaker opens over every XR controller.
    pub breaker_opens: u64,
    /// Events the open circuits dropped.
    pub breaker_dropped: u64,
    /// XR reconciles that ended in it, over every XR controller.
    pub reconciles: u64,
    /// Of them, those that failed (a reconcile its deadline ended among them).
    pub reconcile_errors: u64,
    /// compositionUpdate: the CompositionRevision the XRs moved to.
    pub revision: Option<String>,
    /// compositionUpdate: composed resources whose spec changed (their generation rose).
    pub composed_updates: Option<u64>,
    /// compositionUpdate: composed resources created by the edit (a larger count).
    pub composed_created: Option<u64>,
    /// The cloud's Update calls in the phase (the provider's updates reaching the cloud).
    pub cloud_updates: Option<u64>,
    /// Its functions' latency in it, per function (core's `function_run_function_seconds`
    /// read at the phase's start and end); empty where core's histogram is not read per
    /// phase (a core in another process).
    #[serde(skip_serializing_if = "FunctionLatency::is_empty")]
    pub function_latency: FunctionLatency,
}

/// Functions' latency as core's histogram gives it, per function: responses, their seconds,
/// and the buckets (cumulative, Prometheus' default bounds, `SECONDS_BUCKETS`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FunctionLatency {
    /// Responses per function.
    pub responses: BTreeMap<String, u64>,
    /// Their seconds, summed per function.
    pub seconds: BTreeMap<String, f64>,
    /// The histogram's buckets per function (cumulative).
    pub buckets: BTreeMap<String, Vec<u64>>,
}

impl FunctionLatency {
    /// Whether no response was counted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.responses.values().all(|&n| n == 0)
    }

    /// What was counted from `before` to `self` (counters read later minus earlier).
    #[must_use]
    pub fn since(&self, before: &FunctionLatency) -> FunctionLatency {
        let responses = self
            .responses
            .iter()
            .map(|(f, n)| {
                let b = before.responses.get(f).copied().unwrap_or(0);
                (f.clone(), n.saturating_sub(b))
            })
            .collect();
        let seconds = self
            .seconds
            .iter()
            .map(|(f, s)| (f.clone(), s - before.seconds.get(f).copied().unwrap_or(0.0)))
            .collect();
        let buckets = self
            .buckets
            .iter()
            .map(|(f, now)| {
                let diff = match before.buckets.get(f) {
                    Some(b) if b.len() == now.len() => now
                        .iter()
                        .zip(b)
                        .map(|(n, b)| n.saturating_sub(*b))
                        .collect(),
                    _ => now.clone(),
                };
                (f.clone(), diff)
            })
            .collect();
        FunctionLatency {
            responses,
            seconds,
            buckets,
        }
    }

    /// Function `function`'s mean latency (s) over its responses.
    #[must_use]
    pub fn mean_s(&self, function: &str) -> Option<f64> {
        mean_latency(&self.responses, &self.seconds, function)
    }

    /// Function `function`'s latency (s) at quantile `q`, as [`histogram_quantile`] reads
    /// its histogram.
    #[must_use]
    pub fn quantile_s(&self, function: &str, q: f64) -> Option<f64> {
        histogram_quantile(
            self.buckets.get(function)?,
            *self.responses.get(function)?,
            q,
        )
    }
}

/// Function `function`'s mean latency (s): its `seconds` over its `responses`; `None`
/// without responses.
fn mean_latency(
    responses: &BTreeMap<String, u64>,
    seconds: &BTreeMap<String, f64>,
    function: &str,
) -> Option<f64> {
    let n = *responses.get(function)?;
    #[allow(clippy::cast_precision_loss)]
    (n > 0).then(|| seconds.get(function).copied().unwrap_or(0.0) / n as f64)
}

/// The latency (s) at quantile `q` of a histogram of `total` observations with cumulative
/// `buckets` over core's bounds (Prometheus' defaults, 5 ms to 10 s), as Prometheus'
/// `histogram_quantile` reads one: linear within the bucket the rank falls in (from 0 in
/// the first), the highest finite bound when it falls past them (10 s); `None` without
/// observations or with buckets of other bounds.
#[must_use]
pub fn histogram_quantile(buckets: &[u64], total: u64, q: f64) -> Option<f64> {
    use composer::function::metrics::SECONDS_BUCKETS;
    if total == 0 || buckets.len() != SECONDS_BUCKETS.len() {
        return None;
    }
    #[allow(clippy::cast_precision_loss)]
    let rank = q.clamp(0.0, 1.0) * total as f64;
    #[allow(clippy::cast_precision_loss)]
    let Some(b) = buckets.iter().position(|&n| n as f64 >= rank) else {
        return SECONDS_BUCKETS.last().copied();
    };
    let (start, below) = match b {
        0 => (0.0, 0),
        _ => (SECONDS_BUCKETS[b - 1], buckets[b - 1]),
    };
    let within = buckets[b] - below;
    if within == 0 {
        return Some(SECONDS_BUCKETS[b]);
    }
    #[allow(clippy::cast_precision_loss)]
    let fraction = (rank - below as f64) / within as f64;
    Some(start + (SECONDS_BUCKETS[b] - start) * fraction)
}

impl CorePhase {
    /// Function calls in it, all functions.
    #[must_use]
    pub fn total_function_calls(&self) -> u64 {
        self.function_calls.values().sum()
    }
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
    /// Core's PATCHes (server-side applies) that changed their object: a new
    /// resourceVersion (or a create).
    pub patches_changed: u64,
    /// Core's PATCHes that changed nothing: no resourceVersion bump.
    pub patches_no_op: u64,
    /// When each request came, µs since the run started (for windows).
    #[serde(skip)]
    pub times_us: Vec<u64>,
    /// Function calls per function.
    pub function_calls: BTreeMap<String, u64>,
    /// Function responses per function (`function_run_function_response_total`, every
    /// code).
    pub function_responses: BTreeMap<String, u64>,
    /// Their seconds in all per function (`function_run_function_seconds`' sum): over the
    /// responses, each function's mean latency.
    pub function_seconds: BTreeMap<String, f64>,
    /// Their `function_run_function_seconds` buckets per function: how many took at most
    /// each of [`composer::function::metrics::SECONDS_BUCKETS`] (cumulative; empty where
    /// core's histogram cannot be read).
    pub function_buckets: BTreeMap<String, Vec<u64>>,
    /// Core's requests per bin of `bin_s` from the run's start (the timeline's bins, so
    /// they stack on the provider's).
    pub requests_per_bin: Vec<u32>,
    /// Their bin width (s).
    pub bin_s: f64,
    /// Each XR controller's breaker.
    pub breakers: Vec<BreakerCounts>,
    /// Every XR the run created, in group and index order.
    pub xrs: Vec<XrTiming>,
    /// XRs left with every composed resource Ready but not Ready themselves at the end
    /// (not deleted).
    pub stale: Vec<String>,
    /// Each phase's share, in phase order.
    pub phases: Vec<CorePhase>,
    /// Since when each of `stale` has been so (its last composed resource's first Ready),
    /// seconds since the run started.
    pub stale_since_s: Vec<f64>,
    /// Every circuit's spans open, in the order they opened.
    pub open_spans: Vec<OpenSpan>,
    /// When the run ended (core was measured), seconds since it started.
    pub ended_s: f64,
    /// What could not be read of core, by the check that reads it (`functionCalls`,
    /// `breakerOpens`; `phases/functionCalls`, `phases/breakerOpens`, … for a check of one
    /// phase, `phases` for every check of a phase): why. Such a check's verdict is
    /// UNMEASURED. Empty for the embedded core, which is read in full.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unmeasured: BTreeMap<String, String>,
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

    /// Core's phase `name`, if it ran.
    #[must_use]
    pub fn phase(&self, name: &str) -> Option<&CorePhase> {
        self.phases.iter().find(|p| p.phase == name)
    }

    /// The most of core's requests in any window of `w` within the phase from `from_us` to
    /// `to_us` ([`in_phase`], the last phase's end being the latest of [`Self::phases`]).
    #[must_use]
    pub fn max_in_window_between(&self, w: Duration, from_us: u64, to_us: u64) -> u64 {
        let last_end = self.phases.iter().map(|p| p.end_us).max().unwrap_or(to_us);
        let within = CoreReport {
            times_us: self
                .times_us
                .iter()
                .copied()
                .filter(|&t| in_phase(t, from_us, to_us, last_end))
                .collect(),
            ..CoreReport::default()
        };
        within.max_in_window(w)
    }

    /// Breaker opens over every XR controller.
    #[must_use]
    pub fn breaker_opens(&self) -> u64 {
        self.breakers.iter().map(|b| b.opens).sum()
    }

    /// The XRs of `stale` that have been stale for at least `grace` at the end.
    #[must_use]
    pub fn stale_after(&self, grace: Duration) -> Vec<&str> {
        let g = grace.as_secs_f64();
        self.stale
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                self.stale_since_s
                    .get(*i)
                    .is_none_or(|since| self.ended_s - since >= g)
            })
            .map(|(_, x)| x.as_str())
            .collect()
    }

    /// The longest any XR's circuit was open in all, and which XR's (`None`: none opened).
    #[must_use]
    pub fn longest_open(&self) -> Option<(&str, f64)> {
        self.xrs
            .iter()
            .filter(|x| x.opens > 0)
            .max_by(|a, b| a.open_s.total_cmp(&b.open_s))
            .map(|x| (x.name.as_str(), x.open_s))
    }

    /// Fills [`CoreReport::requests_per_bin`] from the requests' times, with bins of
    /// `bin_s` (nothing when the times are gone: a result read back from JSON keeps its
    /// bins).
    pub fn bin_requests(&mut self, bin_s: f64) {
        if self.times_us.is_empty() || bin_s <= 0.0 {
            return;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let bin = |t: u64| (t as f64 / 1e6 / bin_s) as usize;
        let n = self.times_us.last().map_or(0, |&t| bin(t) + 1);
        let mut bins = vec![0u32; n];
        for &t in &self.times_us {
            bins[bin(t)] += 1;
        }
        self.requests_per_bin = bins;
        self.bin_s = bin_s;
    }

    /// Each function's mean latency (s) over its responses.
    #[must_use]
    pub fn function_mean_s(&self, function: &str) -> Option<f64> {
        mean_latency(&self.function_responses, &self.function_seconds, function)
    }

    /// Function `function`'s latency (s) at quantile `q` from its histogram
    /// ([`histogram_quantile`]); `None` without responses.
    #[must_use]
    pub fn function_quantile_s(&self, function: &str, q: f64) -> Option<f64> {
        histogram_quantile(
            self.function_buckets.get(function)?,
            *self.function_responses.get(function)?,
            q,
        )
    }

    /// The XRs whose circuit ever left closed, most time open first, with their spans
    /// (open, and half-open within); and how many XRs never left closed.
    #[must_use]
    pub fn circuits(&self) -> (Vec<(&XrTiming, Vec<&OpenSpan>)>, usize) {
        let mut opened: Vec<(&XrTiming, Vec<&OpenSpan>)> = self
            .xrs
            .iter()
            .filter(|x| x.opens > 0)
            .map(|x| {
                let spans = self.open_spans.iter().filter(|s| s.xr == x.name).collect();
                (x, spans)
            })
            .collect();
        opened.sort_by(|a, b| {
            b.0.open_s
                .total_cmp(&a.0.open_s)
                .then(a.0.name.cmp(&b.0.name))
        });
        let closed = self.xrs.len() - opened.len();
        (opened, closed)
    }

    /// The XRs' times to Ready as a latency summary (the provider's resources' `ttr`'s
    /// shape: quantiles and chart buckets).
    #[must_use]
    pub fn xr_ttr(&self) -> crate::measure::LatencySummary {
        let mut l = crate::measure::Latencies::new();
        for s in self.xrs.iter().filter_map(|x| x.ready_s) {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            l.record_us((s * 1e6) as u64);
        }
        l.summary()
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

    #[test]
    fn the_instant_two_phases_meet_at_belongs_to_the_one_that_starts() {
        let phase = |name: &str, start_us, end_us| CorePhase {
            phase: name.to_owned(),
            start_us,
            end_us,
            ..CorePhase::default()
        };
        // A hold to 2 s, then an edit whose requests come at the hold's last instant.
        let r = CoreReport {
            times_us: vec![1_000_000, 2_000_000, 2_000_000, 2_000_000, 3_000_000],
            phases: vec![
                phase("hold", 0, 2_000_000),
                phase("edit", 2_000_000, 3_000_000),
            ],
            ..CoreReport::default()
        };
        let w = Duration::from_secs(10);
        assert_eq!(r.max_in_window_between(w, 0, 2_000_000), 1);
        // The last phase keeps its end.
        assert_eq!(r.max_in_window_between(w, 2_000_000, 3_000_000), 4);
        assert!(
            in_phase(5, 5, 5, 5),
            "a run's last phase of no length keeps its instant"
        );
        assert!(!in_phase(5, 5, 5, 6));
    }

    #[test]
    fn an_xr_counts_stale_once_it_has_been_stale_for_the_grace() {
        let r = CoreReport {
            stale: vec!["a".to_owned(), "b".to_owned()],
            stale_since_s: vec![100.0, 550.0],
            ended_s: 600.0,
            ..CoreReport::default()
        };
        assert_eq!(r.stale_after(Duration::from_secs(60)), ["a"]);
        assert_eq!(r.stale_after(Duration::from_secs(50)), ["a", "b"]);
        assert_eq!(r.stale_after(Duration::from_secs(501)), Vec::<&str>::new());
    }
}
