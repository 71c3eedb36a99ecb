//! Instant arithmetic with Go's `time.Time` semantics (saturating, signed durations).

use std::time::Duration;

use tokio::time::Instant;

use crate::go::GoDuration;

/// How far past an instant a "forever" lands when the exact sum is not representable; it changes
/// no observable delay (they stay `InfDuration` when measured back).
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `t - u` as a Go duration, saturating like Go's `Time.Sub`.
pub(crate) fn sub_instants(t: Instant, u: Instant) -> GoDuration {
    if t >= u {
        GoDuration::from_std(t - u)
    } else {
        let back = GoDuration::from_std(u - t);
        GoDuration(back.0.checked_neg().unwrap_or(i64::MIN))
    }
}

/// `t + d` where `d` may be negative or huge; far-future results are capped.
pub(crate) fn add_duration(t: Instant, d: GoDuration) -> Instant {
    if d.0 >= 0 {
        add_std(t, Duration::from_nanos(d.0.unsigned_abs()))
    } else {
        t.checked_sub(Duration::from_nanos(d.0.unsigned_abs()))
            .unwrap_or(t)
    }
}

/// `t + d`, capped in the far future.
pub(crate) fn add_std(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .or_else(|| t.checked_add(FAR_FUTURE))
        .unwrap_or(t)
}
