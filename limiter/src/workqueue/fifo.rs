//! client-go's basic work queue (`queue.go`): a FIFO with `dirty` and `processing` sets.

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::metrics::QueueMetrics;

struct State<T> {
    queue: VecDeque<T>,
    dirty: HashSet<T>,
    processing: HashSet<T>,
    shutting_down: bool,
    drain: bool,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Wakes one getter per queued item, all of them on shutdown.
    item_added: Notify,
    /// Wakes `shut_down_with_drain` when processing empties.
    processing_idle: Notify,
    metrics: Option<Arc<QueueMetrics<T>>>,
}

/// A work queue that hands every item to one worker at a time and de-duplicates: client-go's
/// `workqueue.Typed[T]`. Clones share the queue.
///
/// # Semantics
/// - `add` of an item that is already queued does nothing; `add` of an item being processed
///   marks it dirty, and `done` puts it back at the tail: an item is never handed to two
///   workers at once, and adds during processing yield exactly one more processing.
/// - After `shut_down`, adds are ignored but `get` still hands out what is queued; then it
///   returns `None`.
/// - `len` counts queued items only.
pub struct Queue<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Queue<T> {
    /// An empty queue without metrics.
    #[must_use]
    pub fn new() -> Self {
        Self::build(None)
    }

    /// An empty queue that records into `metrics`.
    #[must_use]
    pub fn with_metrics(metrics: Arc<QueueMetrics<T>>) -> Self {
        Self::build(Some(metrics))
    }

    fn build(metrics: Option<Arc<QueueMetrics<T>>>) -> Self {
        Queue {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    dirty: HashSet::new(),
                    processing: HashSet::new(),
                    shutting_down: false,
                    drain: false,
                }),
                item_added: Notify::new(),
                processing_idle: Notify::new(),
                metrics,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn metrics(&self) -> Option<&Arc<QueueMetrics<T>>> {
        self.inner.metrics.as_ref()
    }

    /// Marks `item` as needing processing.
    pub fn add(&self, item: T) {
        let mut s = self.lock();
        if s.shutting_down || s.dirty.contains(&item) {
            return;
        }
        if let Some(m) = &self.inner.metrics {
            m.add(&item);
        }
        s.dirty.insert(item.clone());
        if s.processing.contains(&item) {
            return;
        }
        s.queue.push_back(item);
        drop(s);
        self.inner.item_added.notify_one();
    }

    /// Takes the next item, waiting for one; `None` once the queue is shut down and empty.
    ///
    /// # Cancellation
    /// Cancel-safe: an item is only taken in the poll that returns it.
    pub async fn get(&self) -> Option<T> {
        loop {
            let mut notified = pin!(self.inner.item_added.notified());
            {
                let mut s = self.lock();
                if let Some(item) = s.queue.pop_front() {
                    if let Some(m) = &self.inner.metrics {
                        m.get(&item);
                    }
                    s.dirty.remove(&item);
                    s.processing.insert(item.clone());
                    return Some(item);
                }
                if s.shutting_down {
                    return None;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Takes the next item if one is queued, without waiting.
    pub fn try_get(&self) -> Option<T> {
        let mut s = self.lock();
        let item = s.queue.pop_front()?;
        if let Some(m) = &self.inner.metrics {
            m.get(&item);
        }
        s.dirty.remove(&item);
        s.processing.insert(item.clone());
        Some(item)
    }

    /// Marks `item` as processed; if it was added meanwhile, it goes back to the tail.
    pub fn done(&self, item: &T) {
        let mut s = self.lock();
        if let Some(m) = &self.inner.metrics {
            m.done(item);
        }
        s.processing.remove(item);
        if s.dirty.contains(item) {
            s.queue.push_back(item.clone());
            drop(s);
            self.inner.item_added.notify_one();
        } else if s.processing.is_empty() {
            drop(s);
            self.inner.processing_idle.notify_waiters();
        }
    }

    /// Number of queued items (not counting items being processed).
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Whether no item is queued.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items and wakes every waiting `get`. Idempotent.
    pub fn shut_down(&self) {
        let mut s = self.lock();
        s.shutting_down = true;
        s.drain = false;
        drop(s);
        self.inner.item_added.notify_waiters();
        self.inner.processing_idle.notify_waiters();
    }

    /// Shuts down, then waits until every item being processed is done (or until a plain
    /// `shut_down` cancels the drain).
    pub async fn shut_down_with_drain(&self) {
        {
            let mut s = self.lock();
            s.drain = true;
            s.shutting_down = true;
        }
        self.inner.item_added.notify_waiters();
        loop {
            let mut idle = pin!(self.inner.processing_idle.notified());
            {
                let s = self.lock();
                if s.processing.is_empty() || !s.drain {
                    return;
                }
                idle.as_mut().enable();
            }
            idle.await;
        }
    }

    /// Whether the queue is shutting down.
    #[must_use]
    pub fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn adds_while_processing_give_exactly_one_more_processing() {
        let q = Queue::new();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.add("a");
        assert_eq!(q.len(), 0);
        q.done(&"a");
        assert_eq!(q.len(), 1);
        assert_eq!(q.get().await, Some("a"));
        q.done(&"a");
        assert!(q.is_empty());
    }

    #[tokio::test]
    async fn get_after_shutdown_drains_then_reports_none() {
        let q = Queue::new();
        q.add(1);
        q.shut_down();
        q.add(2);
        assert_eq!(q.get().await, Some(1));
        assert_eq!(q.get().await, None);
    }
}
