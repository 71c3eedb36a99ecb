//! The rate-limit settings a scenario's `provider` section and a profile's `settings` share
//! ([`RawRate`]): one validation, with the limits the provider enforces when a run starts it
//! (`limiter::crossplane::Settings::validate`).

use std::num::NonZeroU32;

use limiter::crossplane::{JitterSizing, RateLimitModel, Settings};
use limiter::go::GoDuration;

use super::checker::Checker;
use super::pos;
use crate::settings::RawRate;
use crate::words::{JitterSizingName, ModelName};

/// `base` with every setting `raw` writes in its place; a value that cannot be taken is a
/// problem at its place, and `base`'s value stays.
pub(super) fn rate(c: &mut Checker, raw: &RawRate<'_>, base: Settings) -> Settings {
    let mut s = base;
    if let Some(r) = raw.max_reconcile_rate {
        match NonZeroU32::new(r.value) {
            Some(v) => s.max_reconcile_rate = v,
            None => c.err(pos(r), "maxReconcileRate is 0, expected an integer ≥ 1"),
        }
    }
    if let Some(m) = raw.rate_limit_model {
        s.model = match m.value {
            ModelName::Crossplane => RateLimitModel::Crossplane,
            ModelName::InQueue => RateLimitModel::InQueue,
            ModelName::ControllerRuntime => RateLimitModel::ControllerRuntime,
            ModelName::ConcurrencyOnly => RateLimitModel::ConcurrencyOnly,
        };
    }
    if let Some(p) = raw.poll_interval
        && let Some(d) = c.positive_duration(p, "pollInterval")
    {
        s.poll_interval = d;
    }
    if let Some(j) = raw.poll_jitter_percent {
        if j.value >= 100 {
            c.err(
                pos(j),
                format!(
                    "pollJitterPercent {} is too large, expected 0 to 99",
                    j.value
                ),
            );
        } else {
            s.poll_jitter_percent = j.value;
        }
    }
    if let Some(j) = raw.poll_jitter_sizing {
        s.poll_jitter_sizing = match j.value {
            JitterSizingName::PerResource => JitterSizing::PerResource,
            JitterSizingName::PollInterval => JitterSizing::PollInterval,
        };
    }
    if let Some(m) = raw.min_poll_interval
        && let Some(d) = c.duration(m, "minPollInterval")
    {
        s.min_poll_interval = d;
    }
    if let Some(b) = raw.scoped_buckets {
        s.scoped_buckets = b.value;
    }
    if let Some(b) = raw.backoff_base {
        s.backoff_base = c.positive_duration(b, "backoffBase").or(s.backoff_base);
    }
    if let Some(m) = raw.backoff_max {
        s.backoff_max = c.positive_duration(m, "backoffMax").or(s.backoff_max);
    }
    let backoff = s.failure_backoff();
    if backoff.max < backoff.base
        && let Some(at) = raw.backoff_max.or(raw.backoff_base)
    {
        let go = |d| GoDuration::from_std(d).to_string();
        c.err(
            pos(at),
            format!(
                "backoffMax {} is below backoffBase {}, expected backoffBase ≤ backoffMax",
                go(backoff.max),
                go(backoff.base)
            ),
        );
    }
    s
}
