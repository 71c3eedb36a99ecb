//! Bounds per operation and per service (docs/budget.md §10.2): AWS throttles per operation
//! (and S3 per prefix), so a budget says how many calls of each the provider may make.

use super::super::bounds::{Excess, calls_of};
use super::super::formula::Prediction;
use super::super::params::Params;
use crate::scenario::{Check, Scenario};

/// What the plan bounds: every service and operation of the kinds' calls by operation, and
/// every `operationCalls` assertion's; sorted, services first.
pub(super) fn selectors(s: &Scenario) -> Vec<String> {
    let mut ops: Vec<String> = s
        .call_detail
        .values()
        .flat_map(|d| d.operation_names())
        .map(str::to_owned)
        .collect();
    let mut services: Vec<String> = ops
        .iter()
        .filter_map(|o| o.split_once(':').map(|(s, _)| s.to_owned()))
        .collect();
    for a in &s.assertions {
        if let Check::OperationCalls { operation, .. } = &a.check {
            if operation.contains(':') {
                ops.push(operation.clone());
            } else {
                services.push(operation.clone());
            }
        }
    }
    services.sort();
    services.dedup();
    ops.sort();
    ops.dedup();
    services.into_iter().chain(ops).collect()
}

/// c of `selector` over the kinds `live` marks: the most calls of it one reconcile of any of
/// them makes; `None` when one of them has no calls by operation (its share is unknown).
pub(super) fn c_of(s: &Scenario, live: &[bool], selector: &str) -> Option<f64> {
    let mut c: f64 = 0.0;
    for (g, on) in s.groups.iter().zip(live) {
        if !on {
            continue;
        }
        let detail = s
            .call_detail
            .get(&g.kind)
            .filter(|d| !d.operations.is_empty())?;
        c = c.max(detail.per_reconcile_max(selector));
    }
    Some(c)
}

/// The bound on `selector`'s calls in any window of `w`, id `op/SELECTOR`.
pub(super) fn bound(p: &Params, w: f64, excess: &Excess, selector: &str, c: f64) -> Prediction {
    let what = if selector.contains(':') {
        format!("{selector} calls")
    } else {
        format!("calls to {selector}")
    };
    let pr = calls_of(p, w, excess, c, "c_op", &format!("op/{selector}"), &what);
    let source = format!("{}; §10.2", pr.source);
    pr.source(&source)
}
