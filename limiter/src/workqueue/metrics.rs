//! Work-queue metrics, the ones client-go's `MetricsProvider` defines: depth, adds, queue
//! latency, work duration, unfinished work, longest running processor, retries.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// A running summary of observed durations: count, sum and maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DurationSummary {
    /// Observations.
    pub count: u64,
    /// Sum of all observations.
    pub sum: Duration,
    /// Largest observation.
    pub max: Duration,
}

impl DurationSummary {
    fn observe(&mut self, d: Duration) {
        self.count += 1;
        self.sum += d;
        self.max = self.max.max(d);
    }

    /// Mean of the observations, zero when there are none.
    #[must_use]
    pub fn mean(&self) -> Duration {
        if self.count == 0 {
            Duration::ZERO
        } else {
            self.sum / u32::try_from(self.count).unwrap_or(u32::MAX)
        }
    }
}

/// A snapshot of a queue's metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueMetricsSnapshot {
    /// Items waiting to be handed out (`workqueue_depth`).
    pub depth: u64,
    /// Items added (`workqueue_adds_total`).
    pub adds: u64,
    /// Delayed or rate-limited re-adds (`workqueue_retries_total`).
    pub retries: u64,
    /// Time from add to hand-out (`workqueue_queue_duration_seconds`).
    pub queue_latency: DurationSummary,
    /// Time from hand-out to done (`workqueue_work_duration_seconds`).
    pub work_duration: DurationSummary,
    /// Summed age of the items being processed (`workqueue_unfinished_work_seconds`).
    pub unfinished_work: Duration,
    /// Age of the oldest item being processed (`workqueue_longest_running_processor_seconds`).
    pub longest_running: Duration,
}

struct Inner<T> {
    snapshot: QueueMetricsSnapshot,
    added_at: HashMap<T, Instant>,
    started_at: HashMap<T, Instant>,
}

/// Metrics recorded by a queue, read with [`QueueMetrics::snapshot`].
pub struct QueueMetrics<T> {
    inner: Mutex<Inner<T>>,
}

impl<T: Eq + Hash + Clone> Default for QueueMetrics<T> {
    fn default() -> Self {
        QueueMetrics {
            inner: Mutex::new(Inner {
                snapshot: QueueMetricsSnapshot::default(),
                added_at: HashMap::new(),
                started_at: HashMap::new(),
            }),
        }
    }
}

impl<T: Eq + Hash + Clone> QueueMetrics<T> {
    pub(crate) fn add(&self, item: &T, now: Instant) {
        let mut m = self.inner.lock();
        m.snapshot.adds += 1;
        m.snapshot.depth += 1;
        if !m.added_at.contains_key(item) {
            m.added_at.insert(item.clone(), now);
        }
    }

    pub(crate) fn get(&self, item: &T, now: Instant) {
        let mut m = self.inner.lock();
        m.snapshot.depth = m.snapshot.depth.saturating_sub(1);
        m.started_at.insert(item.clone(), now);
        if let Some(t) = m.added_at.remove(item) {
            m.snapshot
                .queue_latency
                .observe(now.saturating_duration_since(t));
        }
    }

    pub(crate) fn done(&self, item: &T, now: Instant) {
        let mut m = self.inner.lock();
        if let Some(t) = m.started_at.remove(item) {
            m.snapshot
                .work_duration
                .observe(now.saturating_duration_since(t));
        }
    }

    pub(crate) fn retry(&self) {
        self.inner.lock().snapshot.retries += 1;
    }

    /// The metrics now on tokio's clock; see [`QueueMetrics::snapshot_at`].
    #[must_use]
    pub fn snapshot(&self) -> QueueMetricsSnapshot {
        self.snapshot_at(Instant::now())
    }

    /// The metrics with unfinished work and the longest running item computed at `now` (read
    /// it from the queue's clock).
    #[must_use]
    pub fn snapshot_at(&self, now: Instant) -> QueueMetricsSnapshot {
        let m = self.inner.lock();
        let mut s = m.snapshot;
        let age = |t: &Instant| now.saturating_duration_since(*t);
        s.unfinished_work = m.started_at.values().map(age).sum();
        s.longest_running = m.started_at.values().map(age).max().unwrap_or_default();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn latency_and_work_duration_are_measured_on_tokio_time() {
        let m = QueueMetrics::default();
        m.add(&"a", Instant::now());
        tokio::time::advance(Duration::from_secs(2)).await;
        m.get(&"a", Instant::now());
        tokio::time::advance(Duration::from_secs(3)).await;
        let s = m.snapshot();
        assert_eq!(s.queue_latency.max, Duration::from_secs(2));
        assert_eq!(s.longest_running, Duration::from_secs(3));
        m.done(&"a", Instant::now());
        let s = m.snapshot();
        assert_eq!(s.work_duration.sum, Duration::from_secs(3));
        assert_eq!((s.adds, s.depth), (1, 0));
    }
}
