//! Instant arithmetic with Go's `time.Time` semantics (saturating, signed durations).

use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::go::GoDuration;

/// `t - u` as a Go duration, saturating like Go's `Time.Sub`.
pub(crate) fn sub_instants(t: Instant, u: Instant) -> GoDuration {
    if t >= u {
        GoDuration::from_std(t - u)
    } else {
        let back = GoDuration::from_std(u - t);
        GoDuration(back.0.checked_neg().unwrap_or(i64::MIN))
    }
}

/// `t + d` where `d` may be negative or huge; far-future results are capped, which changes no
/// observable delay (they stay `InfDuration` when measured back).
pub(crate) fn add_duration(t: Instant, d: GoDuration) -> Instant {
    if d.0 >= 0 {
        t.checked_add(Duration::from_nanos(d.0 as u64))
            .unwrap_or_else(|| t + Duration::from_secs(86_400 * 365 * 30))
    } else {
        t.checked_sub(Duration::from_nanos(d.0.unsigned_abs()))
            .unwrap_or(t)
    }
}

/// Waits until `next` (if any) or until `wake` is notified, whichever comes first: how the
/// queues' timer tasks sleep.
pub(crate) async fn sleep_until_or_woken(wake: &Notify, next: Option<Instant>) {
    match next {
        Some(at) => {
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep_until(at) => {}
            }
        }
        None => wake.notified().await,
    }
}
