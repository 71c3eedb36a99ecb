//! The watch history of one resource: the events a watch that resumes from a
//! resourceVersion is sent, and how many of them are kept.
//!
//! By default the history is sized as kube-apiserver's watch cache sizes its own
//! (`k8s.io/apiserver/pkg/storage/cacher`, the cyclic event buffer): it starts at 100
//! events; when it is full and its oldest event is younger than the window (75 s by
//! default) it doubles, up to 102,400; when it is full and the newest quarter of it is
//! older than the window it halves, down to 100. Each new event first resizes, then drops
//! the oldest event if the history is still full. A fixed size keeps the last N events.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

use super::Event;

/// How many watch events a resource keeps for watches that resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchHistory {
    /// The last N events (at least 1).
    Fixed(usize),
    /// kube-apiserver's watch cache: 100 to 102,400 events (more for a window past 75 s,
    /// by powers of two), sized to keep at least the events of the last `window` (its
    /// `eventFreshDuration`).
    Window(Duration),
}

/// kube-apiserver's window (`DefaultEventFreshDuration`): its bookmark interval, 1 minute,
/// plus 15 s.
const KUBE_WINDOW: Duration = Duration::from_secs(75);

impl WatchHistory {
    /// kube-apiserver's default: 100 to 102,400 events, the window 75 s.
    pub const KUBE: WatchHistory = WatchHistory::Window(KUBE_WINDOW);
}

impl Default for WatchHistory {
    fn default() -> Self {
        WatchHistory::KUBE
    }
}

/// The watch cache's smallest size (`DefaultLowerBoundCapacity`).
const LOWER_BOUND: usize = 100;
/// Its largest for a window up to the default one (`DefaultUpperBoundCapacity`).
const UPPER_BOUND: usize = 100 * 1024;

/// The largest size a history of `window` grows to (`CapacityUpperBound`): 102,400 for a
/// window up to 75 s, else 102,400 times the ratio of the windows rounded up to a power of
/// two, the power at most 14 (so that the size fits in a 32-bit integer).
#[must_use]
fn upper_bound(window: Duration) -> usize {
    let default = KUBE_WINDOW.as_secs_f64();
    if window.as_secs_f64() <= default {
        return UPPER_BOUND;
    }
    let max_exponent = (f64::from(i32::MAX) / UPPER_BOUND as f64).log2().floor();
    let exponent = (window.as_secs_f64() / default)
        .log2()
        .ceil()
        .min(max_exponent);
    // At most 14, so the shift stays well inside usize.
    UPPER_BOUND << (exponent as u32)
}

/// One resource's kept events, oldest first, each with the time it was recorded.
#[derive(Debug)]
pub(super) struct History {
    events: VecDeque<(Instant, Event)>,
    /// The size at which the oldest event goes.
    capacity: usize,
    /// The window the size follows, and the size's bounds; `None` for a fixed size.
    window: Option<(Duration, usize)>,
}

impl History {
    pub(super) fn new(size: WatchHistory) -> Self {
        let (capacity, window) = match size {
            WatchHistory::Fixed(n) => (n.max(1), None),
            WatchHistory::Window(w) => (LOWER_BOUND, Some((w, upper_bound(w)))),
        };
        Self {
            events: VecDeque::new(),
            capacity,
            window,
        }
    }

    /// The kept events, oldest first.
    pub(super) fn events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().map(|(_, e)| e)
    }

    /// The number of events kept now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.events.len()
    }

    /// The size at which the oldest event goes, now.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets every event (the size stays).
    pub(super) fn clear(&mut self) {
        self.events.clear();
    }

    /// Records `event` at `now`, resizing first when the size follows a window; returns
    /// the resourceVersion of the newest event dropped to make room, if any.
    pub(super) fn push(&mut self, now: Instant, event: Event) -> Option<u64> {
        if let Some((window, upper)) = self.window {
            self.resize(window, upper, now);
        }
        // Past a shrink, the oldest events beyond the size; then, when full, one more.
        let excess = (self.events.len() + 1).saturating_sub(self.capacity);
        let dropped = self
            .events
            .drain(..excess)
            .rev()
            .find_map(|(_, e)| resource_version(&e));
        self.events.push_back((now, event));
        dropped
    }

    /// `resizeCacheLocked`: doubles a full history whose oldest event is younger than
    /// `window`, up to `upper`; halves a full one whose newest quarter is older, down to
    /// the lower bound (the caller then drops the oldest events past the new size).
    fn resize(&mut self, window: Duration, upper: usize, now: Instant) {
        if self.events.len() < self.capacity {
            return;
        }
        let age = |i: usize| {
            self.events
                .get(i)
                .map(|(t, _)| now.saturating_duration_since(*t))
        };
        if age(0).is_some_and(|a| a < window) {
            self.capacity = (self.capacity * 2).min(upper);
        } else if age(self.events.len() - self.capacity / 4).is_some_and(|a| a > window) {
            self.capacity = (self.capacity / 2).max(LOWER_BOUND);
        }
    }
}

fn resource_version(event: &Event) -> Option<u64> {
    match event {
        Event::Change(_, object, _) => Some(object.resource_version),
        Event::Expired => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::object::StoredObject;
    use crate::store::EventType;

    fn event(rv: u64) -> Event {
        let object = json!({"metadata": {"name": "a", "resourceVersion": rv.to_string()}});
        Event::Change(
            EventType::Modified,
            Arc::new(StoredObject::from_value(&object, rv)),
            None,
        )
    }

    /// Pushes events `first..first + n`, `every` apart from `start`; returns the last
    /// dropped resourceVersion.
    fn push_all(
        h: &mut History,
        start: Instant,
        every: Duration,
        first: u64,
        n: u64,
    ) -> Option<u64> {
        let mut dropped = None;
        for i in 0..n {
            let at = start + every * u32::try_from(i).unwrap();
            dropped = h.push(at, event(first + i)).or(dropped);
        }
        dropped
    }

    #[test]
    fn a_burst_within_the_window_doubles_the_history_and_drops_nothing() {
        let (size, t0) = (WatchHistory::KUBE, Instant::now());
        let mut h = History::new(size);
        assert_eq!(h.capacity(), 100);
        let ms = Duration::from_millis(1);
        assert_eq!(push_all(&mut h, t0, ms, 1, 100), None);
        assert_eq!((h.len(), h.capacity()), (100, 100));
        assert_eq!(push_all(&mut h, t0 + ms * 100, ms, 101, 150), None);
        assert_eq!((h.len(), h.capacity()), (250, 400));
    }

    #[test]
    fn events_older_than_the_window_go_one_by_one_at_the_lower_bound() {
        let (size, t0) = (WatchHistory::KUBE, Instant::now());
        let mut h = History::new(size);
        // 2 s apart: when full, the oldest is 198 s old, the newest quarter 48 s.
        let dropped = push_all(&mut h, t0, Duration::from_secs(2), 1, 130);
        assert_eq!(dropped, Some(30));
        assert_eq!((h.len(), h.capacity()), (100, 100));
        assert_eq!(h.events().next().map(resource_version), Some(Some(31)));
    }

    #[test]
    fn a_full_history_whose_newest_quarter_is_stale_halves_down_to_the_lower_bound() {
        let (size, t0) = (WatchHistory::KUBE, Instant::now());
        let mut h = History::new(size);
        let ms = Duration::from_millis(1);
        push_all(&mut h, t0, ms, 1, 400);
        assert_eq!((h.len(), h.capacity()), (400, 400));
        // 100 s later: full, its oldest and its newest quarter past the window.
        let later = t0 + Duration::from_secs(100);
        assert_eq!(h.push(later, event(401)), Some(201));
        assert_eq!((h.len(), h.capacity()), (200, 200));
        // Still full, the newest quarter still stale: it halves again, to the lower bound.
        assert_eq!(h.push(later, event(402)), Some(302));
        assert_eq!((h.len(), h.capacity()), (100, 100));
        // Never below it: the oldest event goes, one for one.
        let far = later + Duration::from_secs(200);
        assert_eq!(h.push(far, event(403)), Some(303));
        assert_eq!((h.len(), h.capacity()), (100, 100));
    }

    #[test]
    fn growth_stops_at_the_upper_bound() {
        let (size, t0) = (WatchHistory::KUBE, Instant::now());
        let mut h = History::new(size);
        let n = u64::try_from(UPPER_BOUND).unwrap() + 5;
        let dropped = push_all(&mut h, t0, Duration::ZERO, 1, n);
        assert_eq!(dropped, Some(5));
        assert_eq!((h.len(), h.capacity()), (UPPER_BOUND, UPPER_BOUND));
    }

    #[test]
    fn a_fixed_history_keeps_its_last_events_whatever_their_age() {
        let size = WatchHistory::Fixed(3);
        let mut h = History::new(size);
        let dropped = push_all(&mut h, Instant::now(), Duration::ZERO, 1, 5);
        assert_eq!(dropped, Some(2));
        let kept: Vec<_> = h.events().map(resource_version).collect();
        assert_eq!(kept, [Some(3), Some(4), Some(5)]);
        assert_eq!(History::new(WatchHistory::Fixed(0)).capacity(), 1);
    }

    #[test]
    fn the_upper_bound_grows_with_the_window_by_powers_of_two() {
        let s = Duration::from_secs;
        assert_eq!(upper_bound(s(1)), 102_400);
        assert_eq!(upper_bound(s(75)), 102_400);
        assert_eq!(upper_bound(s(76)), 204_800);
        assert_eq!(upper_bound(s(150)), 204_800);
        assert_eq!(upper_bound(s(151)), 409_600);
        assert_eq!(upper_bound(s(86_400)), 102_400 << 11);
        assert_eq!(upper_bound(s(10_000_000)), 102_400 << 14);
    }
}
