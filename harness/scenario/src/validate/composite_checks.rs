//! The assertions on Crossplane core's composite layer: `coreApiRequests`,
//! `functionCalls`, `xrTimeToReady`, `breakerOpens`, `staleXRs`. Without `max` (or
//! `maxDuration`), the first three take their limit from the plan's prediction of core's
//! load (budget.md §12); so do the last two, `breakerOpens` as a lower bound when the plan
//! says circuits surely open (a storm), and an upper bound of 0 when it does not.

use std::time::Duration;

use super::checker::Checker;
use crate::composite::CoreCheck;
use crate::raw::{CheckName, RawAssertion};

/// How long an XR must have been stale to count, unless the check says.
pub const DEFAULT_STALE_GRACE: Duration = Duration::from_secs(60);

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
        CheckName::BreakerOpens => {
            let min = match &a.min {
                Some(m) => Some(c.range(m, "min", 0.0, false, f64::INFINITY)? as u64),
                None => None,
            };
            if let (Some(_), Some(m)) = (&a.max, &a.min) {
                c.err(
                    super::pos(m),
                    "breakerOpens takes `max` or `min`, not both, expected two assertions for a range",
                );
                return None;
            }
            CoreCheck::BreakerOpens {
                max: max.map(|_| count),
                min,
            }
        }
        CheckName::StaleXrs => CoreCheck::StaleXrs {
            max: max.map(|_| count),
            grace: c.opt_duration(a.grace.as_ref(), "grace", DEFAULT_STALE_GRACE),
        },
        _ => return None,
    })
}
