//! client-go's basic work queue (`queue.go`): a FIFO with `dirty` and `processing` sets.

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;
use std::pin::pin;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::config::QueueConfig;
use super::metrics::QueueMetrics;
use crate::clock::Clock;

struct State<T> {
    queue: VecDeque<T>,
    dirty: HashSet<T>,
    processing: HashSet<T>,
    shutting_down: bool,
    drain: bool,
    /// `ShutDownWithDrain` callers waiting on Go's condition variable, longest-waiting first.
    drain_waiters: VecDeque<u64>,
    /// Drain callers woken by a signal or broadcast that have not re-checked yet.
    drain_woken: HashSet<u64>,
    next_ticket: u64,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Wakes one getter per queued item, all of them on shutdown.
    item_added: Notify,
    /// Wakes the drain callers to look whether they were signalled.
    drain_signal: Notify,
    clock: Clock,
    metrics: Option<Arc<QueueMetrics<T>>>,
}

/// Whom a Go `cond.Signal()` reached.
enum Signalled {
    Getter,
    Drainer,
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
/// - `shut_down_with_drain` waits on the same condition variable as Go's, with Go's wake-ups:
///   `done` signals one waiter when it re-queues a dirty item or when processing becomes
///   empty, and a shutdown wakes every waiter. A drain caller returns when, woken, it finds
///   nothing in processing (or the drain cancelled by `shut_down`). So the `done` that empties
///   processing releases it, even if that `done` re-queued its item; with two drain callers
///   waiting, one `done` releases only the one that has waited longest.
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
    /// An empty queue without metrics, on tokio's clock.
    #[must_use]
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// An empty queue that records into `metrics`.
    #[must_use]
    pub fn with_metrics(metrics: Arc<QueueMetrics<T>>) -> Self {
        Self::with_config(QueueConfig::default().metrics(metrics))
    }

    /// `NewTypedWithConfig`: an empty queue with the given clock and metrics.
    #[must_use]
    pub fn with_config(config: QueueConfig<T>) -> Self {
        Queue {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    queue: VecDeque::new(),
                    dirty: HashSet::new(),
                    processing: HashSet::new(),
                    shutting_down: false,
                    drain: false,
                    drain_waiters: VecDeque::new(),
                    drain_woken: HashSet::new(),
                    next_ticket: 0,
                }),
                item_added: Notify::new(),
                drain_signal: Notify::new(),
                clock: config.clock,
                metrics: config.metrics,
            }),
        }
    }

    pub(crate) fn metrics(&self) -> Option<&Arc<QueueMetrics<T>>> {
        self.inner.metrics.as_ref()
    }

    /// The clock the queue's metrics read.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.inner.clock
    }

    /// Marks `item` as needing processing.
    pub fn add(&self, item: T) {
        let mut s = self.inner.state.lock();
        if s.shutting_down || s.dirty.contains(&item) {
            return;
        }
        if let Some(m) = &self.inner.metrics {
            m.add(&item, self.inner.clock.now());
        }
        s.dirty.insert(item.clone());
        if s.processing.contains(&item) {
            return;
        }
        s.queue.push_back(item);
        let to = signal(&mut s);
        drop(s);
        self.wake(to);
    }

    /// Wakes whom a signal reached, after the lock is released.
    fn wake(&self, to: Signalled) {
        match to {
            Signalled::Getter => self.inner.item_added.notify_one(),
            Signalled::Drainer => self.inner.drain_signal.notify_waiters(),
        }
    }

    /// Takes the next item, waiting for one; `None` once the queue is shut down and empty.
    ///
    /// # Cancellation
    /// Cancel-safe: an item is only taken in the poll that returns it.
    pub async fn get(&self) -> Option<T> {
        loop {
            let mut notified = pin!(self.inner.item_added.notified());
            {
                let mut s = self.inner.state.lock();
                if let Some(item) = self.pop(&mut s) {
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

    fn pop(&self, s: &mut State<T>) -> Option<T> {
        let item = s.queue.pop_front()?;
        if let Some(m) = &self.inner.metrics {
            m.get(&item, self.inner.clock.now());
        }
        s.dirty.remove(&item);
        s.processing.insert(item.clone());
        Some(item)
    }

    /// Takes the next item if one is queued, without waiting.
    pub fn try_get(&self) -> Option<T> {
        let mut s = self.inner.state.lock();
        self.pop(&mut s)
    }

    /// Marks `item` as processed; if it was added meanwhile, it goes back to the tail.
    pub fn done(&self, item: &T) {
        let mut s = self.inner.state.lock();
        if let Some(m) = &self.inner.metrics {
            m.done(item, self.inner.clock.now());
        }
        s.processing.remove(item);
        let to = if s.dirty.contains(item) {
            s.queue.push_back(item.clone());
            signal(&mut s)
        } else if s.processing.is_empty() && !s.drain_waiters.is_empty() {
            // Go signals here too; with no drain caller waiting, it can only reach a getter
            // that finds nothing to take.
            signal(&mut s)
        } else {
            return;
        };
        drop(s);
        self.wake(to);
    }

    /// Number of queued items (not counting items being processed).
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.state.lock().queue.len()
    }

    /// Whether no item is queued.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops accepting items, cancels any drain in progress and wakes every waiting `get` and
    /// drain caller. Idempotent.
    pub fn shut_down(&self) {
        let mut s = self.inner.state.lock();
        s.drain = false;
        s.shutting_down = true;
        broadcast(&mut s);
        drop(s);
        self.inner.item_added.notify_waiters();
        self.inner.drain_signal.notify_waiters();
    }

    /// Shuts down, then waits until nothing is processing (or until a plain `shut_down` cancels
    /// the drain). See the type's `# Semantics` for exactly when it returns.
    ///
    /// # Cancellation
    /// Dropping the future stops waiting; the queue stays shut down.
    pub async fn shut_down_with_drain(&self) {
        let mut waiter = DrainWaiter {
            queue: self,
            ticket: None,
        };
        {
            let mut s = self.inner.state.lock();
            s.drain = true;
            s.shutting_down = true;
            broadcast(&mut s);
            self.inner.item_added.notify_waiters();
            self.inner.drain_signal.notify_waiters();
            if !must_wait(&s) {
                return;
            }
            waiter.ticket = Some(enqueue_waiter(&mut s));
        }
        loop {
            let mut signalled = pin!(self.inner.drain_signal.notified());
            {
                let mut s = self.inner.state.lock();
                let ticket = waiter.ticket.expect("a waiting drain holds a ticket");
                if s.drain_woken.remove(&ticket) {
                    // Woken: re-check, as Go's loop around `cond.Wait` does.
                    if !must_wait(&s) {
                        waiter.ticket = None;
                        return;
                    }
                    waiter.ticket = Some(enqueue_waiter(&mut s));
                }
                signalled.as_mut().enable();
            }
            signalled.await;
        }
    }

    /// Whether the queue is shutting down.
    #[must_use]
    pub fn shutting_down(&self) -> bool {
        self.inner.state.lock().shutting_down
    }
}

/// Go's `cond.Signal()`: wakes the drain caller that has waited longest, or else a getter
/// (getters and drain callers never wait at the same time: getters leave at shutdown).
fn signal<T>(s: &mut State<T>) -> Signalled {
    match s.drain_waiters.pop_front() {
        Some(ticket) => {
            s.drain_woken.insert(ticket);
            Signalled::Drainer
        }
        None => Signalled::Getter,
    }
}

/// Go's `cond.Broadcast()` for the drain callers (the caller wakes the getters).
fn broadcast<T>(s: &mut State<T>) {
    let all: Vec<u64> = s.drain_waiters.drain(..).collect();
    s.drain_woken.extend(all);
}

/// The condition of Go's drain loop.
fn must_wait<T>(s: &State<T>) -> bool {
    !s.processing.is_empty() && s.drain
}

/// Joins the condition variable's waiters at the back.
fn enqueue_waiter<T>(s: &mut State<T>) -> u64 {
    let ticket = s.next_ticket;
    s.next_ticket += 1;
    s.drain_waiters.push_back(ticket);
    ticket
}

/// Leaves the condition variable's waiters if a drain caller is dropped while waiting.
struct DrainWaiter<'a, T: Eq + Hash + Clone + Send + 'static> {
    queue: &'a Queue<T>,
    ticket: Option<u64>,
}

impl<T: Eq + Hash + Clone + Send + 'static> Drop for DrainWaiter<'_, T> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            let mut s = self.queue.inner.state.lock();
            s.drain_waiters.retain(|t| *t != ticket);
            s.drain_woken.remove(&ticket);
        }
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

    #[tokio::test(start_paused = true)]
    async fn a_drain_returns_at_the_done_that_empties_processing_even_if_it_requeues() {
        let q = Queue::new();
        q.add("x");
        assert_eq!(q.get().await, Some("x"));
        q.add("x");
        let drained = tokio::spawn({
            let q = q.clone();
            async move { q.shut_down_with_drain().await }
        });
        crate::clock::settle().await;
        assert!(!drained.is_finished());
        q.done(&"x");
        crate::clock::settle().await;
        assert!(drained.is_finished());
        assert_eq!(q.get().await, Some("x"));
    }

    #[tokio::test(start_paused = true)]
    async fn one_done_releases_only_the_longest_waiting_of_two_drains() {
        let q = Queue::new();
        q.add(1);
        assert_eq!(q.get().await, Some(1));
        let spawn_drain =
            |q: Queue<i32>| tokio::spawn(async move { q.shut_down_with_drain().await });
        let first = spawn_drain(q.clone());
        crate::clock::settle().await;
        let second = spawn_drain(q.clone());
        crate::clock::settle().await;
        q.done(&1);
        crate::clock::settle().await;
        // The second call's broadcast sent the first to the back of the line.
        assert!(second.is_finished());
        assert!(!first.is_finished());
        q.shut_down();
        crate::clock::settle().await;
        assert!(first.is_finished());
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
