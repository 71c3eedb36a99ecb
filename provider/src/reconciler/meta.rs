//! Annotations, timestamps and the clock: what crossplane-runtime's `pkg/meta` does.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::{Timestamp, ToSpan};
use kube::ResourceExt;

use crate::crd::{
    CREATE_FAILED_ANNOTATION, CREATE_PENDING_ANNOTATION, CREATE_SUCCEEDED_ANNOTATION,
    EXTERNAL_NAME_ANNOTATION, FINALIZER,
};

/// crossplane-runtime's creation grace period: a resource that Observe cannot find within
/// this long after a successful Create is not created again.
pub const CREATION_GRACE: Duration = Duration::from_secs(30);

/// Wall-clock time that advances with tokio's clock, so paused-time tests stamp
/// annotations deterministically.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    wall: Timestamp,
    start: tokio::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock reading the system time now and advancing with tokio time from here.
    #[must_use]
    pub fn new() -> Self {
        Clock {
            wall: Timestamp::now(),
            start: tokio::time::Instant::now(),
        }
    }

    /// A clock that read `wall` at tokio's `start`: every provider of a run given the same
    /// one stamps on one time line, however often it restarts, and on a paused clock the
    /// stamps follow virtual time alone.
    #[must_use]
    pub fn at(wall: Timestamp, start: tokio::time::Instant) -> Self {
        Clock { wall, start }
    }

    /// The current time, truncated to the second (annotations and conditions use second
    /// resolution, as Go's `time.RFC3339` does).
    #[must_use]
    pub fn now(&self) -> Timestamp {
        let elapsed = i64::try_from(self.start.elapsed().as_secs()).unwrap_or(i64::MAX);
        let seconds = self.wall.as_second().saturating_add(elapsed);
        Timestamp::from_second(seconds).unwrap_or(self.wall)
    }

    /// The current time at full precision (`metav1.MicroTime`, event names).
    #[must_use]
    pub fn precise_now(&self) -> Timestamp {
        self.wall
            .checked_add(self.start.elapsed())
            .unwrap_or(self.wall)
    }

    /// [`Clock::now`] in RFC 3339.
    #[must_use]
    pub fn stamp(&self) -> String {
        stamp(self.now())
    }
}

/// RFC 3339 at second resolution, `Z` suffix.
#[must_use]
pub fn stamp(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn parse(value: Option<&String>) -> Option<Timestamp> {
    value.and_then(|v| v.parse::<Timestamp>().ok())
}

/// The create stamps of an object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateStamps {
    /// `external-create-pending`.
    pub pending: Option<Timestamp>,
    /// `external-create-succeeded`.
    pub succeeded: Option<Timestamp>,
    /// `external-create-failed`.
    pub failed: Option<Timestamp>,
}

impl CreateStamps {
    /// Reads them from annotations.
    #[must_use]
    pub fn of(annotations: &BTreeMap<String, String>) -> Self {
        CreateStamps {
            pending: parse(annotations.get(CREATE_PENDING_ANNOTATION)),
            succeeded: parse(annotations.get(CREATE_SUCCEEDED_ANNOTATION)),
            failed: parse(annotations.get(CREATE_FAILED_ANNOTATION)),
        }
    }

    /// crossplane-runtime's `ExternalCreateIncomplete`: pending is strictly newer than both
    /// succeeded and failed (at second resolution).
    #[must_use]
    pub fn incomplete(&self) -> bool {
        let Some(pending) = self.pending else {
            return false;
        };
        let later = |t: Option<Timestamp>| t.is_none_or(|t| pending > t);
        later(self.succeeded) && later(self.failed)
    }

    /// crossplane-runtime's `ExternalCreateSucceededDuring(grace)`: a successful create less
    /// than `grace` ago.
    #[must_use]
    pub fn succeeded_within(&self, now: Timestamp, grace: Duration) -> bool {
        let Some(succeeded) = self.succeeded else {
            return false;
        };
        let grace = i64::try_from(grace.as_secs()).unwrap_or(i64::MAX);
        now.checked_sub(grace.seconds())
            .is_ok_and(|start| succeeded > start)
    }
}

/// The external name, if set.
#[must_use]
pub fn external_name<K: ResourceExt>(obj: &K) -> Option<&str> {
    obj.annotations()
        .get(EXTERNAL_NAME_ANNOTATION)
        .map(String::as_str)
        .filter(|s| !s.is_empty())
}

/// Whether the object carries our finalizer.
#[must_use]
pub fn has_finalizer<K: ResourceExt>(obj: &K) -> bool {
    obj.finalizers().iter().any(|f| f == FINALIZER)
}

/// Whether the object carries finalizers other than ours (deletion waits for them).
#[must_use]
pub fn has_other_finalizers<K: ResourceExt>(obj: &K) -> bool {
    obj.finalizers().iter().any(|f| f != FINALIZER)
}

/// The idempotency key of the next Create: the object's uid, plus the last
/// `external-create-succeeded` stamp if there is one. A Create interrupted by a crash is
/// retried with the same key (the cloud replays the first result instead of creating a
/// second resource); a deliberate re-create after a successful one (the cloud resource was
/// deleted behind our back) gets a new key.
#[must_use]
pub fn idempotency_key<K: ResourceExt>(obj: &K) -> String {
    let uid = obj
        .uid()
        .unwrap_or_else(|| format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name_any()));
    match obj.annotations().get(CREATE_SUCCEEDED_ANNOTATION) {
        Some(succeeded) => format!("{uid}.{succeeded}"),
        None => uid,
    }
}

/// Compares two resourceVersions when both are integers (as etcd revisions and the mock
/// API server's are); `None` when they cannot be compared.
#[must_use]
pub fn newer_resource_version(a: Option<&str>, b: Option<&str>) -> Option<bool> {
    let a = a?.parse::<u64>().ok()?;
    let b = b?.parse::<u64>().ok()?;
    Some(a > b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Option<Timestamp> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn a_pending_stamp_newer_than_both_outcomes_is_an_incomplete_create() {
        let mut s = CreateStamps {
            pending: at("2026-01-01T00:00:10Z"),
            ..CreateStamps::default()
        };
        assert!(s.incomplete());
        s.succeeded = at("2026-01-01T00:00:10Z");
        assert!(!s.incomplete(), "the same second counts as complete");
        s.succeeded = at("2026-01-01T00:00:09Z");
        s.failed = at("2026-01-01T00:00:11Z");
        assert!(!s.incomplete());
    }

    #[test]
    fn the_grace_window_is_open_for_thirty_seconds_after_a_successful_create() {
        let s = CreateStamps {
            succeeded: at("2026-01-01T00:00:00Z"),
            ..CreateStamps::default()
        };
        let now = |t: &str| t.parse::<Timestamp>().unwrap();
        assert!(s.succeeded_within(now("2026-01-01T00:00:29Z"), CREATION_GRACE));
        assert!(!s.succeeded_within(now("2026-01-01T00:00:30Z"), CREATION_GRACE));
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_advances_with_tokio_time_at_second_resolution() {
        let clock = Clock::new();
        let t0 = clock.now();
        tokio::time::advance(Duration::from_millis(2500)).await;
        assert_eq!(clock.now().as_second() - t0.as_second(), 2);
        assert!(clock.stamp().ends_with('Z'));
    }

    #[test]
    fn resource_versions_compare_as_numbers() {
        assert_eq!(newer_resource_version(Some("10"), Some("9")), Some(true));
        assert_eq!(newer_resource_version(Some("9"), Some("10")), Some(false));
        assert_eq!(newer_resource_version(Some("a"), Some("10")), None);
    }
}
