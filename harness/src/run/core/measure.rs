//! What core did in a run, read at the source: its requests in the API server's journal
//! (by its `User-Agent`), its function calls (its `function_run_function_request_total`),
//! each XR controller's breaker (`circuit_breaker_*`), and each XR's time to Ready beside
//! its slowest composed resource's, from the harness's watches.

use std::collections::BTreeMap;

use super::embedded::{EmbeddedCore, XrdBreaker};
use super::xrs::{XrLog, composed_of};
use crate::result::core::{BreakerCounts, CoreReport, CoreRequests, OpenSpan, XrTiming};
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
        breakers: &core.breakers,
    };
    report_of(&side, apiserver, clocks, xrs)
}

/// What a report reads from core itself, wherever it runs.
pub struct CoreSide<'a> {
    /// The start of the `User-Agent` of its requests.
    pub user_agent: &'a str,
    /// Its function calls per function.
    pub function_calls: BTreeMap<String, u64>,
    /// Its breakers (none when they cannot be read: a core in another process).
    pub breakers: &'a [XrdBreaker],
}

/// [`report`] from what `side` gives of core.
#[must_use]
pub fn report_of(
    side: &CoreSide<'_>,
    apiserver: &mock_apiserver::ApiServer,
    (epoch, clock): (Epoch, RunClock),
    (log, seen, composed_kinds): (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let end_us = clock.now().0;
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut times_us = Vec::new();
    for e in apiserver.journal().since(0) {
        if !e.user_agent.starts_with(side.user_agent) {
            continue;
        }
        let resource = if e.group.is_empty() {
            e.resource.clone()
        } else {
            match e.resource.split_once('/') {
                Some((plural, sub)) => format!("{plural}.{}/{sub}", e.group),
                None => format!("{}.{}", e.resource, e.group),
            }
        };
        *counts
            .entry((e.verb.as_str().to_owned(), resource))
            .or_default() += 1;
        if let Some(at) = epoch.to_run(e.at_us) {
            times_us.push(at.0);
        }
    }
    times_us.sort_unstable();
    let mut by_verb: Vec<CoreRequests> = counts
        .into_iter()
        .map(|((verb, resource), count)| CoreRequests {
            verb,
            resource,
            count,
        })
        .collect();
    by_verb.sort_by(|a, b| b.count.cmp(&a.count).then(a.verb.cmp(&b.verb)));
    let function_calls = side.function_calls.clone();
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
    let mut open_now: BTreeMap<String, usize> = BTreeMap::new();
    for b in side.breakers {
        for t in b.realtime.transitions() {
            let at = clock.at(t.at).0;
            let xr = t.target.name.clone();
            if t.opened {
                open_now.insert(xr.clone(), open_spans.len());
                open_spans.push(OpenSpan {
                    xrd: b.xrd.clone(),
                    xr,
                    opened_s: secs(0, at),
                    closed_s: None,
                });
            } else if let Some(i) = open_now.remove(&xr) {
                open_spans[i].closed_s = Some(secs(0, at));
            }
        }
    }
    let mut open_by_xr: BTreeMap<&str, (u32, f64)> = BTreeMap::new();
    for s in &open_spans {
        let until = s.closed_s.unwrap_or_else(|| {
            let end = deleted.get(s.xr.as_str()).copied().unwrap_or(end_us);
            secs(0, end)
        });
        let e = open_by_xr.entry(s.xr.as_str()).or_default();
        e.0 += 1;
        e.1 += (until - s.opened_s).max(0.0);
    }
    let mut xrs = Vec::new();
    let mut stale = Vec::new();
    let mut stale_since_s = Vec::new();
    for r in log.records.values() {
        let Some(created) = r.created_us else {
            continue;
        };
        let xr = seen.get(&r.key);
        let composed: Vec<_> = seen
            .iter()
            .filter(|((kind, name), _)| {
                composed_kinds.contains(kind) && composed_of(name, &r.key.1)
            })
            .map(|(_, s)| s)
            .collect();
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
    let phases = log
        .phases
        .iter()
        .map(|p| {
            let mut p = p.clone();
            p.requests = times_us
                .iter()
                .filter(|t| (p.start_us..=p.end_us).contains(*t))
                .count() as u64;
            p
        })
        .collect();
    CoreReport {
        phases,
        user_agent: side.user_agent.to_owned(),
        requests: times_us.len() as u64,
        by_verb,
        times_us,
        function_calls,
        breakers,
        xrs,
        stale,
        stale_since_s,
        open_spans,
        ended_s: secs(0, end_us),
        unmeasured: BTreeMap::new(),
    }
}
