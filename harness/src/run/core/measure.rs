//! What core did in a run, read at the source: its requests in the API server's journal
//! (by its `User-Agent`), its function calls (its `function_run_function_request_total`),
//! each XR controller's breaker (`circuit_breaker_*`), and each XR's time to Ready beside
//! its slowest composed resource's, from the harness's watches.

use std::collections::BTreeMap;

use composer::function::FunctionMetrics;

use super::embedded::{EmbeddedCore, XrdBreaker};
use super::tally::composed_by_xr;
use super::xrs::XrLog;
use crate::result::core::{
    BreakerCounts, CoreReport, CoreRequests, FunctionLatency, OpenSpan, XrTiming, in_phase,
};
use crate::run::clock::{Epoch, RunClock};
use crate::run::source::watches::SeenMap;

/// Reads what `core` did: the journal's entries since the start, from `apiserver` placed
/// on the run's clock by `epoch`; the XRs from `log` and what the watches `seen`; the
/// breakers' opens and closes placed on the run's `clock`, which also says when the run
/// ended (now).
#[must_use]
pub fn report(
    core: &EmbeddedCore,
    apiserver: &mock_apiserver::ApiServer,
    clocks: (Epoch, RunClock),
    xrs: (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let function_calls = core.metrics.requests_by_method().into_iter().fold(
        BTreeMap::new(),
        |mut m, ((f, _), n)| {
            *m.entry(f).or_default() += n;
            m
        },
    );
    let side = CoreSide {
        user_agent: super::CORE_USER_AGENT_PREFIX,
        function_calls,
        latency: latency(&core.metrics),
        breakers: &core.breakers,
    };
    report_of(&side, &apiserver.journal().since(0), clocks, xrs)
}

/// Core's function latency so far, per function: its responses of every code summed.
#[must_use]
pub fn latency(metrics: &FunctionMetrics) -> FunctionLatency {
    let mut l = FunctionLatency::default();
    for (labels, n) in metrics.responses() {
        *l.responses.entry(labels.function.clone()).or_default() += n.count;
        *l.seconds.entry(labels.function.clone()).or_default() += n.seconds;
        let sum = l
            .buckets
            .entry(labels.function)
            .or_insert_with(|| vec![0; n.buckets.len()]);
        for (into, b) in sum.iter_mut().zip(n.buckets) {
            *into += b;
        }
    }
    l
}

/// What a report reads from core itself, wherever it runs.
pub struct CoreSide<'a> {
    /// The start of the `User-Agent` of its requests.
    pub user_agent: &'a str,
    /// Its function calls per function.
    pub function_calls: BTreeMap<String, u64>,
    /// Its functions' responses, their seconds and its latency histogram per function
    /// (empty when they cannot be read).
    pub latency: FunctionLatency,
    /// Its breakers (none when they cannot be read: a core in another process).
    pub breakers: &'a [XrdBreaker],
}

/// [`report`] from what `side` gives of core and the API server's `journal` (its entries
/// since the run started; those of other clients are skipped), placed on the run's clock
/// by `epoch`.
#[must_use]
pub fn report_of(
    side: &CoreSide<'_>,
    journal: &[mock_apiserver::Entry],
    (epoch, clock): (Epoch, RunClock),
    (log, seen, composed_kinds): (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let end_us = clock.now().0;
    // Per verb and resource: the requests, and of them the no-op PATCHes.
    let mut counts: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    let (mut patches_changed, mut patches_no_op) = (0, 0);
    let mut times_us = Vec::new();
    for e in journal {
        if !e.user_agent.starts_with(side.user_agent) {
            continue;
        }
        let resource = if e.group.is_empty() {
            e.resource.to_string()
        } else {
            match e.resource.split_once('/') {
                Some((plural, sub)) => format!("{plural}.{}/{sub}", e.group),
                None => format!("{}.{}", e.resource, e.group),
            }
        };
        let c = counts
            .entry((e.verb.as_str().to_owned(), resource))
            .or_default();
        c.0 += 1;
        match e.changed {
            Some(true) => patches_changed += 1,
            Some(false) => {
                patches_no_op += 1;
                c.1 += 1;
            }
            None => {}
        }
        if let Some(at) = epoch.to_run(e.at_us) {
            times_us.push(at.0);
        }
    }
    times_us.sort_unstable();
    let mut by_verb: Vec<CoreRequests> = counts
        .into_iter()
        .map(|((verb, resource), (count, no_op))| CoreRequests {
            verb,
            resource,
            count,
            no_op,
        })
        .collect();
    by_verb.sort_by(|a, b| b.count.cmp(&a.count).then(a.verb.cmp(&b.verb)));
    let function_calls = side.function_calls.clone();
    let FunctionLatency {
        responses: function_responses,
        seconds: function_seconds,
        buckets: function_buckets,
    } = side.latency.clone();
    let breakers = side
        .breakers
        .iter()
        .map(|b| {
            let m = b.realtime.metrics();
            BreakerCounts {
                xrd: b.xrd.clone(),
                opens: m.opens,
                closes: m.closes,
                allowed: m.allowed,
                dropped: m.dropped,
                half_open_allowed: m.half_open_allowed,
            }
        })
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let secs = |from: u64, to: u64| to.saturating_sub(from) as f64 / 1e6;
    // Each circuit's spans open, from its opens and closes in order: a span still open at
    // the end runs to the XR's delete (which resets its circuit) or to the end.
    let deleted: BTreeMap<&str, u64> = log
        .records
        .values()
        .filter_map(|r| r.deleted_us.map(|d| (r.key.1.as_str(), d)))
        .collect();
    let mut open_spans: Vec<OpenSpan> = Vec::new();
    // Each span's half-open probes, by index into `open_spans`, and each breaker's
    // half-open interval.
    let mut probes_of: Vec<Vec<f64>> = Vec::new();
    let mut interval_of: Vec<f64> = Vec::new();
    for b in side.breakers {
        let interval = b
            .realtime
            .config()
            .half_open_interval
            .to_std()
            .as_secs_f64();
        let mut open_now: BTreeMap<String, usize> = BTreeMap::new();
        let probes = b.realtime.probes();
        let mut next_probe = 0;
        for t in b.realtime.transitions() {
            // The probes before this transition belong to the spans open then.
            while let Some(p) = probes.get(next_probe).filter(|p| p.at <= t.at) {
                if let Some(&i) = open_now.get(&p.target.name) {
                    probes_of[i].push(secs(0, clock.at(p.at).0));
                }
                next_probe += 1;
            }
            let at = clock.at(t.at).0;
            let xr = t.target.name.clone();
            if t.opened {
                open_now.insert(xr.clone(), open_spans.len());
                open_spans.push(OpenSpan {
                    xrd: b.xrd.clone(),
                    xr,
                    opened_s: secs(0, at),
                    closed_s: None,
                    triggered_by: t.triggered_by.clone(),
                    half_open_s: Vec::new(),
                });
                probes_of.push(Vec::new());
                interval_of.push(interval);
            } else if let Some(i) = open_now.remove(&xr) {
                open_spans[i].closed_s = Some(secs(0, at));
            }
        }
        for p in &probes[next_probe..] {
            if let Some(&i) = open_now.get(&p.target.name) {
                probes_of[i].push(secs(0, clock.at(p.at).0));
            }
        }
    }
    let span_end = |s: &OpenSpan| {
        s.closed_s.unwrap_or_else(|| {
            let end = deleted.get(s.xr.as_str()).copied().unwrap_or(end_us);
            secs(0, end)
        })
    };
    for (i, s) in open_spans.iter_mut().enumerate() {
        let until = span_end(s);
        s.half_open_s = half_open(s.opened_s, &probes_of[i], until, interval_of[i]);
    }
    let mut open_by_xr: BTreeMap<&str, (u32, f64)> = BTreeMap::new();
    for s in &open_spans {
        let until = span_end(s);
        let e = open_by_xr.entry(s.xr.as_str()).or_default();
        e.0 += 1;
        e.1 += (until - s.opened_s).max(0.0);
    }
    let mut xrs = Vec::new();
    let mut stale = Vec::new();
    let mut stale_since_s = Vec::new();
    let by_xr = composed_by_xr(seen, composed_kinds);
    for r in log.records.values() {
        let Some(created) = r.created_us else {
            continue;
        };
        let xr = seen.get(&r.key);
        let composed = by_xr.get(r.key.1.as_str()).map_or(&[][..], Vec::as_slice);
        let slowest = if composed.is_empty() || composed.iter().any(|s| s.ready_us.is_none()) {
            None
        } else {
            composed.iter().filter_map(|s| s.ready_us).max()
        };
        let live = r.deleted_us.is_none() && xr.is_some_and(|s| s.gone_us.is_none());
        if live
            && !composed.is_empty()
            && composed.iter().all(|s| s.ready)
            && !xr.is_some_and(|s| s.ready)
        {
            stale.push(r.key.1.clone());
            // Stale since its last composed resource first read Ready.
            let since = composed
                .iter()
                .filter_map(|s| s.ready_us)
                .max()
                .unwrap_or(end_us);
            stale_since_s.push(secs(0, since));
        }
        let (opens, open_s) = open_by_xr
            .get(r.key.1.as_str())
            .copied()
            .unwrap_or_default();
        xrs.push(XrTiming {
            group: r.group.clone(),
            name: r.key.1.clone(),
            ready_s: xr.and_then(|s| s.ready_us).map(|t| secs(created, t)),
            slowest_composed_s: slowest.map(|t| secs(created, t)),
            composed: composed.len(),
            opens,
            open_s,
        });
    }
    let last_end = log.phases.iter().map(|p| p.end_us).max().unwrap_or(end_us);
    let phases = log
        .phases
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.requests = times_us
                .iter()
                .filter(|&&t| in_phase(t, p.start_us, p.end_us, last_end))
                .count() as u64;
            p
        })
        .collect();
    CoreReport {
        phases,
        user_agent: side.user_agent.to_owned(),
        requests: times_us.len() as u64,
        by_verb,
        patches_changed,
        patches_no_op,
        times_us,
        function_calls,
        function_responses,
        function_seconds,
        function_buckets,
        requests_per_bin: Vec::new(),
        bin_s: 0.0,
        breakers,
        xrs,
        stale,
        stale_since_s,
        open_spans,
        ended_s: secs(0, end_us),
        unmeasured: BTreeMap::new(),
    }
}

/// The half-open spans of a circuit open from `opened` to `until` whose half-open `probes`
/// passed at the given times: after the open and after each probe the circuit is open for
/// `interval`, then half-open until the next probe (or `until`).
fn half_open(opened: f64, probes: &[f64], until: f64, interval: f64) -> Vec<[f64; 2]> {
    let mut out = Vec::new();
    let anchors = std::iter::once(opened).chain(probes.iter().copied());
    let nexts = probes.iter().copied().chain(std::iter::once(until));
    for (a, next) in anchors.zip(nexts) {
        let from = a + interval;
        if from < next {
            out.push([from, next]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::half_open;

    #[test]
    fn a_circuit_is_half_open_from_an_interval_after_its_open_or_probe_to_the_next_probe() {
        // Open at 10 s, probes at 45 s and 80 s, closed at 100 s, interval 30 s: half-open
        // 40–45, 75–80; after the last probe the close at 100 s comes before 110 s.
        assert_eq!(
            half_open(10.0, &[45.0, 80.0], 100.0, 30.0),
            [[40.0, 45.0], [75.0, 80.0]]
        );
        // No probe: half-open from 40 s to the close.
        assert_eq!(half_open(10.0, &[], 300.0, 30.0), [[40.0, 300.0]]);
        // Closed within the interval: never half-open.
        assert!(half_open(10.0, &[], 20.0, 30.0).is_empty());
    }
}
