//! When an XR is reconciled again, from crossplane/crossplane's
//! `internal/controller/apiextensions/composite/reconciler.go` (the end of `Reconcile`,
//! `effectivePollInterval` and `jitter`).

use std::time::Duration;

use limiter::crossplane::effective_poll_interval;
use limiter::go::GoDuration;

/// The annotation that asks for a reconcile; its value is recorded in
/// `status.lastHandledReconcileAt` (crossplane-runtime `pkg/meta/meta.go`).
pub const RECONCILE_REQUESTED_AT_ANNOTATION: &str = "crossplane.io/reconcile-requested-at";

/// What the reconcile returns to the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requeue {
    /// Nothing: the next reconcile comes from a watch event.
    Never,
    /// `RequeueAfter`.
    After(Duration),
    /// `Requeue: true`: again after the queue's per-item backoff (1 s doubling to 30 s).
    Backoff,
}

/// Core's settings that decide requeues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequeueSettings {
    /// `--enable-realtime-compositions` (on by default).
    pub realtime: bool,
    /// `--poll-interval` (1m). With realtime on, core passes 0 instead.
    pub poll_interval: Duration,
    /// `--min-poll-interval` (1s): the annotation's lower clamp.
    pub min_poll_interval: Duration,
}

impl Default for RequeueSettings {
    /// Core's defaults (`cmd/crossplane/core/core.go`).
    fn default() -> Self {
        Self {
            realtime: true,
            poll_interval: Duration::from_secs(60),
            min_poll_interval: Duration::from_secs(1),
        }
    }
}

/// The requeue of a successful reconcile.
///
/// `poll_annotation` is the XR's `crossplane.io/poll-interval`; `waiting` counts composed
/// resources that are unsynced or unready; `ttl` is the pipeline's smallest non-zero TTL
/// (zero for none); `u` is a uniform draw in `[0, 1)` for the jitter.
///
/// # Semantics
/// - By default `RequeueAfter: jitter(poll)`, where poll is the annotation (clamped up to
///   the minimum) or else the poll interval, which is 0 with realtime on; a zero requeue is
///   no requeue.
/// - Realtime off and anything waiting: [`Requeue::Backoff`].
/// - Realtime on and a TTL: `jitter(ttl)`, overriding the annotation.
#[must_use]
pub fn requeue(
    settings: RequeueSettings,
    poll_annotation: Option<&str>,
    waiting: usize,
    ttl: Duration,
    u: f64,
) -> Requeue {
    let default = if settings.realtime {
        Duration::ZERO
    } else {
        settings.poll_interval
    };
    let poll =
        effective_poll_interval(poll_annotation, default, settings.min_poll_interval).interval;
    if !settings.realtime && waiting > 0 {
        Requeue::Backoff
    } else if settings.realtime && !ttl.is_zero() {
        after(jitter(ttl, u))
    } else {
        after(jitter(poll, u))
    }
}

fn after(d: Duration) -> Requeue {
    if d.is_zero() {
        Requeue::Never
    } else {
        Requeue::After(d)
    }
}

/// Core's `jitter`: `d + Duration((u − 0.5) · 2 · (float64(d) · 0.1))`, so ±10 %.
#[must_use]
pub fn jitter(d: Duration, u: f64) -> Duration {
    let nanos = GoDuration::from_std(d).as_nanos();
    let offset = ((u - 0.5) * 2.0 * (nanos as f64 * 0.1)) as i64;
    GoDuration(nanos.saturating_add(offset)).to_std()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIDDLE: f64 = 0.5;

    fn off() -> RequeueSettings {
        RequeueSettings {
            realtime: false,
            ..Default::default()
        }
    }

    #[test]
    fn jitter_spans_ten_percent_either_way() {
        let d = Duration::from_secs(60);
        assert_eq!(jitter(d, MIDDLE), d);
        assert_eq!(jitter(d, 0.0), Duration::from_secs(54));
        assert!(jitter(d, 0.999_999) < Duration::from_secs(66));
        assert_eq!(jitter(Duration::ZERO, 0.9), Duration::ZERO);
    }

    #[test]
    fn realtime_without_a_ttl_or_annotation_never_requeues() {
        let s = RequeueSettings::default();
        assert_eq!(requeue(s, None, 3, Duration::ZERO, MIDDLE), Requeue::Never);
    }

    #[test]
    fn realtime_requeues_after_the_ttl_even_over_the_annotation() {
        let s = RequeueSettings::default();
        let ttl = Duration::from_secs(60);
        assert_eq!(requeue(s, Some("10s"), 0, ttl, MIDDLE), Requeue::After(ttl));
        assert_eq!(
            requeue(s, Some("10s"), 0, Duration::ZERO, MIDDLE),
            Requeue::After(Duration::from_secs(10))
        );
    }

    #[test]
    fn the_annotation_is_clamped_to_the_minimum_poll_interval() {
        let s = RequeueSettings::default();
        assert_eq!(
            requeue(s, Some("10ms"), 0, Duration::ZERO, MIDDLE),
            Requeue::After(Duration::from_secs(1))
        );
        // An invalid annotation falls back to the default, 0 with realtime on.
        assert_eq!(
            requeue(s, Some("soon"), 0, Duration::ZERO, MIDDLE),
            Requeue::Never
        );
    }

    #[test]
    fn without_realtime_anything_waiting_backs_off_and_else_the_poll_interval_applies() {
        assert_eq!(
            requeue(off(), None, 1, Duration::from_secs(5), MIDDLE),
            Requeue::Backoff
        );
        assert_eq!(
            requeue(off(), None, 0, Duration::from_secs(5), MIDDLE),
            Requeue::After(Duration::from_secs(60))
        );
        assert_eq!(
            requeue(off(), Some("2m"), 0, Duration::ZERO, MIDDLE),
            Requeue::After(Duration::from_secs(120))
        );
    }
}
