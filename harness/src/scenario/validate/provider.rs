//! The `provider` and `prediction` sections: the provider's rate-limit settings and the
//! inputs of the prediction.

use std::num::NonZeroU32;

use limiter::crossplane::{
    ErrorRequeue, EventClient, JitterSizing, ObserveOnlyAbsent, RateLimitModel, ReconcileRequests,
    Settings,
};

use super::checker::Checker;
use super::pos;
use crate::scenario::model::{ApiCosts, PredictionInputs};
use crate::scenario::raw::{
    ErrorRequeueName, EventClientName, JitterSizingName, ModelName, ObserveOnlyAbsentName,
    RawPrediction, RawProvider, ReconcileRequestsName,
};

pub(super) fn provider(c: &mut Checker, raw: &RawProvider) -> Settings {
    let mut s = Settings::default();
    if let Some(r) = &raw.max_reconcile_rate {
        match NonZeroU32::new(r.value) {
            Some(r) => s.max_reconcile_rate = r,
            None => c.err(pos(r), "maxReconcileRate is 0, expected an integer ≥ 1"),
        }
    }
    if let Some(m) = &raw.rate_limit_model {
        s.model = match m.value {
            ModelName::Crossplane => RateLimitModel::Crossplane,
            ModelName::InQueue => RateLimitModel::InQueue,
            ModelName::ControllerRuntime => RateLimitModel::ControllerRuntime,
            ModelName::ConcurrencyOnly => RateLimitModel::ConcurrencyOnly,
        };
    }
    if let Some(p) = &raw.poll_interval {
        s.poll_interval = c
            .positive_duration(p, "pollInterval")
            .unwrap_or(s.poll_interval);
    }
    if let Some(j) = &raw.poll_jitter_percent {
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
    if let Some(j) = &raw.poll_jitter_sizing {
        s.poll_jitter_sizing = match j.value {
            JitterSizingName::PerResource => JitterSizing::PerResource,
            JitterSizingName::PollInterval => JitterSizing::PollInterval,
        };
    }
    if let Some(m) = &raw.min_poll_interval {
        s.min_poll_interval = c
            .duration(m, "minPollInterval")
            .unwrap_or(s.min_poll_interval);
    }
    if let Some(b) = &raw.scoped_buckets {
        s.scoped_buckets = b.value;
    }
    if let Some(m) = &raw.error_requeue {
        s.error_requeue = match m.value {
            ErrorRequeueName::Backoff => ErrorRequeue::Backoff,
            ErrorRequeueName::Immediate => ErrorRequeue::Immediate,
        };
    }
    if let Some(m) = &raw.observe_only_absent {
        s.observe_only_absent = match m.value {
            ObserveOnlyAbsentName::Poll => ObserveOnlyAbsent::Poll,
            ObserveOnlyAbsentName::Backoff => ObserveOnlyAbsent::Backoff,
        };
    }
    if let Some(m) = &raw.event_client {
        s.event_client = match m.value {
            EventClientName::Shared => EventClient::Shared,
            EventClientName::Separate => EventClient::Separate,
        };
    }
    if let Some(m) = &raw.reconcile_requests {
        s.reconcile_requests = match m.value {
            ReconcileRequestsName::Honour => ReconcileRequests::Honour,
            ReconcileRequestsName::Ignore => ReconcileRequests::Ignore,
        };
    }
    if let Some(b) = &raw.backoff_base {
        s.backoff_base = c.positive_duration(b, "backoffBase");
    }
    if let Some(m) = &raw.backoff_max {
        s.backoff_max = c.positive_duration(m, "backoffMax");
    }
    let backoff = s.failure_backoff();
    if backoff.max < backoff.base {
        let at = raw.backoff_max.as_ref().or(raw.backoff_base.as_ref());
        if let Some(at) = at {
            let go = |d| limiter::go::GoDuration::from_std(d).to_string();
            c.err(
                pos(at),
                format!(
                    "backoffMax {} is below backoffBase {}, expected backoffBase ≤ backoffMax",
                    go(backoff.max),
                    go(backoff.base)
                ),
            );
        }
    }
    s
}

/// Where the first setting of a `provider` section is, if any is set.
pub(super) fn first_set(raw: &RawProvider) -> Option<crate::scenario::error::Pos> {
    let durations = [
        &raw.poll_interval,
        &raw.min_poll_interval,
        &raw.backoff_base,
        &raw.backoff_max,
    ];
    let mut at: Vec<crate::scenario::error::Pos> =
        durations.into_iter().flatten().map(pos).collect();
    at.extend(raw.max_reconcile_rate.as_ref().map(pos));
    at.extend(raw.rate_limit_model.as_ref().map(pos));
    at.extend(raw.poll_jitter_percent.as_ref().map(pos));
    at.extend(raw.poll_jitter_sizing.as_ref().map(pos));
    at.extend(raw.scoped_buckets.as_ref().map(pos));
    at.extend(raw.error_requeue.as_ref().map(pos));
    at.extend(raw.aws_retry_mode.as_ref().map(pos));
    at.extend(raw.credential_cache.as_ref().map(pos));
    at.extend(raw.observe_only_absent.as_ref().map(pos));
    at.extend(raw.event_client.as_ref().map(pos));
    at.extend(raw.reconcile_requests.as_ref().map(pos));
    at.into_iter().min_by_key(|p| (p.source, p.line, p.column))
}

pub(super) fn prediction(c: &mut Checker, raw: &RawPrediction) -> PredictionInputs {
    let d = PredictionInputs::default();
    let mean = c.opt_duration(
        raw.reconcile_duration.as_ref(),
        "reconcileDuration",
        d.reconcile,
    );
    let min = raw
        .min_reconcile_duration
        .as_ref()
        .and_then(|s| c.duration(s, "minReconcileDuration"))
        .unwrap_or(mean);
    let max = raw
        .max_reconcile_duration
        .as_ref()
        .and_then(|s| c.duration(s, "maxReconcileDuration"))
        .unwrap_or(mean);
    if min > mean
        && let Some(s) = &raw.min_reconcile_duration
    {
        c.err(
            pos(s),
            "minReconcileDuration is above reconcileDuration, expected min ≤ mean ≤ max",
        );
    }
    if max < mean
        && let Some(s) = &raw.max_reconcile_duration
    {
        c.err(
            pos(s),
            "maxReconcileDuration is below reconcileDuration, expected min ≤ mean ≤ max",
        );
    }
    let alpha = raw
        .alpha
        .as_ref()
        .and_then(|a| c.range(a, "alpha", 0.0, true, 0.5))
        .unwrap_or(d.alpha);
    let a = &raw.api_per_reconcile;
    let def = ApiCosts::default();
    let reconcile_cpu = raw
        .reconcile_cpu
        .as_ref()
        .and_then(|s| c.duration(s, "reconcileCpu"))
        .unwrap_or(d.reconcile_cpu);
    PredictionInputs {
        reconcile: mean,
        min_reconcile: min,
        max_reconcile: max,
        reconcile_cpu,
        self_event: raw.self_event.unwrap_or(d.self_event),
        client: None,
        sdk_attempts: raw.sdk_attempts.as_ref().map_or(0, |a| {
            if a.value == 0 {
                c.err(
                    pos(a),
                    "sdkAttempts is 0, expected at least 1 (the first attempt)",
                );
            }
            a.value
        }),
        alpha,
        api: ApiCosts {
            poll: a.poll.unwrap_or(def.poll),
            resync: a.resync.unwrap_or(def.resync),
            create: a.create.unwrap_or(def.create),
            observe: a.observe.unwrap_or(def.observe),
            update: a.update.unwrap_or(def.update),
            delete: a.delete.unwrap_or(def.delete),
            error: a.error.unwrap_or(def.error),
            before_create: a.before_create.unwrap_or(def.before_create),
        },
    }
}
