//! What core did in a run, read at the source: its requests in the API server's journal
//! (by its `User-Agent`), its function calls (its `function_run_function_request_total`),
//! each XR controller's breaker (`circuit_breaker_*`), and each XR's time to Ready beside
//! its slowest composed resource's, from the harness's watches.

use std::collections::BTreeMap;

use super::embedded::EmbeddedCore;
use super::xrs::XrLog;
use crate::result::core::{BreakerCounts, CoreReport, CoreRequests, XrTiming};
use crate::run::clock::Epoch;
use crate::run::source::watches::SeenMap;

/// Whether `name` was generated from XR `xr`'s prefix (`<xr>-` and five characters, as
/// core's name generator makes them).
fn composed_of(name: &str, xr: &str) -> bool {
    name.strip_prefix(xr)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|suffix| suffix.len() == 5 && !suffix.contains('-'))
}

/// Reads what `core` did: the journal's entries since the start, from `apiserver` placed
/// on the run's clock by `epoch`; the XRs from `log` and what the watches `seen`.
#[must_use]
pub fn report(
    core: &EmbeddedCore,
    apiserver: &mock_apiserver::ApiServer,
    epoch: Epoch,
    (log, seen, composed_kinds): (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut times_us = Vec::new();
    for e in apiserver.journal().since(0) {
        if !e.user_agent.starts_with(super::CORE_USER_AGENT_PREFIX) {
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
    let function_calls = core.metrics.requests_by_method().into_iter().fold(
        BTreeMap::new(),
        |mut m, ((f, _), n)| {
            *m.entry(f).or_default() += n;
            m
        },
    );
    let breakers = core
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
    let mut xrs = Vec::new();
    let mut stale = Vec::new();
    #[allow(clippy::cast_precision_loss)]
    let secs = |from: u64, to: u64| to.saturating_sub(from) as f64 / 1e6;
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
        }
        xrs.push(XrTiming {
            group: r.group.clone(),
            name: r.key.1.clone(),
            ready_s: xr.and_then(|s| s.ready_us).map(|t| secs(created, t)),
            slowest_composed_s: slowest.map(|t| secs(created, t)),
            composed: composed.len(),
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
        user_agent: super::CORE_USER_AGENT_PREFIX.to_owned(),
        requests: times_us.len() as u64,
        by_verb,
        times_us,
        function_calls,
        breakers,
        xrs,
        stale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_composed_name_is_the_xr_s_and_five_characters() {
        assert!(composed_of("xr-smoke-1-bcd2f", "xr-smoke-1"));
        assert!(!composed_of("xr-smoke-10-bcd2f", "xr-smoke-1"));
        assert!(!composed_of("xr-smoke-1-bcd2", "xr-smoke-1"));
    }
}
