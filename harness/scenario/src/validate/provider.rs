//! The `provider` and `prediction` sections: the provider's rate-limit settings and the
//! inputs of the prediction.

use limiter::crossplane::{
    ErrorRequeue, EventClient, ObserveOnlyAbsent, ReconcileRequests, Settings,
};

use super::checker::Checker;
use super::{pos, settings};
use crate::model::{ApiCosts, PredictionInputs};
use crate::raw::{
    ErrorRequeueName, EventClientName, ObserveOnlyAbsentName, RawPrediction, RawProvider,
    ReconcileRequestsName,
};
use crate::settings::RateSection as _;

pub(super) fn provider(c: &mut Checker, raw: &RawProvider) -> Settings {
    let mut s = settings::rate(c, &raw.rate(), Settings::default());
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
    s
}

/// Where the first setting of a `provider` section is, if any is set.
pub(super) fn first_set(raw: &RawProvider) -> Option<crate::error::Pos> {
    let own = [
        raw.error_requeue.as_ref().map(pos),
        raw.aws_retry_mode.as_ref().map(pos),
        raw.credential_cache.as_ref().map(pos),
        raw.observe_only_absent.as_ref().map(pos),
        raw.event_client.as_ref().map(pos),
        raw.reconcile_requests.as_ref().map(pos),
    ];
    let rate = raw.rate().given().map(|(_, at)| at);
    rate.into_iter()
        .chain(own)
        .flatten()
        .min_by_key(|p| (p.source, p.line, p.column))
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
