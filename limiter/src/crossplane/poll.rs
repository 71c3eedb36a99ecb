//! Poll intervals: the `crossplane.io/poll-interval` annotation, the minimum, and jitter.

use std::time::Duration;

use crate::go::{GoDuration, ParseDurationError};

/// Annotation that overrides the poll interval of one resource (Go duration syntax).
pub const POLL_INTERVAL_ANNOTATION: &str = "crossplane.io/poll-interval";

/// How the jitter of a poll requeue is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    /// crossplane-runtime's `WithPollJitterHook(j)`: the same absolute jitter for every resource.
    /// A resource whose interval is at most `j` can get a requeue of zero or less, which stops its
    /// polling (docs/budget.md §8, row 12).
    Fixed(Duration),
    /// Ours: a share (percent, below 100) of each resource's own interval, so a requeue is never
    /// zero.
    Proportional(u32),
}

impl Jitter {
    /// The absolute jitter for a resource polled every `interval`.
    #[must_use]
    pub fn for_interval(self, interval: Duration) -> Duration {
        match self {
            Jitter::Fixed(j) => j,
            // Duration(float64(poll) * pct / 100), truncated, as provider mains compute it.
            Jitter::Proportional(pct) => {
                let nanos = interval.as_nanos() as f64 * f64::from(pct) / 100.0;
                Duration::from_nanos(nanos as u64)
            }
        }
    }
}

/// `poll + Duration((u − 0.5) · 2 · float64(j))`, truncated toward zero: crossplane-runtime's
/// jitter hook for a uniform `u` in `[0, 1)`. The result lies in `[poll − j, poll + j)`; a
/// negative result is reported as zero (Go's would be a negative `RequeueAfter`, which
/// controller-runtime treats as no requeue).
#[must_use]
pub fn jittered(poll: Duration, jitter: Duration, u: f64) -> Duration {
    let offset = ((u - 0.5) * 2.0 * jitter.as_nanos() as f64) as i64;
    let total = GoDuration::from_std(poll).as_nanos().saturating_add(offset);
    GoDuration(total).to_std()
}

/// A resource's effective poll interval, and whether its annotation was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectivePoll {
    /// The interval to use (before jitter).
    pub interval: Duration,
    /// Why the annotation was ignored, if it was.
    pub rejected: Option<PollAnnotationError>,
    /// Whether the annotation's value was raised to the minimum.
    pub clamped: bool,
}

/// A `crossplane.io/poll-interval` value that cannot be used; the default applies.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PollAnnotationError {
    /// Not a Go duration.
    #[error("invalid {POLL_INTERVAL_ANNOTATION} annotation {value:?}")]
    Invalid {
        /// The annotation's value.
        value: String,
        /// Why it does not parse.
        #[source]
        source: ParseDurationError,
    },
    /// Zero or negative.
    #[error("{POLL_INTERVAL_ANNOTATION} annotation {value:?} must be greater than zero")]
    NotPositive {
        /// The annotation's value.
        value: String,
    },
}

/// crossplane-runtime's `effectivePollInterval`: the annotation if it is a valid positive Go
/// duration, raised to `min` if lower; otherwise `default` (an invalid value is reported).
#[must_use]
pub fn effective_poll_interval(
    annotation: Option<&str>,
    default: Duration,
    min: Duration,
) -> EffectivePoll {
    let Some(value) = annotation else {
        return EffectivePoll {
            interval: default,
            rejected: None,
            clamped: false,
        };
    };
    let rejected = match GoDuration::parse(value) {
        Ok(d) if d > GoDuration::ZERO => {
            let d = d.to_std();
            return EffectivePoll {
                interval: d.max(min),
                rejected: None,
                clamped: d < min,
            };
        }
        Ok(_) => PollAnnotationError::NotPositive {
            value: value.to_owned(),
        },
        Err(source) => PollAnnotationError::Invalid {
            value: value.to_owned(),
            source,
        },
    };
    EffectivePoll {
        interval: default,
        rejected: Some(rejected),
        clamped: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_spans_poll_minus_j_to_poll_plus_j() {
        let p = Duration::from_secs(60);
        let j = Duration::from_secs(6);
        assert_eq!(jittered(p, j, 0.0), Duration::from_secs(54));
        assert_eq!(jittered(p, j, 0.5), Duration::from_secs(60));
        assert_eq!(jittered(p, j, 0.75), Duration::from_secs(63));
        assert!(jittered(p, j, 0.999_999_999_999) < Duration::from_secs(66));
    }

    #[test]
    fn proportional_jitter_never_reaches_zero() {
        let j = Jitter::Proportional(10).for_interval(Duration::from_secs(10));
        assert_eq!(j, Duration::from_secs(1));
        assert_eq!(
            jittered(Duration::from_secs(10), j, 0.0),
            Duration::from_secs(9)
        );
    }

    #[test]
    fn the_annotation_overrides_is_clamped_and_falls_back() {
        let d = Duration::from_secs(60);
        let min = Duration::from_secs(1);
        let e = effective_poll_interval(Some("1h30m"), d, min);
        assert_eq!(e.interval, Duration::from_secs(5400));
        let e = effective_poll_interval(Some("250ms"), d, min);
        assert_eq!((e.interval, e.clamped), (min, true));
        let e = effective_poll_interval(Some("1.5h"), d, min);
        assert_eq!(e.interval, Duration::from_secs(5400));
        let e = effective_poll_interval(Some("soon"), d, min);
        assert_eq!(e.interval, d);
        assert!(matches!(
            e.rejected,
            Some(PollAnnotationError::Invalid { .. })
        ));
        let e = effective_poll_interval(Some("-5s"), d, min);
        assert!(matches!(
            e.rejected,
            Some(PollAnnotationError::NotPositive { .. })
        ));
    }
}
