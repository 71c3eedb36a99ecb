//! The coupled regime (docs/budget.md §9.7), simulated: a hold under the `crossplane` model
//! where the global bucket, the per-item backoff and the cloud's quotas act on one another.
//!
//! When the bucket binds, crossplane-runtime's middleware answers a reconcile it delays with
//! `RequeueAfter`, which makes controller-runtime forget the item's failures: a failing
//! resource falls back to the start of its backoff ramp after every delay, and comes back at
//! the bucket's pace instead of the ramp's A(t) (§9.1). A call the cloud answers 429 fails
//! its reconcile, which then retries on that same backoff. No closed form covers the
//! feedback (more failing reconciles bind the bucket harder, which resets more ramps), so
//! this module runs the model step by step, independently of the provider's code.
//!
//! # Semantics
//! A deterministic discrete-event model of one hold, in virtual seconds:
//! - every resource is an item of one controller (its kind's); it is ready once at a time
//!   (the priority queue's one entry per key); the controller's `w` workers take ready items
//!   in the order they became ready;
//! - a pass of an item that is not flagged takes a token of the global bucket: the
//!   `x/time/rate` reservation of `limiter::workqueue::Bucket` (rate R, burst B, full at
//!   the start). A pass that would wait is not run: the item is flagged, its per-item
//!   failures are forgotten (`RequeueAfter` resets the backoff) and it is ready again after
//!   the wait; the next pass of a flagged item runs without a token (crossplane-runtime's
//!   `ratelimiter.Reconciler`, `limiter::crossplane::GlobalRateLimited`);
//! - a pass that runs makes its calls at its start and ends L̄ later. A healthy resource
//!   reads (its kind's c_poll reads, each through its account's read quota); a drifting one
//!   reads, then updates through the mutate quota; a resource with a lasting error reads and
//!   fails (AccessDenied), or reads, tries to create through the mutate quota, and fails
//!   (Conflict, Validation); an observe-only one whose cloud resource is absent reads and
//!   requeues after its interval (or fails, with the pre-#1088 requeue). A call the quota
//!   rejects is answered 429 and fails the reconcile at once (its later calls are not
//!   made). Quotas are check-then-commit buckets, full at the start; a rejected call takes
//!   no token;
//! - a reconcile that fails is requeued on the per-item backoff, `limiter::workqueue::
//!   ItemExponential` (base b doubling to d_max, counted since the item was last
//!   forgotten); one that succeeds is forgotten and requeued after its interval P_i with a
//!   uniform jitter in [−j_i, j_i] (a fixed pseudo-random sequence, so the outcome is
//!   reproducible);
//! - the hold starts with every polled resource at a uniform phase of its interval and every
//!   failing one at a uniform phase of the first backoff step; a warm-up of one longest
//!   interval (at most 10 minutes) is simulated before the measured span, which is the
//!   hold's duration.
//!
//! It does not model the API client's limiter, watch events (a hold has none), or the cloud's
//! latency beyond L̄. The simulation stops after [`MAX_EVENTS`] events; the measured span is
//! then shorter than the hold, and what it measured continues as a fluid: rates are
//! per-second figures of the span simulated, and a window longer than that span gets the
//! busiest per-second rate seen, times W ([`Outcome::truncated_at`]).

mod measure;
mod scenario;
mod sim;

pub use scenario::{class_label, classes, hold};

use super::quota_wave::Quota;

/// Simulated events at the most: a few tenths of a second of a debug build, hundredths of a
/// release one. A larger hold is finished by the fluid continuation.
pub const MAX_EVENTS: usize = 100_000;

/// The longest warm-up before the measured span (s).
const MAX_WARM_UP: f64 = 600.0;

/// How a resource of a class behaves on each reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Reads and requeues after its interval.
    Healthy,
    /// Reads, updates (a diff that never converges) and requeues after its interval.
    Drift,
    /// Reads and fails: a lasting error on Observe (AccessDenied), or an observe-only
    /// resource whose cloud resource is absent under the pre-#1088 requeue.
    FailObserve,
    /// Reads, tries to create and fails (Conflict, Validation).
    FailCreate,
}

impl Behaviour {
    /// Whether every reconcile fails (a lasting error).
    #[must_use]
    pub fn fails(self) -> bool {
        matches!(self, Behaviour::FailObserve | Behaviour::FailCreate)
    }

    /// The most calls one reconcile makes, given `reads` read calls.
    #[must_use]
    pub fn calls(self, reads: u32) -> u32 {
        match self {
            Behaviour::Healthy | Behaviour::FailObserve => reads,
            Behaviour::Drift | Behaviour::FailCreate => reads + 1,
        }
    }
}

/// Resources that behave alike: one share of one group at one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// `group/label`: a faulted share's id (`b/Conflict`, `b/observe-only-absent`), or
    /// `group/poll-P` for the healthy resources polled every P seconds.
    pub label: String,
    /// How many.
    pub n: usize,
    /// P_i (s).
    pub interval: f64,
    /// j_i (s).
    pub jitter: f64,
    /// What each reconcile does.
    pub behaviour: Behaviour,
    /// Read calls per reconcile (the kind's c_poll).
    pub reads: u32,
    /// Index of its account in [`Config::quotas`].
    pub account: usize,
    /// Index of its controller (kind).
    pub controller: usize,
}

/// The settings of one simulated hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The global bucket: rate R and burst B.
    pub bucket: (f64, f64),
    /// Per-item backoff: base b and cap d_max (s).
    pub backoff: (f64, f64),
    /// Workers per controller.
    pub workers: usize,
    /// Controllers.
    pub controllers: usize,
    /// L̄ (s).
    pub reconcile: f64,
    /// Per account: the read and mutate quotas.
    pub quotas: Vec<(Option<Quota>, Option<Quota>)>,
    /// The hold's duration (s).
    pub duration: f64,
    /// Windows (s) whose busiest counts are measured.
    pub windows: Vec<f64>,
}

/// What one class did in the measured span.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassOutcome {
    /// The class's label.
    pub label: String,
    /// Its resources.
    pub n: usize,
    /// Reconciles run per resource per second.
    pub reconciles: f64,
    /// Cloud calls per resource per second (429s included).
    pub calls: f64,
    /// Calls answered 429, per resource per second.
    pub rejected: f64,
    /// Passes the bucket delayed (not run), per resource per second.
    pub delayed: f64,
    /// Per window: the most calls of one resource of the class in some window.
    pub busiest_calls: Vec<f64>,
    /// Per window: the most reconciles of one resource of the class in some window.
    pub busiest_reconciles: Vec<f64>,
    /// Mean gap between two successful reconciles of a resource, s (NaN without any).
    pub success_gap: f64,
}

/// What the simulated hold did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Per class, in the order given.
    pub classes: Vec<ClassOutcome>,
    /// Cloud calls per second, every class.
    pub calls: f64,
    /// Reconciles run per second.
    pub reconciles: f64,
    /// Passes the bucket delayed per second.
    pub delayed: f64,
    /// Calls answered 429 per second.
    pub rejected: f64,
    /// Per window: the most calls of all resources in some window.
    pub busiest_calls: Vec<f64>,
    /// The span measured (s): the hold's duration unless the simulation stopped early.
    pub span: f64,
    /// Where the simulation stopped at its event bound (s into the measured span), if it did.
    pub truncated_at: Option<f64>,
}

impl Outcome {
    /// The class labelled `label`.
    #[must_use]
    pub fn class(&self, label: &str) -> Option<&ClassOutcome> {
        self.classes.iter().find(|c| c.label == label)
    }
}

/// Runs the hold of `classes` under `cfg` (see the module's semantics).
#[must_use]
pub fn simulate(cfg: &Config, classes: &[Class]) -> Outcome {
    let (sim, span, truncated_at) = sim::run(cfg, classes);
    measure::measure(&sim, classes, span, truncated_at)
}

#[cfg(test)]
mod tests;
