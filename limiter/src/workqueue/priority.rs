//! controller-runtime's priority queue (`pkg/controller/priorityqueue`, v0.23).

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::AddOpts;
use super::config::QueueConfig;
use super::metrics::QueueMetrics;
use super::ratelimiters::SharedRateLimiter;
use crate::clock::Clock;
use crate::go::GoDuration;
use crate::instant::add_duration;

/// Order of entries: ready ones first (higher priority first, then first added), then waiting
/// ones by ready time, priority and age. The counter makes every key unique.
type SortKey = (bool, Option<Instant>, Reverse<i64>, u64);

#[derive(Clone, Copy)]
struct Entry {
    priority: i64,
    counter: u64,
    ready_at: Option<Instant>,
}

impl Entry {
    fn sort_key(&self) -> SortKey {
        (
            self.ready_at.is_some(),
            self.ready_at,
            Reverse(self.priority),
            self.counter,
        )
    }
}

struct State<T> {
    entries: HashMap<T, Entry>,
    order: BTreeMap<SortKey, T>,
    locked: HashSet<T>,
    counter: u64,
    waiters: VecDeque<oneshot::Sender<(T, i64)>>,
    shut_down: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    limiter: SharedRateLimiter<T>,
    clock: Clock,
    metrics: Option<Arc<QueueMetrics<T>>>,
    wake: Arc<Notify>,
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        self.wake.notify_one();
    }
}

/// controller-runtime's `PriorityQueue`: one entry per key, priorities, and no double
/// processing of a key. Clones share the queue.
///
/// # Semantics
/// - At most one entry per key among keys not handed out. Merging an add into an entry keeps
///   the earlier ready time (ready beats waiting) and the higher priority.
/// - `add_rate_limited` always calls the limiter; with both `after` and `rate_limited` the
///   shorter wait wins. A wait of zero or less is ready now.
/// - An entry waits until `now + after` on the queue's clock and is ready at that instant
///   exactly (inclusive), to the nanosecond on a virtual clock.
/// - Ready entries are handed out by priority, then in the order they became ready; a waiting
///   entry gets a fresh position when its time comes. A key handed out and not yet `done` is
///   skipped (its new entry keeps its place).
/// - `len` counts ready entries, including ones whose key is handed out.
/// - `shut_down` is immediate: pending entries are dropped and every `get` returns `None`.
///   Unlike Go, a second `shut_down` is harmless rather than a panic.
pub struct PriorityQueue<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for PriorityQueue<T> {
    fn clone(&self) -> Self {
        PriorityQueue {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> PriorityQueue<T> {
    /// `priorityqueue.New` with the given rate limiter, on tokio's clock.
    ///
    /// # Panics
    /// Outside a tokio runtime (it spawns its timer task).
    #[must_use]
    pub fn new(limiter: SharedRateLimiter<T>) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// The same, recording into `metrics`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_metrics(limiter: SharedRateLimiter<T>, metrics: Arc<QueueMetrics<T>>) -> Self {
        Self::with_config(limiter, QueueConfig::default().metrics(metrics))
    }

    /// With the given clock and metrics (Go's queue reads `time.Now`; this one reads the
    /// configured clock). The limiter keeps its own clock.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn with_config(limiter: SharedRateLimiter<T>, config: QueueConfig<T>) -> Self {
        let QueueConfig { clock, metrics } = config;
        let wake = Arc::new(Notify::new());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                entries: HashMap::new(),
                order: BTreeMap::new(),
                locked: HashSet::new(),
                counter: 0,
                waiters: VecDeque::new(),
                shut_down: false,
            }),
            limiter,
            clock: clock.clone(),
            metrics,
            wake: Arc::clone(&wake),
        });
        tokio::spawn(timer_loop(Arc::downgrade(&shared), wake, clock));
        PriorityQueue { shared }
    }

    /// `AddWithOpts(opts, items...)`.
    pub fn add_with_opts(&self, opts: AddOpts, items: impl IntoIterator<Item = T>) {
        let now = self.shared.clock.now();
        let mut s = self.shared.state.lock();
        if s.shut_down {
            return;
        }
        let mut wake_timer = false;
        for key in items {
            let mut after = opts.after;
            if opts.rate_limited {
                let w = self.shared.limiter.when(&key);
                if after == GoDuration::ZERO || w < after {
                    after = w;
                }
            }
            let ready_at = if after > GoDuration::ZERO {
                if let Some(m) = &self.shared.metrics {
                    m.retry();
                }
                Some(add_duration(now, after))
            } else {
                None
            };
            let entry = match s.entries.get(&key).copied() {
                None => {
                    let counter = s.counter;
                    s.counter += 1;
                    if ready_at.is_none()
                        && let Some(m) = &self.shared.metrics
                    {
                        m.add(&key, now);
                    }
                    Entry {
                        priority: opts.priority,
                        counter,
                        ready_at,
                    }
                }
                Some(mut e) => {
                    s.order.remove(&e.sort_key());
                    if opts.priority > e.priority {
                        e.priority = opts.priority;
                        e.counter = s.counter;
                        s.counter += 1;
                    }
                    if let Some(old) = e.ready_at
                        && ready_at.is_none_or(|new| new < old)
                    {
                        if ready_at.is_none()
                            && let Some(m) = &self.shared.metrics
                        {
                            m.add(&key, now);
                        }
                        e.ready_at = ready_at;
                    }
                    e
                }
            };
            if entry.ready_at.is_some() {
                wake_timer = true;
            }
            s.order.insert(entry.sort_key(), key.clone());
            s.entries.insert(key, entry);
        }
        self.pass(&mut s, now);
        drop(s);
        if wake_timer {
            self.shared.wake.notify_one();
        }
    }

    /// `Add(item)`: ready now, priority 0.
    pub fn add(&self, item: T) {
        self.add_with_opts(AddOpts::default(), [item]);
    }

    /// `AddAfter(item, after)`.
    pub fn add_after(&self, item: T, after: GoDuration) {
        self.add_with_opts(AddOpts::after(after), [item]);
    }

    /// `AddRateLimited(item)`.
    pub fn add_rate_limited(&self, item: T) {
        self.add_with_opts(AddOpts::rate_limited(), [item]);
    }

    /// Moves due waiting entries to the ready set (fresh positions, in their order), then hands
    /// ready entries to waiting getters.
    fn pass(&self, s: &mut State<T>, now: Instant) {
        promote(s, now, self.shared.metrics.as_deref());
        while !s.waiters.is_empty() {
            let next = s
                .order
                .iter()
                .take_while(|(k, _)| !k.0)
                .find(|(_, key)| !s.locked.contains(*key))
                .map(|(k, key)| (*k, key.clone()));
            let Some((sort_key, key)) = next else {
                break;
            };
            let Some(waiter) = s.waiters.pop_front() else {
                break;
            };
            if waiter.is_closed() {
                continue;
            }
            let entry = s.entries.remove(&key).expect("ordered entries are indexed");
            s.order.remove(&sort_key);
            match waiter.send((key.clone(), entry.priority)) {
                Ok(()) => {
                    if let Some(m) = &self.shared.metrics {
                        m.get(&key, now);
                    }
                    s.locked.insert(key);
                }
                Err((key, _)) => {
                    s.order.insert(sort_key, key.clone());
                    s.entries.insert(key, entry);
                }
            }
        }
    }

    /// `GetWithPriority()`: the next ready key and its priority; `None` once shut down.
    ///
    /// # Cancellation
    /// Cancel-safe: a key handed to a dropped getter is put back.
    pub async fn get_with_priority(&self) -> Option<(T, i64)> {
        let rx = {
            let mut s = self.shared.state.lock();
            if s.shut_down {
                return None;
            }
            let (tx, rx) = oneshot::channel();
            s.waiters.push_back(tx);
            self.pass(&mut s, self.shared.clock.now());
            rx
        };
        rx.await.ok()
    }

    /// `Get()`: the next ready key.
    pub async fn get(&self) -> Option<T> {
        self.get_with_priority().await.map(|(k, _)| k)
    }

    /// `Done(item)`: the key may be handed out again.
    pub fn done(&self, item: &T) {
        let now = self.shared.clock.now();
        let mut s = self.shared.state.lock();
        s.locked.remove(item);
        if let Some(m) = &self.shared.metrics {
            m.done(item, now);
        }
        self.pass(&mut s, now);
    }

    /// `Forget(item)`: resets the rate limiter for `item`.
    pub fn forget(&self, item: &T) {
        self.shared.limiter.forget(item);
    }

    /// `NumRequeues(item)`.
    #[must_use]
    pub fn num_requeues(&self, item: &T) -> usize {
        self.shared.limiter.num_requeues(item)
    }

    /// Number of ready entries (including those whose key is handed out).
    #[must_use]
    pub fn len(&self) -> usize {
        let now = self.shared.clock.now();
        let mut s = self.shared.state.lock();
        promote(&mut s, now, self.shared.metrics.as_deref());
        s.order.keys().take_while(|k| !k.0).count()
    }

    /// Whether no entry is ready.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shuts down at once: pending entries are dropped, getters return `None`.
    pub fn shut_down(&self) {
        let mut s = self.shared.state.lock();
        s.shut_down = true;
        s.entries.clear();
        s.order.clear();
        s.waiters.clear();
        drop(s);
        self.shared.wake.notify_one();
    }

    /// Whether the queue is shut down.
    #[must_use]
    pub fn shutting_down(&self) -> bool {
        self.shared.state.lock().shut_down
    }

    pub(crate) fn metrics(&self) -> Option<&Arc<QueueMetrics<T>>> {
        self.shared.metrics.as_ref()
    }

    /// The clock the queue reads and sleeps on.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }
}

fn promote<T: Eq + Hash + Clone>(
    s: &mut State<T>,
    now: Instant,
    metrics: Option<&QueueMetrics<T>>,
) {
    let due: Vec<SortKey> = s
        .order
        .range((true, None, Reverse(i64::MAX), 0)..)
        .take_while(|(k, _)| k.1.is_some_and(|t| t <= now))
        .map(|(k, _)| *k)
        .collect();
    for k in due {
        let key = s.order.remove(&k).expect("collected from the map");
        let counter = s.counter;
        s.counter += 1;
        let e = s
            .entries
            .get_mut(&key)
            .expect("ordered entries are indexed");
        e.ready_at = None;
        e.counter = counter;
        let sort_key = e.sort_key();
        if let Some(m) = metrics {
            m.add(&key, now);
        }
        s.order.insert(sort_key, key);
    }
}

/// Hands out entries when their ready time comes.
async fn timer_loop<T: Eq + Hash + Clone + Send + Sync + 'static>(
    shared: Weak<Shared<T>>,
    wake: Arc<Notify>,
    clock: Clock,
) {
    loop {
        let next = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let q = PriorityQueue { shared };
            let mut s = q.shared.state.lock();
            if s.shut_down {
                return;
            }
            q.pass(&mut s, clock.now());
            s.order
                .range((true, None, Reverse(i64::MAX), 0)..)
                .next()
                .and_then(|(k, _)| k.1)
        };
        clock.sleep_until_or_notified(&wake, next).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workqueue::ItemExponential;
    use std::time::Duration;

    fn pq() -> PriorityQueue<&'static str> {
        PriorityQueue::new(Arc::new(ItemExponential::new(
            Duration::from_millis(100),
            Duration::from_secs(10),
        )))
    }

    #[tokio::test(start_paused = true)]
    async fn higher_priority_is_handed_out_first() {
        let q = pq();
        q.add_with_opts(AddOpts::default().with_priority(0), ["a"]);
        q.add_with_opts(AddOpts::default().with_priority(10), ["b"]);
        q.add_with_opts(AddOpts::default().with_priority(0), ["c"]);
        q.add_with_opts(AddOpts::default().with_priority(5), ["a"]);
        assert_eq!(q.len(), 3);
        assert_eq!(q.get_with_priority().await, Some(("b", 10)));
        assert_eq!(q.get_with_priority().await, Some(("a", 5)));
        assert_eq!(q.get_with_priority().await, Some(("c", 0)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_being_processed_is_never_handed_out_twice() {
        let q = pq();
        q.add("a");
        assert_eq!(q.get().await, Some("a"));
        q.add("a");
        q.add("b");
        assert_eq!(q.get().await, Some("b"));
        q.done(&"a");
        assert_eq!(q.get().await, Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn shut_down_drops_everything_and_is_idempotent() {
        let q = pq();
        q.add("x");
        q.shut_down();
        q.shut_down();
        assert_eq!(q.get().await, None);
        assert_eq!(q.len(), 0);
    }
}
