//! What every queue is built with: a clock and, optionally, metrics.

use std::sync::Arc;

use super::metrics::QueueMetrics;
use crate::clock::Clock;

/// How to build a queue: client-go's `TypedQueueConfig` (its `Clock` and `MetricsProvider`).
/// The default is tokio's clock and no metrics.
///
/// ```
/// use std::sync::Arc;
/// use limiter::clock::{Clock, VirtualClock};
/// use limiter::workqueue::{QueueConfig, QueueMetrics};
///
/// let clock = VirtualClock::new();
/// let config: QueueConfig<String> = QueueConfig::default()
///     .clock(Clock::from(&clock))
///     .metrics(Arc::new(QueueMetrics::default()));
/// # let _ = config;
/// ```
pub struct QueueConfig<T> {
    pub(crate) clock: Clock,
    pub(crate) metrics: Option<Arc<QueueMetrics<T>>>,
}

impl<T> Default for QueueConfig<T> {
    fn default() -> Self {
        QueueConfig {
            clock: Clock::tokio(),
            metrics: None,
        }
    }
}

impl<T> Clone for QueueConfig<T> {
    fn clone(&self) -> Self {
        QueueConfig {
            clock: self.clock.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

impl<T> QueueConfig<T> {
    /// The clock the queue reads and sleeps on (ready times, metrics).
    #[must_use]
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Record into `metrics`.
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<QueueMetrics<T>>) -> Self {
        self.metrics = Some(metrics);
        self
    }
}
