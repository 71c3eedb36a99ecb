//! client-go's work queues and rate limiters, and controller-runtime's priority queue.
//!
//! - [`RateLimiter`] and its implementations: [`ItemExponential`], [`ItemFastSlow`],
//!   [`Bucket`], [`MaxOf`], [`MaxWait`], and the named defaults.
//! - [`Queue`] (FIFO with de-duplication), [`DelayingQueue`], [`RateLimitingQueue`] and
//!   [`PriorityQueue`], each cloneable and shared by its clones.
//! - [`WorkQueue`]: either kind behind controller-runtime's interface, as a controller uses it.
//! - [`QueueConfig`]: the clock (see [`crate::clock`]) and metrics a queue is built with.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use limiter::workqueue::{ItemExponential, RateLimitingQueue};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let q = RateLimitingQueue::new(Arc::new(ItemExponential::new(
//!     Duration::from_millis(5),
//!     Duration::from_secs(1000),
//! )));
//! q.add_rate_limited("a".to_string());
//! let item = q.delaying().get().await.unwrap(); // after 5ms of tokio time
//! q.delaying().done(&item);
//! assert_eq!(q.num_requeues(&item), 1);
//! # }
//! ```

mod config;
mod delaying;
mod fifo;
mod heap;
mod metrics;
mod priority;
mod ratelimiters;
mod ratelimiting;
mod work_queue;

pub use config::QueueConfig;
pub use delaying::DelayingQueue;
pub use fifo::Queue;
pub use metrics::{DurationSummary, QueueMetrics, QueueMetricsSnapshot};
pub use priority::PriorityQueue;
pub use ratelimiters::{
    Bucket, ItemExponential, ItemFastSlow, MaxOf, MaxWait, RateLimiter, SharedRateLimiter,
    client_go_default, client_go_default_with_clock, client_go_item_default,
    controller_runtime_pq_default,
};
pub use ratelimiting::RateLimitingQueue;
pub use work_queue::WorkQueue;

use crate::go::GoDuration;

/// controller-runtime's `priorityqueue.AddOpts`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddOpts {
    /// Wait this long before the item is ready (0: ready now).
    pub after: GoDuration,
    /// Ask the rate limiter for the wait (the shorter of the two wins when both are set).
    pub rate_limited: bool,
    /// Higher is handed out first (priority queue only).
    pub priority: i64,
}

impl AddOpts {
    /// Ready after `after`.
    #[must_use]
    pub fn after(after: GoDuration) -> Self {
        AddOpts {
            after,
            ..AddOpts::default()
        }
    }

    /// Ready after the rate limiter's wait.
    #[must_use]
    pub fn rate_limited() -> Self {
        AddOpts {
            rate_limited: true,
            ..AddOpts::default()
        }
    }

    /// With a priority.
    #[must_use]
    pub fn with_priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }
}
