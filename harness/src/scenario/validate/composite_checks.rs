//! The assertions on Crossplane core's composite layer: `coreApiRequests`,
//! `functionCalls`, `xrTimeToReady`, `breakerOpens`, `staleXRs`. Without `max` (or
//! `maxDuration`), the first three take their limit from the plan's prediction of core's
//! load (budget.md §12); the last two default to 0.

use std::time::Duration;

use super::checker::Checker;
use crate::scenario::composite::CoreCheck;
use crate::scenario::raw::{CheckName, RawAssertion};

/// The check of `a`, whose `window`, `max` and whole-number `count` (default 0) the caller
/// read.
pub(super) fn check(
    c: &mut Checker,
    a: &RawAssertion,
    (window, max, count): (Duration, Option<f64>, u64),
) -> Option<CoreCheck> {
    Some(match a.check.value {
        CheckName::CoreApiRequests => CoreCheck::ApiRequests { window, max },
        CheckName::FunctionCalls => CoreCheck::FunctionCalls { max },
        CheckName::XrTimeToReady => {
            let quantile = a
                .quantile
                .as_ref()
                .map_or(Some(0.99), |q| c.range(q, "quantile", 0.0, true, 1.0))?;
            let max = match &a.max_duration {
                Some(d) => Some(c.positive_duration(d, "maxDuration")?),
                None => None,
            };
            let tolerance_percent = match &a.tolerance_percent {
                Some(t) => c.range(t, "tolerancePercent", 0.0, false, f64::INFINITY)?,
                None => 25.0,
            };
            CoreCheck::XrTimeToReady {
                quantile,
                max,
                tolerance_percent,
            }
        }
        CheckName::BreakerOpens => CoreCheck::BreakerOpens { max: count },
        CheckName::StaleXrs => CoreCheck::StaleXrs { max: count },
        _ => return None,
    })
}
