//! client-go's delaying queue (`delaying_queue.go`): `add_after` holds an item back until its
//! ready time.

use std::hash::Hash;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::config::QueueConfig;
use super::fifo::Queue;
use super::heap::WaitHeap;
use super::metrics::QueueMetrics;
use crate::go::GoDuration;
use crate::instant::add_duration;

struct Shared<T> {
    waiting: Mutex<WaitHeap<T>>,
    wake: Arc<Notify>,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // Lets the timer task see that every handle is gone.
        self.wake.notify_one();
    }
}

/// A [`Queue`] plus `add_after`: client-go's `TypedDelayingInterface`. Clones share the queue.
///
/// # Semantics
/// - `add_after(x, d)` with `d ≤ 0` (negative included) is a plain `add`: it de-duplicates
///   against the queued items, only marks `x` dirty while it is processing, and leaves a
///   waiting entry for `x` alone, so `x` comes back once more when that entry is due.
/// - Otherwise `x` waits in a heap until `now + d`, read from the queue's clock; a later
///   `add_after` of a waiting item keeps the earlier time. An entry is ready at its ready time
///   exactly (inclusive), to the nanosecond on a virtual clock.
/// - The heap de-duplicates only among waiting entries: `add(x); add_after(x, 1s)` processes
///   `x` twice.
/// - Entries with the same ready time come out in Go's `container/heap` order, not insertion
///   order, exactly as in client-go.
/// - After a shutdown (with or without drain) waiting entries never arrive: Go's waiting loop
///   would `Add` them to a queue that ignores adds.
///
/// A timer task on the current tokio runtime, sleeping on the queue's clock, moves ready
/// entries into the queue; it ends when the queue shuts down or the last handle is dropped.
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    shared: Arc<Shared<T>>,
}

impl<T> Clone for DelayingQueue<T> {
    fn clone(&self) -> Self {
        DelayingQueue {
            queue: self.queue.clone(),
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// A new delaying queue without metrics, on tokio's clock.
    ///
    /// # Panics
    /// Outside a tokio runtime (it spawns its timer task).
    #[must_use]
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A new delaying queue recording into `metrics`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_metrics(metrics: Arc<QueueMetrics<T>>) -> Self {
        Self::with_config(QueueConfig::default().metrics(metrics))
    }

    /// `NewTypedDelayingQueueWithConfig`: a new delaying queue with the given clock and metrics.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_config(config: QueueConfig<T>) -> Self {
        let queue = Queue::with_config(config);
        let wake = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            waiting: Mutex::new(WaitHeap::new()),
            wake: Arc::clone(&wake),
        });
        tokio::spawn(waiting_loop(Arc::downgrade(&shared), wake, queue.clone()));
        DelayingQueue { queue, shared }
    }

    /// Adds `item` once `after` has passed (at once if `after ≤ 0`).
    pub fn add_after(&self, item: T, after: GoDuration) {
        if self.queue.shutting_down() {
            return;
        }
        if let Some(m) = self.queue.metrics() {
            m.retry();
        }
        if after <= GoDuration::ZERO {
            self.queue.add(item);
            return;
        }
        let ready_at = add_duration(self.queue.clock().now(), after);
        let head = self.shared.waiting.lock().insert(item, ready_at);
        if head {
            self.shared.wake.notify_one();
        }
    }

    /// Number of entries waiting for their ready time.
    #[must_use]
    pub fn waiting_len(&self) -> usize {
        self.shared.waiting.lock().len()
    }

    /// The underlying FIFO queue.
    #[must_use]
    pub fn queue(&self) -> &Queue<T> {
        &self.queue
    }

    /// See [`Queue::add`].
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// See [`Queue::get`].
    pub async fn get(&self) -> Option<T> {
        self.queue.get().await
    }

    /// See [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// See [`Queue::len`].
    #[must_use]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// See [`Queue::is_empty`].
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Shuts down and drops every waiting entry.
    pub fn shut_down(&self) {
        self.queue.shut_down();
        self.shared.waiting.lock().clear();
        self.shared.wake.notify_one();
    }

    /// Shuts down, dropping waiting entries, and waits for items in processing: see
    /// [`Queue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.shared.waiting.lock().clear();
        self.shared.wake.notify_one();
        self.queue.shut_down_with_drain().await;
    }

    /// Whether the queue is shutting down.
    #[must_use]
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }
}

/// Moves entries whose ready time has come into the queue, then sleeps until the next one or
/// until woken by an earlier entry.
async fn waiting_loop<T: Eq + Hash + Clone + Send + 'static>(
    shared: Weak<Shared<T>>,
    wake: Arc<Notify>,
    queue: Queue<T>,
) {
    let clock = queue.clock().clone();
    loop {
        let next = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            if queue.shutting_down() {
                return;
            }
            let now = clock.now();
            let mut ready = Vec::new();
            let next = {
                let mut waiting = shared.waiting.lock();
                while let Some(item) = waiting.pop_ready(now) {
                    ready.push(item);
                }
                waiting.peek_ready_at()
            };
            for item in ready {
                queue.add(item);
            }
            next
        };
        clock.sleep_until_or_notified(&wake, next).await;
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn an_item_waits_for_its_earliest_ready_time() {
        let q = DelayingQueue::new();
        q.add_after("a", GoDuration(1_000_000_000));
        q.add_after("a", GoDuration(500_000_000));
        let start = tokio::time::Instant::now();
        assert_eq!(q.get().await, Some("a"));
        assert_eq!(start.elapsed(), Duration::from_millis(500));
    }

    #[tokio::test(start_paused = true)]
    async fn an_item_can_be_queued_and_waiting_at_once() {
        let q = DelayingQueue::new();
        q.add("c");
        q.add_after("c", GoDuration(1_000_000_000));
        assert_eq!(q.get().await, Some("c"));
        q.done(&"c");
        assert_eq!(q.get().await, Some("c"));
    }
}
