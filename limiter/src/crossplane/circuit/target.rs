//! One target's state (`circuit.state`, token_bucket.go:95-112): its token bucket, the ring of
//! its last 16 event sources and whether its circuit is open.

use tokio::time::Instant;

use super::config::BreakerConfig;
use crate::go::math_min;
use crate::instant::sub_instants;

/// How many recent sources a target remembers (`recentSources [16]string`).
pub const RECENT_SOURCES: usize = 16;

/// The state of one target (one XR).
#[derive(Clone, Debug)]
pub(crate) struct TargetState {
    pub(crate) tokens: f64,
    pub(crate) last_refill: Instant,
    /// `""` is an empty slot, as in Go.
    recent_sources: [String; RECENT_SOURCES],
    recent_idx: usize,
    pub(crate) is_open: bool,
    pub(crate) opened_at: Instant,
    pub(crate) last_allowed: Instant,
    pub(crate) trigger_source: String,
}

impl TargetState {
    /// A full bucket refilled `now` (token_bucket.go:162-165). The times of a circuit that never
    /// opened are never read; Go leaves them zero.
    pub(crate) fn new(capacity: f64, now: Instant) -> Self {
        TargetState {
            tokens: capacity,
            last_refill: now,
            recent_sources: Default::default(),
            recent_idx: 0,
            is_open: false,
            opened_at: now,
            last_allowed: now,
            trigger_source: String::new(),
        }
    }

    /// token_bucket.go:174-176: `tokens = math.Min(capacity, tokens + rate*elapsed.Seconds())`,
    /// one multiply and one add (Go does not fuse them on amd64), then `lastRefill = now`.
    pub(crate) fn refill(&mut self, config: &BreakerConfig, now: Instant) {
        let elapsed = sub_instants(now, self.last_refill).seconds();
        self.tokens = math_min(
            config.burst,
            self.tokens + config.refill_per_second * elapsed,
        );
        self.last_refill = now;
    }

    /// token_bucket.go:179-180: the source takes the next slot of the ring.
    pub(crate) fn push_source(&mut self, source: String) {
        self.recent_sources[self.recent_idx] = source;
        self.recent_idx = (self.recent_idx + 1) % RECENT_SOURCES;
    }

    /// The close: token_bucket.go:195-202 (the ring is emptied; the trigger source stays).
    pub(crate) fn close(&mut self) {
        self.is_open = false;
        for s in &mut self.recent_sources {
            s.clear();
        }
        self.recent_idx = 0;
    }

    /// The open: token_bucket.go:213-232. The trigger is found by walking the ring in slot
    /// order (not age order), counting each source; a source whose count reaches the highest
    /// count so far takes the trigger, so among sources tied for most frequent, the one whose
    /// last occurrence sits in the highest slot wins. An empty ring leaves the previous trigger.
    pub(crate) fn open(&mut self, now: Instant) {
        self.is_open = true;
        self.opened_at = now;
        self.last_allowed = now;
        let mut counts: Vec<(&str, usize)> = Vec::new();
        let mut max_events = 0;
        for src in &self.recent_sources {
            if src.is_empty() {
                continue;
            }
            let n = match counts.iter_mut().find(|(s, _)| *s == src.as_str()) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    counts.push((src.as_str(), 1));
                    1
                }
            };
            if n < max_events {
                continue;
            }
            max_events = n;
            self.trigger_source.clone_from(src);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened_after(sources: &[&str]) -> String {
        let now = Instant::now();
        let mut t = TargetState::new(0.0, now);
        for s in sources {
            t.push_source((*s).to_owned());
        }
        t.open(now);
        t.trigger_source
    }

    #[test]
    fn the_trigger_is_the_most_frequent_source() {
        assert_eq!(opened_after(&["a", "b", "b", "a", "b"]), "b");
    }

    #[test]
    fn among_tied_sources_the_trigger_is_the_one_reaching_the_count_in_the_highest_slot() {
        assert_eq!(opened_after(&["a", "a", "b", "b"]), "b");
        assert_eq!(opened_after(&["b", "b", "a", "a"]), "a");
        assert_eq!(opened_after(&["a", "b", "b", "a"]), "a");
    }

    #[test]
    fn the_ring_forgets_all_but_the_last_sixteen_sources_and_walks_in_slot_order() {
        // 17 events: "a" in slot 0 is overwritten by the 17th, "c".
        let mut s = vec!["a"];
        s.extend(std::iter::repeat_n("b", 8));
        s.extend(std::iter::repeat_n("c", 7));
        s.push("c");
        assert_eq!(opened_after(&s), "c");
        s.pop();
        assert_eq!(opened_after(&s), "b");
    }

    #[test]
    fn an_empty_ring_keeps_the_previous_trigger() {
        let now = Instant::now();
        let mut t = TargetState::new(0.0, now);
        t.push_source("a".to_owned());
        t.open(now);
        t.close();
        t.open(now);
        assert_eq!(t.trigger_source, "a");
    }
}
