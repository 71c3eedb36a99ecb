//! A group's `faults`, `drift` and `managementPolicies`: shares become index ranges from the
//! group's top index down, each with one fault.

use mock_cloud::LastingError;

use super::checker::Checker;
use super::pos;
use crate::faults::{FaultShare, GroupFault};
use crate::raw::{ErrorName, PolicyName, RawDriftShare, RawFaultShare, RawGroup};

fn lasting(e: ErrorName) -> LastingError {
    match e {
        ErrorName::AccessDenied => LastingError::AccessDenied,
        ErrorName::Conflict => LastingError::Conflict,
        ErrorName::Validation => LastingError::Validation,
    }
}

fn fault(c: &mut Checker, share: &RawFaultShare) -> Option<GroupFault> {
    let mut found = Vec::new();
    if let Some(e) = &share.error {
        let code = share.code.as_ref().and_then(|code| {
            let ok = !code.value.is_empty()
                && code
                    .value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.');
            if !ok {
                c.err(
                    pos(code),
                    format!("code {:?} is not an error code, expected letters, digits and dots such as BucketAlreadyExists", code.value),
                );
            }
            ok.then(|| code.value.clone())
        });
        let retry_after = share
            .retry_after
            .as_ref()
            .and_then(|d| c.positive_duration(d, "retryAfter"));
        found.push(GroupFault::Error {
            error: lasting(e.value),
            code,
            retry_after,
        });
    } else {
        if let Some(code) = &share.code {
            c.err(
                pos(code),
                "code goes with error, expected `error` in this share",
            );
        }
        if let Some(after) = &share.retry_after {
            c.err(
                pos(after),
                "retryAfter goes with error, expected `error` in this share",
            );
        }
    }
    if let Some(d) = &share.not_found_after_create {
        found.extend(
            c.positive_duration(d, "notFoundAfterCreate")
                .map(GroupFault::NotFoundAfterCreate),
        );
    }
    if let Some(d) = &share.slow_create {
        found.extend(
            c.positive_duration(d, "slowCreate")
                .map(GroupFault::SlowCreate),
        );
    }
    let given = usize::from(share.error.is_some())
        + usize::from(share.not_found_after_create.is_some())
        + usize::from(share.slow_create.is_some());
    match given {
        1 => found.pop(),
        0 => {
            c.err(
                pos(&share.percent),
                "a fault share names no fault, expected one of error, notFoundAfterCreate, slowCreate",
            );
            None
        }
        _ => {
            c.err(
                pos(&share.percent),
                "a fault share names more than one fault, expected one of error, notFoundAfterCreate, slowCreate",
            );
            None
        }
    }
}

/// The fault shares of `g`: `faults` in list order, then `drift`, each taking the next
/// indexes down from `count`.
pub(super) fn shares(c: &mut Checker, g: &RawGroup) -> Vec<FaultShare> {
    shares_of(c, g.count.value, &g.faults, g.drift.as_ref())
}

/// The fault shares of a group of `count` resources (a group's own, or a `cloudFault`
/// phase's for it): `faults` in list order, then `drift`, each taking the next indexes down
/// from `count`.
pub(super) fn shares_of(
    c: &mut Checker,
    count: u32,
    faults: &[RawFaultShare],
    drift: Option<&RawDriftShare>,
) -> Vec<FaultShare> {
    let mut out = Vec::new();
    let mut total = 0.0;
    let mut top = count;
    let mut take = |c: &mut Checker, percent: &serde_saphyr::Spanned<f64>, fault: GroupFault| {
        let pct = c.range(percent, "percent", 0.0, true, 100.0)?;
        total += pct;
        if total > 100.0 + 1e-9 {
            c.err(
                pos(percent),
                format!("fault and drift shares add up to {total}%, expected at most 100%"),
            );
            return None;
        }
        let end = top;
        let start = count - ((total / 100.0) * f64::from(count)).round() as u32;
        top = start;
        out.push(FaultShare { start, end, fault });
        Some(())
    };
    for share in faults {
        if let Some(f) = fault(c, share) {
            take(c, &share.percent, f);
        }
    }
    if let Some(d) = drift {
        let field = d.field.as_ref().map(|f| f.value.clone());
        take(c, &d.percent, GroupFault::Drift { field });
    }
    out
}

/// `managementPolicies` as crossplane spells them.
pub(super) fn policies(c: &mut Checker, g: &RawGroup) -> Option<Vec<String>> {
    let list = g.management_policies.as_ref()?;
    let names: Vec<String> = list
        .value
        .iter()
        .map(|p| match p {
            PolicyName::All => "*",
            PolicyName::Observe => "Observe",
            PolicyName::Create => "Create",
            PolicyName::Update => "Update",
            PolicyName::Delete => "Delete",
            PolicyName::LateInitialize => "LateInitialize",
        })
        .map(str::to_owned)
        .collect();
    if names.is_empty() {
        c.err(
            pos(list),
            "managementPolicies is empty, which pauses every resource of the group, expected at least one policy",
        );
    }
    if crate::faults::observe_only(Some(&names)) && !g.faults.is_empty() {
        c.err(
            pos(list),
            "an observe-only group has no cloud resources to fault, expected no `faults` with managementPolicies [Observe]",
        );
    }
    Some(names)
}
