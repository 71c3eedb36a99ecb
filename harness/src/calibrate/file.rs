//! The calibration file: each kind's calls per reconcile as a scenario's `calls` entry
//! (figures per path, the most calls of each operation per path, the measured samples),
//! which a profile's `calibration` names; and the lines the report prints of it.

use std::fmt::Write as _;

use crate::measure::per_reconcile::{CallStats, KindCalls, Path, PerReconcile};
use crate::scenario::Scenario;
use crate::scenario::kinds::GroupKind;

/// What the file says of how it was taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalibrationMeta {
    /// The scenario calibrated (its file).
    pub scenario: String,
    /// Where the provider ran: `embedded`, `process` or `cluster`.
    pub target: String,
    /// Resources per group.
    pub sample: u32,
    /// Polls held.
    pub polls: u32,
    /// When (RFC 3339).
    pub taken_at: String,
}

/// A kind's figures: connect's most calls; the most calls of a steady observe (of the first
/// observe when no resource was polled twice); the most writes of a create, an update and a
/// delete. `None` for a path the sample did not take.
struct Figures {
    connect: u64,
    observe: Option<u64>,
    create: Option<u64>,
    update: Option<u64>,
    delete: Option<u64>,
}

fn figures(k: &KindCalls) -> Figures {
    Figures {
        connect: k.connect.max,
        observe: k
            .path(Path::Observe)
            .or_else(|| k.path(Path::FirstObserve))
            .map(|s| s.max),
        create: k.path(Path::Create).map(|s| s.writes_max),
        update: k.path(Path::Update).map(|s| s.writes_max),
        delete: k.path(Path::Delete).map(|s| s.writes_max),
    }
}

/// `apiVersion` and kind of the group kind `label` names in `s`.
fn kind_of<'a>(s: &'a Scenario, label: &str) -> Option<&'a GroupKind> {
    s.groups
        .iter()
        .map(|g| &g.kind)
        .find(|k| k.to_string() == label)
}

fn num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round())
    } else {
        format!("{v:.4}")
    }
}

fn stats_line(s: &CallStats) -> String {
    format!(
        "{{reconciles: {}, mean: {}, min: {}, max: {}, sd: {}}}",
        s.reconciles,
        num(s.mean),
        s.min,
        s.max,
        num(s.sd)
    )
}

/// The calibration file of `per` (taken on the scenario `s`'s sample).
#[must_use]
pub fn calibration_yaml(s: &Scenario, per: &PerReconcile, meta: &CalibrationMeta) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Cloud calls per reconcile, by kind, path and operation, measured by `harness calibrate`.\n# A profile names this file (`calibration: FILE`); docs/budget.md §10 says how the budget\n# uses it, scenarios/README.md how it is taken."
    );
    let _ = writeln!(out, "scenario: {:?}", meta.scenario);
    let _ = writeln!(out, "target: {}", meta.target);
    let _ = writeln!(out, "sample: {}", meta.sample);
    let _ = writeln!(out, "polls: {}", meta.polls);
    let _ = writeln!(out, "takenAt: {:?}", meta.taken_at);
    let _ = writeln!(out, "calls:");
    for k in &per.kinds {
        let Some(kind) = kind_of(s, &k.kind) else {
            continue;
        };
        match kind {
            GroupKind::Api(a) => {
                let _ = writeln!(
                    out,
                    "  - apiVersion: {}\n    kind: {}",
                    a.api_version(),
                    a.kind
                );
            }
            GroupKind::Short(short) => {
                let _ = writeln!(out, "  - kind: {short:?}");
            }
        }
        let f = figures(k);
        let _ = writeln!(out, "    connect: {}", f.connect);
        for (name, v) in [
            ("observe", f.observe),
            ("create", f.create),
            ("update", f.update),
            ("delete", f.delete),
        ] {
            match v {
                Some(v) => {
                    let _ = writeln!(out, "    {name}: {v}");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "    {name}: 0  # not measured: no reconcile of the sample took this path"
                    );
                }
            }
        }
        let _ = writeln!(out, "    operations:");
        let mut paths: Vec<(&str, &CallStats)> = vec![("connect", &k.connect)];
        paths.extend(
            Path::ALL
                .iter()
                .filter_map(|p| Some((p.as_str(), k.path(*p)?))),
        );
        for (name, st) in &paths {
            let ops: Vec<String> = st
                .operations_max
                .iter()
                .map(|(op, n)| format!("{op:?}: {n}"))
                .collect();
            let _ = writeln!(out, "      {name}: {{{}}}", ops.join(", "));
        }
        let _ = writeln!(out, "    measured:");
        for (name, st) in &paths {
            let _ = writeln!(out, "      {name}: {}", stats_line(st));
        }
    }
    out
}

/// One line per kind and path taken, and one for Connect: `Bucket.s3.aws.m.loadtest.dev
/// steady observe: 15 calls: GetBucketAcl 1, …; n = 9`.
#[must_use]
pub fn summary(per: &PerReconcile) -> Vec<String> {
    let mut lines = Vec::new();
    for k in &per.kinds {
        for p in Path::ALL {
            if let Some(st) = k.path(p) {
                lines.push(format!(
                    "{} {}: {}; n = {}",
                    k.kind,
                    p.words(),
                    st.describe(),
                    st.reconciles
                ));
            }
        }
        lines.push(format!(
            "{} connect: {} per reconcile; n = {}",
            k.kind,
            k.connect.describe(),
            k.connect.reconciles
        ));
        if k.overlapped > 0 || k.empty > 0 {
            lines.push(format!(
                "{}: {} reconciles overlapped others (their unnamed calls may be another's), {} made no call",
                k.kind, k.overlapped, k.empty
            ));
        }
    }
    lines
}
