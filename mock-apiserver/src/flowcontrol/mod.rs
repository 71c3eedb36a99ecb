//! Server-side flow control, in one of two named modes: API Priority and Fairness as
//! kube-apiserver runs it ([`apf`]), or the immediate limit ([`bucket`]).

pub mod apf;
pub mod bucket;
pub mod config;
#[cfg(test)]
mod tests;

use std::num::{NonZeroU32, NonZeroUsize};
use std::sync::Arc;

pub use bucket::{RateLimit, retry_after_secs};
pub use config::PriorityAndFairness;

/// Which flow control a server runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowControl {
    /// The immediate limit: a token bucket and a cap on requests in flight, refusing at
    /// once with a JSON `Status` 429 and `Retry-After`, for every user alike. Simple and
    /// predictable; not what kube-apiserver does.
    Immediate(RateLimit),
    /// API Priority and Fairness as kube-apiserver runs it: requests classified by flow
    /// schemas into priority levels with their share of seats, excess requests waiting in
    /// fair queues, then a plain-text 429 with `Retry-After`; `system:masters` exempt.
    PriorityAndFairness(PriorityAndFairness),
}

impl FlowControl {
    /// The immediate limit: a token bucket of `qps` per second holding up to `burst`.
    pub fn new(qps: NonZeroU32, burst: NonZeroU32) -> Self {
        Self::Immediate(RateLimit::new(qps, burst))
    }

    /// Also caps requests in flight (the immediate limit only; API Priority and Fairness
    /// has its seats).
    #[must_use]
    pub fn with_max_in_flight(self, max: NonZeroUsize) -> Self {
        match self {
            Self::Immediate(limit) => Self::Immediate(limit.with_max_in_flight(max)),
            other => other,
        }
    }

    /// API Priority and Fairness with kube-apiserver's default configuration.
    pub fn priority_and_fairness() -> Self {
        Self::PriorityAndFairness(PriorityAndFairness::default())
    }
}

/// The live flow control.
#[derive(Debug)]
pub enum Limiter {
    /// [`FlowControl::Immediate`].
    Immediate(bucket::Limiter),
    /// [`FlowControl::PriorityAndFairness`].
    PriorityAndFairness(Arc<apf::Apf>),
}

impl Limiter {
    /// The limiter for `settings`.
    pub fn new(settings: FlowControl) -> Self {
        match settings {
            FlowControl::Immediate(limit) => Self::Immediate(bucket::Limiter::new(limit)),
            FlowControl::PriorityAndFairness(config) => {
                Self::PriorityAndFairness(Arc::new(apf::Apf::new(config)))
            }
        }
    }
}
