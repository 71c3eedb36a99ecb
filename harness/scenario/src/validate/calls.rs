//! The `calls` section: cloud calls per reconcile of each kind, by path (the budget's c),
//! and what a calibration adds: calls by operation and the measured samples.

use std::collections::BTreeMap;

use super::checker::Checker;
use super::pos;
use crate::error::Problem;
use crate::kinds::{Catalogue, GroupKind};
use crate::model::{CALL_PATHS, CallDetail, Calls, Measured, ResourceGroup};
use crate::profile::Calibrated;
use crate::raw::{RawCalls, RawGroup};

/// One entry's figures and detail; `source` says where it was written.
fn entry(c: &mut Checker, e: &RawCalls, source: &str) -> (Calls, CallDetail) {
    let calls = Calls {
        observe: e.observe.value,
        create: e.create.value,
        update: e.update.value,
        delete: e.delete.value,
        connect: e.connect.as_ref().map_or(0, |v| v.value),
    };
    let mut detail = CallDetail {
        source: source.to_owned(),
        ..CallDetail::default()
    };
    let known = |path: &str| CALL_PATHS.contains(&path);
    if let Some(ops) = &e.operations {
        for (path, by_op) in &ops.value {
            if !known(path) {
                c.err(
                    pos(ops),
                    format!(
                        "operations: unknown path {path:?}, expected one of {}",
                        CALL_PATHS.join(", ")
                    ),
                );
                continue;
            }
            for (op, n) in by_op {
                if !op.contains(':') || op.starts_with(':') || op.ends_with(':') {
                    c.err(
                        pos(ops),
                        format!("operations.{path}: {op:?} is not service:Operation, expected such as s3:GetBucketTagging"),
                    );
                } else if !n.is_finite() || *n < 0.0 {
                    c.err(
                        pos(ops),
                        format!("operations.{path}.{op}: {n} is not a number of calls, expected a number ≥ 0"),
                    );
                }
            }
            detail.operations.insert(path.clone(), by_op.clone());
        }
    }
    if let Some(measured) = &e.measured {
        for (path, m) in &measured.value {
            if !known(path) {
                c.err(
                    pos(measured),
                    format!(
                        "measured: unknown path {path:?}, expected one of {}",
                        CALL_PATHS.join(", ")
                    ),
                );
                continue;
            }
            if !(m.mean.is_finite() && m.sd.is_finite() && m.sd >= 0.0 && m.min <= m.max)
                || (m.reconciles > 0
                    && !(m.min as f64 - 1e-9..=m.max as f64 + 1e-9).contains(&m.mean))
            {
                c.err(
                    pos(measured),
                    format!("measured.{path}: expected reconciles, min ≤ mean ≤ max and sd ≥ 0"),
                );
                continue;
            }
            detail.measured.insert(
                path.clone(),
                Measured {
                    reconciles: m.reconciles,
                    mean: m.mean,
                    min: m.min,
                    max: m.max,
                    sd: m.sd,
                },
            );
        }
    }
    (calls, detail)
}

/// A calibration file's entries, checked as the `calls` section's are; `file` names it.
///
/// # Errors
/// Every problem found.
pub(crate) fn calibration(raw: &[RawCalls], file: &str) -> Result<Vec<Calibrated>, Vec<Problem>> {
    let mut c = Checker::default();
    let out: Vec<Calibrated> = raw
        .iter()
        .map(|e| {
            let (calls, detail) = entry(&mut c, e, file);
            Calibrated {
                api_version: e.api_version.as_ref().map(|v| v.value.clone()),
                kind: e.kind.value.clone(),
                calls,
                detail,
            }
        })
        .collect();
    if c.problems.is_empty() {
        Ok(out)
    } else {
        Err(c.problems)
    }
}

/// Every group's kind's calls: its `calls` entry, else the profile's calibration of the
/// kind, else the sample figures for a short kind; a kind with `apiVersion` must have one.
pub(super) fn calls(
    c: &mut Checker,
    raw: &[RawCalls],
    (raw_groups, groups): (&[RawGroup], &[ResourceGroup]),
    catalogue: &Catalogue,
    (calibrated, purpose): (&[Calibrated], super::Purpose),
) -> (BTreeMap<GroupKind, Calls>, BTreeMap<GroupKind, CallDetail>) {
    let mut out = BTreeMap::new();
    let mut details = BTreeMap::new();
    for e in raw {
        let Some((kind, _)) =
            super::kinds::group_kind(c, catalogue, e.api_version.as_ref(), &e.kind)
        else {
            continue;
        };
        let (calls, detail) = entry(c, e, "the scenario's calls");
        if out.insert(kind.clone(), calls).is_some() {
            c.err(
                pos(&e.kind),
                format!("calls of {kind} are given twice, expected one entry per kind"),
            );
        }
        details.insert(kind, detail);
    }
    for g in groups {
        if out.contains_key(&g.kind) {
            continue;
        }
        if let Some(k) = calibrated.iter().find(|k| k.describes(&g.kind)) {
            out.insert(g.kind.clone(), k.calls);
            details.insert(g.kind.clone(), k.detail.clone());
            continue;
        }
        match &g.kind {
            GroupKind::Short(_) => {
                out.insert(g.kind.clone(), Calls::SAMPLE);
            }
            GroupKind::Api(_) if purpose == super::Purpose::Calibrate => {
                out.insert(
                    g.kind.clone(),
                    Calls {
                        observe: 0,
                        create: 0,
                        update: 0,
                        delete: 0,
                        connect: 0,
                    },
                );
            }
            GroupKind::Api(_) => {
                if let Some(r) = raw_groups.iter().find(|r| r.name.value == g.name) {
                    c.err(
                        pos(&r.kind),
                        format!(
                            "no cloud calls per reconcile for {}, expected a `calls` entry {{apiVersion, kind, observe, create, update, delete, connect}} (provider/README.md tables the AWS flavour's) or a profile `calibration` that has the kind (`harness calibrate` writes one)",
                            g.kind
                        ),
                    );
                }
            }
        }
    }
    (out, details)
}
