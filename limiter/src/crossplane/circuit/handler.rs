//! The watch event handler around the breaker: controller-runtime's
//! `EnqueueRequestsFromMapFunc` (handler/enqueue_mapped.go:80-152) over crossplane's
//! `circuit.NewMapFunc` (mapfunc.go:31-84), and for the XR's own watch
//! `NewSelfDeleteResetMapFunc` inside it (mapfunc.go:98-110; definition/reconciler.go:658).

use std::fmt;

use strum::EnumString;
use tokio::time::Instant;

use super::breaker::{Breaker, Phase};
use super::metrics::EventType;
use super::source::EventSource;
use crate::controller::Request;

/// The kind of a watch event, which decides how many objects are mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum WatchEvent {
    /// One object mapped (enqueue_mapped.go:81-95).
    Create,
    /// The old and the new object both mapped, so an Update costs two tokens
    /// (enqueue_mapped.go:98-110).
    Update,
    /// One object mapped (enqueue_mapped.go:113-120): it is gated like any other unless it
    /// carries a deletionTimestamp.
    Delete,
    /// One object mapped (enqueue_mapped.go:123-130).
    Generic,
}

impl WatchEvent {
    /// Parses `create`, `update`, `delete` or `generic`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

/// Which of the event's objects carry a `deletionTimestamp`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deletion {
    /// None of them.
    #[default]
    Live,
    /// The update that marks the object for deletion: the old object has no
    /// `deletionTimestamp`, the new one has. An event of one object takes it as
    /// [`Deletion::Deleting`].
    Marked,
    /// All of them.
    Deleting,
}

/// Which map function the watch runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Watch {
    /// The XR's own watch: `SelfMapFunc` maps the XR to itself, and a deleting XR's breaker
    /// state is reset before the breaker looks at it.
    OwnXr,
    /// Any other watch (composed resources, required resources, composition revisions): the
    /// map function returns these XRs.
    Maps(Vec<Request>),
}

/// Which object of the event a mapping came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Object {
    /// The only object of a Create, Delete or Generic.
    Only,
    /// An Update's old object.
    Old,
    /// An Update's new object.
    New,
}

/// What `NewMapFunc` did with one mapped request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The object has a deletionTimestamp: kept without asking or telling the breaker.
    Bypassed,
    /// Asked the breaker and recorded as this event type; kept unless it is `Dropped`.
    Recorded(EventType),
}

impl Decision {
    /// Whether the request is kept.
    #[must_use]
    pub fn kept(self) -> bool {
        self != Decision::Recorded(EventType::Dropped)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Bypassed => f.write_str("Bypassed"),
            Decision::Recorded(et) => et.fmt(f),
        }
    }
}

/// One mapped request and what became of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The object it was mapped from.
    pub object: Object,
    /// The XR.
    pub target: Request,
    /// Whether `NewSelfDeleteResetMapFunc` reset the XR's breaker state first.
    pub reset: bool,
    /// What the breaker wrapper decided.
    pub decision: Decision,
}

/// What one watch event did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handled {
    /// Every mapped request, in the order Go maps them (the old object first).
    pub mappings: Vec<Mapping>,
    /// The requests added to the queue, each once, in order (enqueue_mapped.go:139-151).
    pub enqueued: Vec<Request>,
}

/// Runs one watch event on `source` through the handler at `now`.
///
/// # Semantics
/// For each object of the event (an Update's old, then its new), the watch's map function
/// gives the XRs; for the XR's own watch a deleting object first resets each XR's state
/// (mapfunc.go:102-106). Then, per XR (mapfunc.go:45-80): an object with a deletionTimestamp
/// is kept with no breaker call; otherwise `GetState` decides: closed → `Allowed`, kept; open
/// and `now` strictly after `NextAllowedAt` → `HalfOpenAllowed`, kept; else `Dropped`. Each
/// decision is recorded with `RecordEvent` after it is made, so the event that opens the
/// circuit is still kept. A request kept from either object of an Update is enqueued once.
pub fn handle(
    breaker: &mut Breaker,
    now: Instant,
    event: WatchEvent,
    source: &EventSource,
    deletion: Deletion,
    watch: &Watch,
) -> Handled {
    let objects: &[(Object, bool)] = match (event, deletion) {
        (WatchEvent::Update, Deletion::Live) => &[(Object::Old, false), (Object::New, false)],
        (WatchEvent::Update, Deletion::Marked) => &[(Object::Old, false), (Object::New, true)],
        (WatchEvent::Update, Deletion::Deleting) => &[(Object::Old, true), (Object::New, true)],
        (_, Deletion::Live) => &[(Object::Only, false)],
        (_, Deletion::Marked | Deletion::Deleting) => &[(Object::Only, true)],
    };
    let targets = match watch {
        Watch::OwnXr => vec![Request::new(source.namespace.clone(), source.name.clone())],
        Watch::Maps(targets) => targets.clone(),
    };
    let mut handled = Handled::default();
    for &(object, deleting) in objects {
        let reset = deleting && *watch == Watch::OwnXr;
        if reset {
            for t in &targets {
                breaker.reset_target(t);
            }
        }
        for target in &targets {
            let decision = if deleting {
                Decision::Bypassed
            } else {
                let et = match breaker.state(now, target).phase(now) {
                    Phase::Closed => EventType::Allowed,
                    Phase::HalfOpen => EventType::HalfOpenAllowed,
                    Phase::Open => EventType::Dropped,
                };
                breaker.record_event(now, target, source, et);
                Decision::Recorded(et)
            };
            if decision.kept() && !handled.enqueued.contains(target) {
                handled.enqueued.push(target.clone());
            }
            handled.mappings.push(Mapping {
                object,
                target: target.clone(),
                reset,
                decision,
            });
        }
    }
    handled
}

impl fmt::Display for Handled {
    /// `old /a=Allowed new /a=Dropped enqueued=[/a]`; a reset XR's mapping reads
    /// `/a=reset,Bypassed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.mappings {
            match m.object {
                Object::Only => {}
                Object::Old => f.write_str("old ")?,
                Object::New => f.write_str("new ")?,
            }
            let reset = if m.reset { "reset," } else { "" };
            write!(f, "{}={reset}{} ", m.target, m.decision)?;
        }
        let enqueued: Vec<String> = self.enqueued.iter().map(ToString::to_string).collect();
        write!(f, "enqueued=[{}]", enqueued.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crossplane::circuit::BreakerConfig;

    fn breaker(burst: f64) -> Breaker {
        Breaker::new(
            "c",
            BreakerConfig::default().burst(burst).refill_per_second(0.0),
        )
    }

    /// `event` of the XR `Bucket/b`, which maps to `/a`, handled now.
    fn handle_b(b: &mut Breaker, event: WatchEvent, deletion: Deletion) -> Handled {
        let src = EventSource::parse("Bucket/b");
        let w = Watch::Maps(vec![Request::cluster("a")]);
        handle(b, Instant::now(), event, &src, deletion, &w)
    }

    #[test]
    fn an_update_maps_the_old_and_the_new_object_and_costs_two_tokens() {
        let mut b = breaker(4.0);
        let t0 = Instant::now();
        let src = EventSource::parse("Bucket/ns/b");
        let w = Watch::Maps(vec![Request::cluster("a")]);
        let h = handle(&mut b, t0, WatchEvent::Update, &src, Deletion::Live, &w);
        assert_eq!(h.to_string(), "old /a=Allowed new /a=Allowed enqueued=[/a]");
        assert_eq!(b.stored_tokens(&Request::cluster("a")), Some(2.0));
    }

    #[test]
    fn an_update_is_enqueued_when_its_old_object_opened_the_circuit_and_its_new_one_was_dropped() {
        let mut b = breaker(0.0);
        let h = handle_b(&mut b, WatchEvent::Update, Deletion::Live);
        assert_eq!(h.to_string(), "old /a=Allowed new /a=Dropped enqueued=[/a]");
        assert_eq!(b.metrics().opens, 1);
    }

    #[test]
    fn a_deleting_object_bypasses_the_breaker_and_records_nothing() {
        let mut b = breaker(0.0);
        let h = handle_b(&mut b, WatchEvent::Delete, Deletion::Deleting);
        assert_eq!(h.to_string(), "/a=Bypassed enqueued=[/a]");
        assert_eq!(b.metrics(), Default::default());
        assert!(b.targets().is_empty());
    }

    #[test]
    fn a_deleting_xr_on_its_own_watch_resets_its_state() {
        let mut b = breaker(0.0);
        let t0 = Instant::now();
        let xr = EventSource::parse("XBucket/a");
        handle(
            &mut b,
            t0,
            WatchEvent::Create,
            &xr,
            Deletion::Live,
            &Watch::OwnXr,
        );
        assert!(b.state(t0, &Request::cluster("a")).is_open);
        let h = handle(
            &mut b,
            t0,
            WatchEvent::Update,
            &xr,
            Deletion::Marked,
            &Watch::OwnXr,
        );
        assert_eq!(
            h.to_string(),
            "old /a=Dropped new /a=reset,Bypassed enqueued=[/a]"
        );
        assert!(b.targets().is_empty());
    }
}
