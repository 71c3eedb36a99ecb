//! Crossplane core's XR circuit breaker (`internal/circuit`): one token bucket per XR that
//! drops watch events while an XR is flooded, the event handler around it, and the
//! `Responsive` condition it shows on the XR.
//!
//! | piece | Go |
//! |---|---|
//! | [`Breaker`] | `TokenBucketBreaker` (token_bucket.go) |
//! | [`BreakerConfig`], [`Mode`] | `Config` and its options, with `NewTokenBucketBreaker`'s defaults; the close mode |
//! | [`handle`] | controller-runtime's `EnqueueRequestsFromMapFunc` over `NewMapFunc` (and `NewSelfDeleteResetMapFunc` on the XR's own watch) |
//! | [`Responsive`] | `WatchCircuitOpen` / `WatchCircuitClosed` |
//! | [`BreakerMetrics`] | `circuit_breaker_{opens,closes,events}_total` |
//!
//! # Semantics
//! - An XR's bucket starts full at `burst` (100) and refills at `refill_per_second` (1/s).
//! - Every mapped object costs one token: a Create, Delete or Generic maps one object, an
//!   Update two (old and new), so an Update costs 2. Objects with a `deletionTimestamp` pass
//!   without touching the breaker, and a deleting XR resets its own state. Requeues, polls and
//!   backoff never reach the breaker.
//! - The event that finds fewer than one token opens the circuit (and is still let through);
//!   the trigger is the most frequent source among the last 16 events.
//! - While open, events are dropped except one every `half_open_interval` (30s), strictly
//!   after the last.
//! - [`Mode::Released`]: the circuit closes only when an event is recorded after the
//!   `cooldown` (5m), even a dropped one; until then `GetState` and the condition say open.
//!   [`Mode::EagerClose`] (crossplane PR #7725): `GetState` closes it as soon as the cooldown
//!   has passed.
//! - Sustained, a lone XR opens when `c + 2u > burst + refill·Δt` for `c` Creates and `u`
//!   Updates: 0.5 Updates/s with the defaults.
//!
//! ```
//! use limiter::controller::Request;
//! use limiter::crossplane::circuit::{
//!     Breaker, BreakerConfig, Deletion, EventSource, Responsive, Watch, WatchEvent, handle,
//! };
//! use tokio::time::Instant;
//!
//! let mut breaker = Breaker::new("xbuckets", BreakerConfig::default().burst(4.0));
//! let now = Instant::now();
//! let bucket = EventSource::parse("Bucket/team-a/b");
//! let xr = Watch::Maps(vec![Request::new("team-a", "x")]);
//! for _ in 0..2 {
//!     handle(&mut breaker, now, WatchEvent::Update, &bucket, Deletion::Live, &xr);
//! }
//! let third = handle(&mut breaker, now, WatchEvent::Update, &bucket, Deletion::Live, &xr);
//! assert_eq!(
//!     third.to_string(),
//!     "old team-a/x=Allowed new team-a/x=Dropped enqueued=[team-a/x]"
//! );
//! let state = breaker.state(now, &Request::new("team-a", "x"));
//! assert_eq!(
//!     Responsive::from_state(&state).message,
//!     "Too many watch events from Bucket/b (team-a). Allowing events periodically."
//! );
//! ```

mod breaker;
mod condition;
mod config;
mod handler;
mod metrics;
mod source;
mod target;

pub use breaker::{Breaker, Phase, Probe, State, Transition};
pub use condition::{
    REASON_WATCH_CIRCUIT_CLOSED, REASON_WATCH_CIRCUIT_OPEN, Responsive, TYPE_RESPONSIVE,
};
pub use config::{BreakerConfig, Mode, UnknownBreakerMode};
pub use handler::{Decision, Deletion, Handled, Mapping, Object, Watch, WatchEvent, handle};
pub use metrics::{BreakerMetrics, EventType};
pub use source::EventSource;
pub use target::RECENT_SOURCES;
