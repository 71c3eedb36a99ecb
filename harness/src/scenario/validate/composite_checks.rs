//! The assertions on Crossplane core's composite layer: `coreApiRequests`,
//! `functionCalls`, `xrTimeToReady`, `breakerOpens`, `staleXRs`. Until core's load is
//! predicted, the first three take their limit from the scenario.

use std::time::Duration;

use super::checker::Checker;
use super::pos;
use crate::scenario::composite::CoreCheck;
use crate::scenario::raw::{CheckName, RawAssertion};

/// The check of `a`, whose `window`, `max` and whole-number `count` (default 0) the caller
/// read.
pub(super) fn check(
    c: &mut Checker,
    a: &RawAssertion,
    (window, max, count): (Duration, Option<f64>, u64),
) -> Option<CoreCheck> {
    let needs = |c: &mut Checker, field: &str, what: &str| {
        c.err(
            pos(&a.check),
            format!("a {what} check needs `{field}`: core's load is not predicted yet, so the limit is the scenario's"),
        );
    };
    Some(match a.check.value {
        CheckName::CoreApiRequests => {
            let Some(max) = max else {
                needs(c, "max", "coreApiRequests");
                return None;
            };
            CoreCheck::ApiRequests { window, max }
        }
        CheckName::FunctionCalls => {
            let Some(max) = max else {
                needs(c, "max", "functionCalls");
                return None;
            };
            CoreCheck::FunctionCalls { max }
        }
        CheckName::XrTimeToReady => {
            let quantile = a
                .quantile
                .as_ref()
                .map_or(Some(0.99), |q| c.range(q, "quantile", 0.0, true, 1.0))?;
            let Some(d) = &a.max_duration else {
                needs(c, "maxDuration", "xrTimeToReady");
                return None;
            };
            CoreCheck::XrTimeToReady {
                quantile,
                max: c.positive_duration(d, "maxDuration")?,
            }
        }
        CheckName::BreakerOpens => CoreCheck::BreakerOpens { max: count },
        CheckName::StaleXrs => CoreCheck::StaleXrs { max: count },
        _ => return None,
    })
}
