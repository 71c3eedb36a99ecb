//! The metrics a comparison compares, read from each result: calls by phase, action and
//! operation, calls per reconcile, peaks, time to Ready, core's, budget use, and the
//! settings that differ.

use std::collections::{BTreeMap, BTreeSet};

use super::Side;
use crate::measure::per_reconcile::Path;
use crate::predict::fmt_num;
use crate::result::RunResult;

/// Every operation either run saw in a phase, so that an operation one run did not make
/// counts as 0 calls rather than as missing.
pub(super) fn ops(a: &RunResult, b: &RunResult) -> BTreeMap<String, BTreeSet<String>> {
    let mut ops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in a.phases.iter().chain(&b.phases) {
        ops.entry(p.name.clone())
            .or_default()
            .extend(p.calls.keys().cloned());
    }
    ops
}

/// The phases both runs counted calls by operation in: there those rows stand in for the
/// calls by action, one row per difference (not `get` beside `generic:get`).
pub(super) fn by_operation(a: &RunResult, b: &RunResult) -> BTreeSet<String> {
    a.phases
        .iter()
        .filter(|p| !p.operations.is_empty())
        .filter(|p| {
            b.phases
                .iter()
                .any(|q| q.name == p.name && !q.operations.is_empty())
        })
        .map(|p| p.name.clone())
        .collect()
}

pub(super) fn metrics(
    r: &RunResult,
    ops: &BTreeMap<String, BTreeSet<String>>,
    by_operation: &BTreeSet<String>,
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for p in &r.phases {
        let by_action = if by_operation.contains(&p.name) {
            None
        } else {
            ops.get(&p.name)
        };
        for op in by_action.into_iter().flatten() {
            let n = p.calls.get(op).copied().unwrap_or(0);
            m.insert(format!("calls {} {op}", p.name), n as f64);
        }
        for k in &p.peaks {
            m.insert(
                format!("peak {} per {}s", p.name, fmt_num(k.window_s)),
                k.count as f64,
            );
        }
        if let Some(t) = &p.ttr {
            for (q, v) in &t.quantiles {
                m.insert(format!("ttr {} p{}", p.name, q * 100.0), *v);
            }
        }
        m.insert(format!("throttles {}", p.name), p.throttles as f64);
        m.insert(format!("api requests {}", p.name), p.api_requests as f64);
    }
    m.insert("throttles total".into(), r.throttles() as f64);
    if let Some(c) = &r.core {
        core_metrics(c, &mut m);
    }
    m
}

/// Crossplane core's figures of a composite run: its API requests (all, and the server-side
/// applies), function calls per function, the breakers' opens and dropped events, the time
/// circuits spent open, the XRs Ready and stale at the end, and the XRs' time to Ready
/// (compared only when both runs have Ready XRs).
pub(super) fn core_metrics(c: &crate::result::core::CoreReport, m: &mut BTreeMap<String, f64>) {
    m.insert("core api requests".into(), c.requests as f64);
    m.insert("core api patches".into(), c.patches() as f64);
    for (f, n) in &c.function_calls {
        m.insert(format!("core function calls {f}"), *n as f64);
    }
    m.insert(
        "core function calls total".into(),
        c.total_function_calls() as f64,
    );
    m.insert("core breaker opens".into(), c.breaker_opens() as f64);
    m.insert(
        "core breaker allowed events".into(),
        c.breakers
            .iter()
            .map(|b| b.allowed + b.half_open_allowed)
            .sum::<u64>() as f64,
    );
    m.insert(
        "core breaker dropped events".into(),
        c.breakers.iter().map(|b| b.dropped).sum::<u64>() as f64,
    );
    m.insert(
        "core breaker open s (all XRs)".into(),
        c.xrs.iter().map(|x| x.open_s).sum(),
    );
    m.insert(
        "core XRs not Ready".into(),
        c.xrs.iter().filter(|x| x.ready_s.is_none()).count() as f64,
    );
    m.insert("core XRs stale".into(), c.stale.len() as f64);
    for q in [0.5, 0.99] {
        if let Some(v) = c.ready_quantile(q) {
            m.insert(format!("{XR_TTR}p{}", q * 100.0), v);
        }
    }
}

/// The prefix of the XRs' time-to-Ready rows.
pub(super) const XR_TTR: &str = "ttr XRs ";

/// The checks whose limit is a budget of calls or requests in a window.
pub(super) const BUDGETS: [&str; 6] = [
    "cloudCalls",
    "apiRequests",
    "steadyRate",
    "operationCalls",
    "coreApiRequests",
    "functionCalls",
];

/// Each budget assertion's use of its limit, observed ÷ limit in percent: what a settings
/// change must not use worse (time to Ready gates by its own rows).
pub(super) fn budget_use(r: &RunResult) -> BTreeMap<String, f64> {
    r.verdicts
        .iter()
        .filter(|v| BUDGETS.contains(&v.check.as_str()))
        .filter(|v| v.upper && v.limit.is_finite() && v.limit > 0.0 && v.observed.is_finite())
        .map(|v| {
            (
                format!("budget use {} %", v.name),
                v.observed / v.limit * 100.0,
            )
        })
        .collect()
}

/// The settings that differ, `name: old → new` (results written before settings were
/// recorded compare by their settings line).
pub(super) fn settings_changed(old: &RunResult, new: &RunResult) -> Vec<String> {
    let (a, b) = (&old.scenario.setting_lines, &new.scenario.setting_lines);
    let split = |l: &String| {
        l.split_once(": ")
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .unwrap_or_else(|| (l.clone(), String::new()))
    };
    let a: BTreeMap<String, String> = a.iter().map(split).collect();
    let b: BTreeMap<String, String> = b.iter().map(split).collect();
    let mut out: Vec<String> = a
        .keys()
        .chain(b.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let side = |m: &BTreeMap<String, String>| {
                m.get(k).cloned().unwrap_or_else(|| "unset".to_owned())
            };
            format!("{k}: {} → {}", side(&a), side(&b))
        })
        .collect();
    if out.is_empty() {
        let (sa, sb) = (Side::of(old).settings, Side::of(new).settings);
        if sa != sb {
            out.push(format!("settings: {sa} → {sb}"));
        }
    }
    out
}

/// Calls by operation per phase, both runs' operations in each (0 when one made none), for
/// the phases where both runs counted operations (results before they did have none).
pub(super) fn operation_metrics(old: &RunResult, new: &RunResult) -> [BTreeMap<String, f64>; 2] {
    let mut out = [BTreeMap::new(), BTreeMap::new()];
    for po in &old.phases {
        let Some(pn) = new.phases.iter().find(|p| p.name == po.name) else {
            continue;
        };
        if po.operations.is_empty() || pn.operations.is_empty() {
            continue;
        }
        let ops: BTreeSet<&String> = po.operations.keys().chain(pn.operations.keys()).collect();
        for op in ops {
            let key = format!("calls {} {op}", po.name);
            for (m, p) in out.iter_mut().zip([po, pn]) {
                m.insert(
                    key.clone(),
                    p.operations.get(op).copied().unwrap_or(0) as f64,
                );
            }
        }
    }
    out
}

/// Mean calls per reconcile per kind and path, and by operation within each path, for the
/// (kind, path) pairs both runs took; Connect's per reconcile over the provider.
pub(super) fn per_reconcile_metrics(
    old: &RunResult,
    new: &RunResult,
) -> [BTreeMap<String, f64>; 2] {
    let mut out = [BTreeMap::new(), BTreeMap::new()];
    let (Some(a), Some(b)) = (&old.calls_per_reconcile, &new.calls_per_reconcile) else {
        return out;
    };
    for ka in &a.kinds {
        let Some(kb) = b.kinds.iter().find(|k| k.kind == ka.kind) else {
            continue;
        };
        for path in Path::ALL {
            let (Some(sa), Some(sb)) = (ka.path(path), kb.path(path)) else {
                continue;
            };
            let base = format!("per reconcile {} {}", ka.kind, path.as_str());
            out[0].insert(base.clone(), sa.mean);
            out[1].insert(base.clone(), sb.mean);
            let ops: BTreeSet<&String> = sa.operations.keys().chain(sb.operations.keys()).collect();
            for op in ops {
                let key = format!("{base} {op}");
                out[0].insert(key.clone(), sa.operations.get(op).copied().unwrap_or(0.0));
                out[1].insert(key, sb.operations.get(op).copied().unwrap_or(0.0));
            }
        }
    }
    for (m, per) in out.iter_mut().zip([a, b]) {
        if per.reconciles > 0 {
            m.insert(
                "per reconcile connect".to_owned(),
                per.connect_calls as f64 / per.reconciles as f64,
            );
        }
    }
    if !(out[0].contains_key("per reconcile connect")
        && out[1].contains_key("per reconcile connect"))
    {
        out[0].remove("per reconcile connect");
        out[1].remove("per reconcile connect");
    }
    out
}
