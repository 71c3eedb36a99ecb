//! `circuit.TokenBucketBreaker` (token_bucket.go): one token bucket per target, the circuit it
//! opens, and what `GetState` reports.

use std::collections::HashMap;

use tokio::time::Instant;

use super::config::{BreakerConfig, Mode};
use super::metrics::{BreakerMetrics, EventType};
use super::source::EventSource;
use super::target::TargetState;
use crate::controller::Request;
use crate::instant::{add_duration, sub_instants};

/// One circuit's change of state: when, whose, and whether it opened or closed. Core logs
/// these ("Circuit breaker is open"); the counters count them; the log keeps them in order,
/// so the time each XR spent open can be read after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// When.
    pub at: Instant,
    /// The circuit's target.
    pub target: Request,
    /// `true`: it opened; `false`: it closed.
    pub opened: bool,
    /// At an open, the source that triggered it (`State::triggered_by`, the most frequent
    /// recent source); empty at a close.
    pub triggered_by: String,
}

impl Transition {
    /// The close of `target`'s circuit at `at`.
    fn closed(at: Instant, target: &Request) -> Transition {
        Transition {
            at,
            target: target.clone(),
            opened: false,
            triggered_by: String::new(),
        }
    }
}

/// An event let through an open circuit as its half-open probe (`EventHalfOpenAllowed`):
/// the circuit stays open and its next probe waits a half-open interval from here. With the
/// opens, closes and the interval, these give the spans each circuit was half-open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// When.
    pub at: Instant,
    /// The circuit's target.
    pub target: Request,
}

/// `circuit.State` (breaker.go:93-103): what `GetState` returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// Whether the circuit is open.
    pub is_open: bool,
    /// When the next half-open event may pass: the last one (or the open) plus the half-open
    /// interval; `None` (Go's zero time) while closed.
    pub next_allowed_at: Option<Instant>,
    /// The most frequent recent source when the circuit opened; empty while closed.
    pub triggered_by: String,
}

/// The three states the event handler tells apart from a [`State`] (mapfunc.go:61-79).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Events are allowed and charged.
    Closed,
    /// Events are dropped.
    Open,
    /// Open, but the next event passes as the half-open probe: `now` is strictly after
    /// `NextAllowedAt`.
    HalfOpen,
}

impl State {
    /// The phase at `now`, as `NewMapFunc` decides it.
    #[must_use]
    pub fn phase(&self, now: Instant) -> Phase {
        match self.next_allowed_at {
            _ if !self.is_open => Phase::Closed,
            Some(next) if now > next => Phase::HalfOpen,
            _ => Phase::Open,
        }
    }

    fn closed() -> Self {
        State {
            is_open: false,
            next_allowed_at: None,
            triggered_by: String::new(),
        }
    }
}

/// One XR controller's circuit breaker: pure state, every call given `now`.
///
/// # Semantics
/// - **Targets.** A target gets a full bucket (`burst` tokens) the first time an event is
///   recorded for it; [`Breaker::state`] never creates one. When a new target is added, every
///   target whose last refill is more than `expire_after` ago (strictly) is forgotten first
///   (token_bucket.go:150-166).
/// - **Every recorded event** refills the bucket by `refill_per_second × elapsed` up to
///   `burst`, in Go's float arithmetic, and takes the next slot of the ring of 16 sources
///   (173-180).
/// - **Open, within the cooldown** (`now − openedAt < cooldown`): the event costs nothing; a
///   half-open event moves the half-open cadence (182-192).
/// - **Open, cooldown over**: the circuit closes (`closes` + 1) and the ring empties, whatever
///   the event's type, even a dropped one; then the event is charged as when closed (194-203).
/// - **Closed**: with a token or more, one is spent; otherwise the circuit opens (`opens` + 1)
///   at `now`, and the trigger is the most frequent source of the ring (205-232). The event that
///   opens the circuit was already let through by the handler.
/// - **Every event** adds one to `events{result}` with the type the handler gave it.
/// - **[`Breaker::state`]** reports the circuit as it is stored. In [`Mode::Released`] it never
///   looks at the cooldown (238-259); in [`Mode::EagerClose`] (PR #7725) an open circuit whose
///   cooldown has passed (`now − openedAt ≥ cooldown`, the same check as `RecordEvent`'s) is
///   closed there and then, exactly as `RecordEvent` closes it, and reported closed.
/// - **[`Breaker::reset_target`]** forgets the target, counting nothing (270-275).
#[derive(Clone, Debug)]
pub struct Breaker {
    controller: String,
    config: BreakerConfig,
    targets: HashMap<Request, TargetState>,
    metrics: BreakerMetrics,
    transitions: Vec<Transition>,
    probes: Vec<Probe>,
}

impl Breaker {
    /// `NewTokenBucketBreaker(controller, opts...)`.
    pub fn new(controller: impl Into<String>, config: BreakerConfig) -> Self {
        Breaker {
            controller: controller.into(),
            config,
            targets: HashMap::new(),
            metrics: BreakerMetrics::default(),
            transitions: Vec::new(),
            probes: Vec::new(),
        }
    }

    /// The controller whose breaker this is: the metrics' `controller` label.
    #[must_use]
    pub fn controller(&self) -> &str {
        &self.controller
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> &BreakerConfig {
        &self.config
    }

    /// The counters so far.
    #[must_use]
    pub fn metrics(&self) -> BreakerMetrics {
        self.metrics
    }

    /// Every open and close so far, in order.
    #[must_use]
    pub fn transitions(&self) -> &[Transition] {
        &self.transitions
    }

    /// Every half-open probe recorded while its circuit stayed open, in order.
    #[must_use]
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// `RecordEvent(ctx, target, es, et)` at `now` (token_bucket.go:144-235).
    pub fn record_event(
        &mut self,
        now: Instant,
        target: &Request,
        es: &EventSource,
        et: EventType,
    ) {
        if !self.targets.contains_key(target) {
            let expire_after = self.config.expire_after;
            self.targets
                .retain(|_, s| sub_instants(now, s.last_refill) <= expire_after);
            self.targets
                .insert(target.clone(), TargetState::new(self.config.burst, now));
        }
        let config = self.config;
        let state = self
            .targets
            .get_mut(target)
            .expect("inserted above when absent");
        state.refill(&config, now);
        state.push_source(es.to_string());
        if state.is_open {
            if et == EventType::HalfOpenAllowed {
                state.last_allowed = now;
            }
            if sub_instants(now, state.opened_at) < config.cooldown {
                if et == EventType::HalfOpenAllowed {
                    self.probes.push(Probe {
                        at: now,
                        target: target.clone(),
                    });
                }
                self.metrics.inc_event(et);
                return;
            }
            state.close();
            self.metrics.closes += 1;
            self.transitions.push(Transition::closed(now, target));
        }
        if state.tokens >= 1.0 {
            state.tokens -= 1.0;
            self.metrics.inc_event(et);
            return;
        }
        state.open(now);
        self.metrics.opens += 1;
        self.metrics.inc_event(et);
        self.transitions.push(Transition {
            at: now,
            target: target.clone(),
            opened: true,
            triggered_by: state.trigger_source.clone(),
        });
    }

    /// `GetState(ctx, target)` at `now` (token_bucket.go:237-259); in [`Mode::EagerClose`] it
    /// first closes a circuit whose cooldown has passed.
    pub fn state(&mut self, now: Instant, target: &Request) -> State {
        let Some(state) = self.targets.get_mut(target) else {
            return State::closed();
        };
        if state.is_open
            && self.config.mode == Mode::EagerClose
            && sub_instants(now, state.opened_at) >= self.config.cooldown
        {
            state.close();
            self.metrics.closes += 1;
            self.transitions.push(Transition::closed(now, target));
        }
        if !state.is_open {
            return State::closed();
        }
        State {
            is_open: true,
            triggered_by: state.trigger_source.clone(),
            next_allowed_at: Some(add_duration(
                state.last_allowed,
                self.config.half_open_interval,
            )),
        }
    }

    /// `ResetTarget(ctx, target)`: forgets the target (token_bucket.go:270-275).
    pub fn reset_target(&mut self, target: &Request) {
        self.targets.remove(target);
    }

    /// The tokens stored for `target` at its last refill (Go's `state.tokens`, what
    /// token_bucket_test.go inspects), or `None` for a target the breaker does not hold.
    #[must_use]
    pub fn stored_tokens(&self, target: &Request) -> Option<f64> {
        self.targets.get(target).map(|s| s.tokens)
    }

    /// The targets the breaker holds, sorted.
    #[must_use]
    pub fn targets(&self) -> Vec<&Request> {
        let mut t: Vec<&Request> = self.targets.keys().collect();
        t.sort();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::go::GoDuration;

    const SECOND: i64 = 1_000_000_000;

    fn secs(s: i64) -> GoDuration {
        GoDuration(s * SECOND)
    }

    fn at(t0: Instant, d: GoDuration) -> Instant {
        add_duration(t0, d)
    }

    fn xr() -> (Request, EventSource) {
        (Request::cluster("a"), EventSource::parse("XBucket/a"))
    }

    /// Now, the target `a`, the source `XBucket/a`, and a breaker `c` with `config`.
    fn start(config: BreakerConfig) -> (Instant, Request, EventSource, Breaker) {
        let (t, s) = xr();
        (Instant::now(), t, s, Breaker::new("c", config))
    }

    #[test]
    fn a_new_target_starts_with_a_full_bucket_and_each_event_spends_one_token() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(3.0));
        assert_eq!(b.stored_tokens(&t), None);
        b.record_event(t0, &t, &s, EventType::Allowed);
        assert_eq!(b.stored_tokens(&t), Some(2.0));
        assert!(!b.state(t0, &t).is_open);
    }

    #[test]
    fn the_event_that_finds_the_bucket_empty_opens_the_circuit() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(1.0).refill_per_second(0.0));
        b.record_event(t0, &t, &s, EventType::Allowed);
        assert!(!b.state(t0, &t).is_open);
        b.record_event(t0, &t, &s, EventType::Allowed);
        let st = b.state(t0, &t);
        assert!(st.is_open);
        assert_eq!(st.triggered_by, "XBucket/a");
        assert_eq!(st.next_allowed_at, Some(at(t0, secs(30))));
        assert_eq!(st.phase(at(t0, secs(30))), Phase::Open);
        assert_eq!(
            st.phase(at(t0, GoDuration(30 * SECOND + 1))),
            Phase::HalfOpen
        );
        assert_eq!((b.metrics().opens, b.metrics().allowed), (1, 2));
    }

    #[test]
    fn released_state_stays_open_past_the_cooldown_until_an_event_closes_it() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(1.0));
        b.record_event(t0, &t, &s, EventType::Allowed);
        b.record_event(t0, &t, &s, EventType::Allowed);
        let late = at(t0, secs(3600));
        assert!(b.state(late, &t).is_open);
        b.record_event(late, &t, &s, EventType::Dropped);
        assert!(!b.state(late, &t).is_open);
        assert_eq!((b.metrics().closes, b.metrics().dropped), (1, 1));
    }

    #[test]
    fn a_circuit_closed_with_an_empty_bucket_opens_again_at_once() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(0.0));
        b.record_event(t0, &t, &s, EventType::Allowed);
        let late = at(t0, secs(3600));
        b.record_event(late, &t, &s, EventType::Dropped);
        assert!(b.state(late, &t).is_open);
        assert_eq!((b.metrics().opens, b.metrics().closes), (2, 1));
        // The log holds the three transitions in order, each at its instant.
        let log: Vec<(Instant, bool)> = b.transitions().iter().map(|x| (x.at, x.opened)).collect();
        assert_eq!(log, [(t0, true), (late, false), (late, true)]);
        assert!(b.transitions().iter().all(|x| x.target == t));
    }

    #[test]
    fn the_log_names_each_opens_trigger_and_keeps_the_probes_of_an_open_circuit() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(1.0));
        b.record_event(t0, &t, &s, EventType::Allowed);
        b.record_event(t0, &t, &s, EventType::Allowed);
        let probe = at(t0, secs(31));
        b.record_event(probe, &t, &s, EventType::HalfOpenAllowed);
        let log: Vec<(bool, &str)> = b
            .transitions()
            .iter()
            .map(|x| (x.opened, x.triggered_by.as_str()))
            .collect();
        assert_eq!(log, [(true, s.to_string().as_str())]);
        assert_eq!(
            b.probes(),
            [Probe {
                at: probe,
                target: t.clone()
            }]
        );
        // An event past the cooldown closes the circuit: a close names no trigger, and the
        // probe that closes it is no probe of an open circuit.
        let late = at(t0, secs(3600));
        b.record_event(late, &t, &s, EventType::HalfOpenAllowed);
        assert_eq!(b.transitions().len(), 2);
        assert!(!b.transitions()[1].opened && b.transitions()[1].triggered_by.is_empty());
        assert_eq!(b.probes().len(), 1);
    }

    #[test]
    fn eager_state_closes_the_circuit_once_the_cooldown_has_passed() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(0.0).mode(Mode::EagerClose));
        b.record_event(t0, &t, &s, EventType::Allowed);
        let cooldown = b.config().cooldown;
        assert!(b.state(at(t0, GoDuration(cooldown.0 - 1)), &t).is_open);
        assert!(!b.state(at(t0, cooldown), &t).is_open);
        assert_eq!(b.metrics().closes, 1);
        // `GetState`'s close is logged like `RecordEvent`'s.
        let log: Vec<(Instant, bool)> = b.transitions().iter().map(|x| (x.at, x.opened)).collect();
        assert_eq!(log, [(t0, true), (at(t0, cooldown), false)]);
    }

    #[test]
    fn a_target_idle_for_longer_than_the_expiry_is_forgotten_when_another_arrives() {
        let t0 = Instant::now();
        let (a, s) = xr();
        let bb = Request::cluster("b");
        let c = Request::cluster("c");
        let mut br = Breaker::new("c", BreakerConfig::default().expire_after(secs(10)));
        br.record_event(t0, &a, &s, EventType::Allowed);
        br.record_event(at(t0, secs(10)), &bb, &s, EventType::Allowed);
        assert_eq!(br.targets().len(), 2);
        br.record_event(
            at(t0, GoDuration(10_000_000_001)),
            &c,
            &s,
            EventType::Allowed,
        );
        assert_eq!(br.targets(), [&bb, &c]);
    }

    #[test]
    fn reset_forgets_the_target_and_counts_nothing() {
        let (t0, t, s, mut b) = start(BreakerConfig::default().burst(0.0));
        b.record_event(t0, &t, &s, EventType::Allowed);
        b.reset_target(&t);
        assert!(!b.state(t0, &t).is_open);
        assert_eq!(b.stored_tokens(&t), None);
        assert_eq!(b.metrics().opens, 1);
        assert_eq!(b.metrics().closes, 0);
    }
}
