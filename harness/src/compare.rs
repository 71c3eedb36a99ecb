//! A/B comparison of two results: calls per phase by action and by operation, calls per
//! reconcile by kind, path and operation, peak windowed rates, time-to-Ready quantiles,
//! throttles and API requests; a regression is a rise past a threshold.
//!
//! # Semantics
//! A comparison is only as good as its two runs, so [`compare`] first says whether they can
//! be compared at all ([`Problem`]): NEW must be complete and pass its assertions, OLD must be
//! complete, both must put the provider through the same workload (groups, phases, cloud,
//! assertions: [`crate::result::workload`]; the provider settings may differ, that is the
//! point of an A/B), and every metric must exist in both. The command exits 3 when any of
//! these fails, 1 on a regression, 0 otherwise.
//!
//! Runs whose settings differ (R, the poll interval, jitter, model, backoff, buckets per
//! scope, and what follows from them: the API client's limits, SDK attempts) compare as a
//! settings change: the header names each changed setting, every row is the effect of the
//! change, and only a worse use of a budget (observed ÷ limit of an assertion with an upper
//! limit, `budget use NAME`) or a slower time to Ready gates as a regression: more calls per
//! window after raising R is the change working, not a regression.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::measure::per_reconcile::Path;
use crate::predict::fmt_num;
use crate::result::RunResult;

/// One compared metric (for every metric here, higher is worse).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What.
    pub metric: String,
    /// Old value (None: the old run does not have it).
    pub old: Option<f64>,
    /// New value (None: the new run does not have it).
    pub new: Option<f64>,
    /// Past the threshold.
    pub regression: bool,
}

impl Row {
    /// Change in percent of the old value; ∞ for a rise from 0; None when a side is missing.
    #[must_use]
    pub fn change_pct(&self) -> Option<f64> {
        let (o, n) = (self.old?, self.new?);
        Some(if o == 0.0 {
            if n > 0.0 { f64::INFINITY } else { 0.0 }
        } else {
            (n - o) / o * 100.0
        })
    }
}

/// Why two results cannot be compared honestly.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// The new run stopped early or lost measurements.
    NewPartial(String),
    /// The new run failed assertions.
    NewFailed(Vec<String>),
    /// The old run stopped early or lost measurements.
    OldPartial(String),
    /// The runs put the provider through different workloads: the lines that differ.
    WorkloadDiffers {
        /// Lines only the old run has.
        old_only: Vec<String>,
        /// Lines only the new run has.
        new_only: Vec<String>,
    },
    /// Metrics that only one run has.
    MissingMetrics(Vec<String>),
}

impl Problem {
    fn text(&self) -> String {
        match self {
            Problem::NewPartial(why) => format!("NEW is partial: {why}"),
            Problem::NewFailed(names) => {
                format!(
                    "NEW failed {} assertion(s): {}",
                    names.len(),
                    names.join(", ")
                )
            }
            Problem::OldPartial(why) => format!("OLD is partial: {why}"),
            Problem::WorkloadDiffers { old_only, new_only } => {
                let mut t =
                    "the runs have different workloads (groups, phases, cloud or assertions)"
                        .to_owned();
                for l in old_only {
                    let _ = write!(t, "\n    OLD: {l}");
                }
                for l in new_only {
                    let _ = write!(t, "\n    NEW: {l}");
                }
                t
            }
            Problem::MissingMetrics(m) => {
                format!(
                    "{} metric(s) exist in one run only: {}",
                    m.len(),
                    m.join(", ")
                )
            }
        }
    }
}

/// One side of the comparison, for the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// `name (file)`.
    pub scenario: String,
    /// The provider settings, in one line.
    pub settings: String,
    /// The `--set`s, joined, or `none`.
    pub overrides: String,
    /// The commit, or `unknown`.
    pub commit: String,
    /// The start time, or `unknown`.
    pub started: String,
    /// The run's headline (PASS, FAIL, PARTIAL and why).
    pub outcome: String,
}

impl Side {
    fn of(r: &RunResult) -> Side {
        let st = &r.scenario.settings;
        Side {
            scenario: format!("{} ({})", r.scenario.name, r.scenario.file),
            settings: format!(
                "{} R={} poll {}s ±{}% min {}s",
                st.rate_limit_model,
                st.max_reconcile_rate,
                fmt_num(st.poll_interval_s),
                st.poll_jitter_percent,
                fmt_num(st.min_poll_interval_s)
            ),
            overrides: if r.scenario.overrides.is_empty() {
                "none".to_owned()
            } else {
                r.scenario.overrides.join(" ")
            },
            commit: r.run.commit.clone().unwrap_or_else(|| "unknown".to_owned()),
            started: r
                .run
                .started_at
                .clone()
                .unwrap_or_else(|| "unknown".to_owned()),
            outcome: r.headline(),
        }
    }
}

/// The comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The baseline.
    pub old: Side,
    /// The candidate.
    pub new: Side,
    /// Why the two cannot be compared (empty: they can).
    pub problems: Vec<Problem>,
    /// Every metric of either run, sorted (empty when the workloads differ).
    pub rows: Vec<Row>,
    /// The settings that differ, `name: old → new`.
    pub settings_changed: Vec<String>,
    /// The threshold (percent).
    pub max_regression_pct: f64,
}

impl Comparison {
    /// The rows that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.regression)
    }

    /// Whether the two runs can be compared (no [`Problem`]).
    #[must_use]
    pub fn comparable(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every operation either run saw in a phase, so that an operation one run did not make
/// counts as 0 calls rather than as missing.
fn ops(a: &RunResult, b: &RunResult) -> BTreeMap<String, BTreeSet<String>> {
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
fn by_operation(a: &RunResult, b: &RunResult) -> BTreeSet<String> {
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

fn metrics(
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
fn core_metrics(c: &crate::result::core::CoreReport, m: &mut BTreeMap<String, f64>) {
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
const XR_TTR: &str = "ttr XRs ";

/// The checks whose limit is a budget of calls or requests in a window.
const BUDGETS: [&str; 6] = [
    "cloudCalls",
    "apiRequests",
    "steadyRate",
    "operationCalls",
    "coreApiRequests",
    "functionCalls",
];

/// Each budget assertion's use of its limit, observed ÷ limit in percent: what a settings
/// change must not use worse (time to Ready gates by its own rows).
fn budget_use(r: &RunResult) -> BTreeMap<String, f64> {
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
fn settings_changed(old: &RunResult, new: &RunResult) -> Vec<String> {
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
fn operation_metrics(old: &RunResult, new: &RunResult) -> [BTreeMap<String, f64>; 2] {
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
fn per_reconcile_metrics(old: &RunResult, new: &RunResult) -> [BTreeMap<String, f64>; 2] {
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

/// What a `deleting` line adds: why its span holds more than one reconcile.
const DELETING_NOTE: &str = "; reconciles that find it gone write nothing and share that span: \
a delete within 30 s of the create has the provider requeue such reconciles with backoff \
until the creation grace has passed, one Observe each (its requeue count shows them)";

/// What changed in calls per reconcile, a line per (kind, path) whose mean moved by at
/// least 0.05 calls, with the operations that moved: `Bucket.… observe: 15 → 19 calls per
/// reconcile (+4: s3:GetBucketX +4)`.
#[must_use]
pub fn per_reconcile_changes(c: &Comparison) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        let Some(rest) = r.metric.strip_prefix("per reconcile ") else {
            continue;
        };
        let (Some(o), Some(n)) = (r.old, r.new) else {
            continue;
        };
        let is_path = rest == "connect"
            || Path::ALL
                .iter()
                .any(|p| rest.ends_with(&format!(" {}", p.as_str())));
        if !is_path || (n - o).abs() < 0.05 {
            continue;
        }
        let ops: Vec<String> = c
            .rows
            .iter()
            .filter_map(|x| {
                let op = x.metric.strip_prefix(&format!("{} ", r.metric))?;
                let d = x.new? - x.old?;
                (d.abs() >= 0.05).then(|| {
                    format!(
                        "{op} {}{}",
                        if d > 0.0 { "+" } else { "" },
                        fmt_num((d * 100.0).round() / 100.0)
                    )
                })
            })
            .collect();
        let d = n - o;
        // A `deleting` span is not one reconcile: every reconcile that finds the deleted
        // resource gone and requeues writes nothing, so they all share the span that the
        // finalizer's removal ends (budget.md §10).
        let deleting = rest.ends_with(&format!(" {}", Path::Deleting.as_str()));
        out.push(format!(
            "{rest}: {} → {} calls {} ({}{}{}){}",
            fmt_num((o * 100.0).round() / 100.0),
            fmt_num((n * 100.0).round() / 100.0),
            if deleting {
                "per deleted resource, from its delete to its finalizer's removal"
            } else {
                "per reconcile"
            },
            if d > 0.0 { "+" } else { "" },
            fmt_num((d * 100.0).round() / 100.0),
            if ops.is_empty() {
                String::new()
            } else {
                format!(": {}", ops.join(", "))
            },
            if deleting { DELETING_NOTE } else { "" }
        ));
    }
    out
}

fn partial_reason(r: &RunResult) -> Option<String> {
    match &r.stopped {
        Some(s) => Some(s.headline()),
        None if r.partial => Some("measurements were lost (see the result's notes)".to_owned()),
        None => None,
    }
}

/// Compares `old` with `new`. A metric regresses when it rises by more than
/// `max_regression_pct` percent (any rise from 0 counts).
#[must_use]
pub fn compare(old: &RunResult, new: &RunResult, max_regression_pct: f64) -> Comparison {
    let mut problems = Vec::new();
    if let Some(why) = partial_reason(new) {
        problems.push(Problem::NewPartial(why));
    }
    let failed: Vec<String> = new
        .verdicts
        .iter()
        .filter(|v| !v.pass)
        .map(|v| v.name.clone())
        .collect();
    if !failed.is_empty() {
        problems.push(Problem::NewFailed(failed));
    }
    if let Some(why) = partial_reason(old) {
        problems.push(Problem::OldPartial(why));
    }
    let (wo, wn) = (&old.scenario.workload, &new.scenario.workload);
    let old_only: Vec<String> = wo.iter().filter(|l| !wn.contains(l)).cloned().collect();
    let new_only: Vec<String> = wn.iter().filter(|l| !wo.contains(l)).cloned().collect();
    let same_workload = old_only.is_empty() && new_only.is_empty();
    if !same_workload {
        problems.push(Problem::WorkloadDiffers { old_only, new_only });
    }
    let changed = settings_changed(old, new);
    let mut rows = Vec::new();
    if same_workload {
        let ops = ops(old, new);
        let by_op = by_operation(old, new);
        let (mut a, mut b) = (metrics(old, &ops, &by_op), metrics(new, &ops, &by_op));
        for [x, y] in [operation_metrics(old, new), per_reconcile_metrics(old, new)] {
            a.extend(x);
            b.extend(y);
        }
        if !changed.is_empty() {
            a.extend(budget_use(old));
            b.extend(budget_use(new));
        }
        // An XR time to Ready only one run has (the other's XRs never read Ready: the
        // `core XRs not Ready` row says so) is not a missing measurement.
        let both = |k: &String, other: &BTreeMap<String, f64>| {
            !k.starts_with(XR_TTR) || other.contains_key(k)
        };
        let b_keys = b.clone();
        a.retain(|k, _| both(k, &b_keys));
        let a_keys = a.clone();
        b.retain(|k, _| both(k, &a_keys));
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let mut missing = Vec::new();
        for k in keys {
            let row = Row {
                metric: k.clone(),
                old: a.get(k).copied(),
                new: b.get(k).copied(),
                regression: false,
            };
            // A settings change gates on budget use and time to Ready: its other rows are
            // its effect.
            let gated = changed.is_empty() || k.starts_with("budget use ") || k.starts_with("ttr ");
            let regression = match (row.old, row.new, row.change_pct()) {
                (Some(o), Some(n), Some(c)) => gated && n > o && c > max_regression_pct,
                _ => {
                    missing.push(k.clone());
                    false
                }
            };
            rows.push(Row { regression, ..row });
        }
        if !missing.is_empty() {
            problems.push(Problem::MissingMetrics(missing));
        }
    }
    Comparison {
        old: Side::of(old),
        new: Side::of(new),
        problems,
        rows,
        settings_changed: changed,
        max_regression_pct,
    }
}

fn header(o: &mut String, c: &Comparison) {
    let fields: [(&str, &str, &str); 6] = [
        ("scenario", &c.old.scenario, &c.new.scenario),
        ("settings", &c.old.settings, &c.new.settings),
        ("overrides", &c.old.overrides, &c.new.overrides),
        ("commit", &c.old.commit, &c.new.commit),
        ("started", &c.old.started, &c.new.started),
        ("outcome", &c.old.outcome, &c.new.outcome),
    ];
    for (name, old, new) in fields {
        let mark = if old == new { "" } else { "  (differs)" };
        let _ = writeln!(o, "{name:<10} OLD {old}");
        let _ = writeln!(o, "{:<10} NEW {new}{mark}", "");
    }
    if !c.settings_changed.is_empty() {
        let _ = writeln!(
            o,
            "settings changed: {}\nthe rows below are the effect of that change; only budget use and time to Ready gate as regressions",
            c.settings_changed.join("; ")
        );
    }
    o.push('\n');
}

/// The comparison as text: the header, why it cannot be trusted (if so), the table, and a
/// closing line.
#[must_use]
pub fn render(c: &Comparison) -> String {
    let mut o = String::new();
    header(&mut o, c);
    for p in &c.problems {
        let _ = writeln!(o, "not comparable: {}", p.text());
    }
    if !c.problems.is_empty() {
        o.push('\n');
    }
    if !c.rows.is_empty() {
        let w = c
            .rows
            .iter()
            .map(|r| r.metric.chars().count())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            o,
            "{:<w$}  {:>10}  {:>10}  {:>9}",
            "metric", "old", "new", "change"
        );
        let num = |v: Option<f64>| v.map_or_else(|| "missing".to_owned(), fmt_num);
        for r in &c.rows {
            let change = match r.change_pct() {
                None => "—".to_owned(),
                Some(x) if x.is_infinite() => "from 0".to_owned(),
                Some(x) => format!("{x:+.1}%"),
            };
            let _ = writeln!(
                o,
                "{:<w$}  {:>10}  {:>10}  {:>9}{}",
                r.metric,
                num(r.old),
                num(r.new),
                change,
                if r.regression { "  REGRESSION" } else { "" }
            );
        }
    }
    let changes = per_reconcile_changes(c);
    if !changes.is_empty() {
        let _ = writeln!(o, "\ncalls per reconcile that changed:");
        for l in changes {
            let _ = writeln!(o, "  {l}");
        }
        o.push('\n');
    }
    let n = c.regressions().count();
    if c.comparable() {
        let _ = writeln!(
            o,
            "{n} regression(s) past {}%",
            fmt_num(c.max_regression_pct)
        );
    } else {
        let _ = writeln!(
            o,
            "NOT COMPARABLE: {} problem(s) above; {n} regression(s) past {}% among the metrics both runs have",
            c.problems.len(),
            fmt_num(c.max_regression_pct)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side() -> Side {
        Side {
            scenario: "smoke (scenarios/smoke.yaml)".into(),
            settings: String::new(),
            overrides: "none".into(),
            commit: "unknown".into(),
            started: "unknown".into(),
            outcome: "PASS".into(),
        }
    }

    fn row(metric: &str, old: f64, new: f64) -> Row {
        Row {
            metric: metric.into(),
            old: Some(old),
            new: Some(new),
            regression: false,
        }
    }

    /// smoke at R = 10 against R = 20: the faster run deletes within the creation grace, and
    /// the provider requeues 2.17 more reconciles per Bucket that find it gone, one get each.
    #[test]
    fn a_deleting_span_is_reported_per_deleted_resource_not_per_reconcile() {
        let c = Comparison {
            old: side(),
            new: side(),
            problems: Vec::new(),
            rows: vec![
                row("per reconcile Bucket delete", 2.0, 2.0),
                row("per reconcile Bucket deleting", 1.0, 3.17),
                row("per reconcile Bucket deleting generic:get", 1.0, 3.17),
                row("per reconcile Bucket observe", 1.0, 1.5),
                row("per reconcile Bucket observe generic:get", 1.0, 1.5),
            ],
            settings_changed: vec!["maxReconcileRate: 10 → 20".into()],
            max_regression_pct: 10.0,
        };
        let lines = per_reconcile_changes(&c);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with(
                "Bucket deleting: 1 → 3.17 calls per deleted resource, from its delete to its \
                 finalizer's removal (+2.17: generic:get +2.17); reconciles that find it gone"
            ),
            "{}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "Bucket observe: 1 → 1.5 calls per reconcile (+0.5: generic:get +0.5)"
        );
    }
}
