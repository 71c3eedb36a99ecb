//! The queue a controller works from: client-go's classic rate-limiting queue or
//! controller-runtime's priority queue, behind controller-runtime's interface.

use std::hash::Hash;

use super::{AddOpts, PriorityQueue, QueueMetricsSnapshot, RateLimitingQueue};
use crate::clock::Clock;

/// Either queue, as controller-runtime's controller sees it.
///
/// The classic queue gets controller-runtime's wrapper semantics: `rate_limited` means
/// `add_rate_limited`, else `after > 0` means `add_after`, else `add`; priorities are ignored
/// and every item comes out with priority 0.
pub enum WorkQueue<T> {
    /// client-go's rate-limiting queue (controller-runtime ≤ v0.22 default).
    Classic(RateLimitingQueue<T>),
    /// controller-runtime's priority queue (v0.23+ default).
    Priority(PriorityQueue<T>),
}

impl<T> Clone for WorkQueue<T> {
    fn clone(&self) -> Self {
        match self {
            WorkQueue::Classic(q) => WorkQueue::Classic(q.clone()),
            WorkQueue::Priority(q) => WorkQueue::Priority(q.clone()),
        }
    }
}

impl<T: Eq + Hash + Clone + Send + Sync + 'static> WorkQueue<T> {
    /// The Go type name the conformance transcripts print for this queue.
    #[must_use]
    pub fn go_type_name(&self) -> &'static str {
        match self {
            WorkQueue::Classic(_) => {
                "*controller.priorityQueueWrapper[sigs.k8s.io/controller-runtime/pkg/reconcile.Request]"
            }
            WorkQueue::Priority(_) => {
                "*priorityqueue.priorityqueue[sigs.k8s.io/controller-runtime/pkg/reconcile.Request]"
            }
        }
    }

    /// `AddWithOpts(opts, item)`.
    pub fn add_with_opts(&self, opts: AddOpts, item: T) {
        match self {
            WorkQueue::Classic(q) => {
                if opts.rate_limited {
                    q.add_rate_limited(item);
                } else if opts.after > crate::go::GoDuration::ZERO {
                    q.delaying().add_after(item, opts.after);
                } else {
                    q.delaying().add(item);
                }
            }
            WorkQueue::Priority(q) => q.add_with_opts(opts, [item]),
        }
    }

    /// `Add(item)`: what a watch event handler does.
    pub fn add(&self, item: T) {
        self.add_with_opts(AddOpts::default(), item);
    }

    /// `GetWithPriority()`.
    pub async fn get_with_priority(&self) -> Option<(T, i64)> {
        match self {
            WorkQueue::Classic(q) => q.delaying().get().await.map(|x| (x, 0)),
            WorkQueue::Priority(q) => q.get_with_priority().await,
        }
    }

    /// `Done(item)`.
    pub fn done(&self, item: &T) {
        match self {
            WorkQueue::Classic(q) => q.delaying().done(item),
            WorkQueue::Priority(q) => q.done(item),
        }
    }

    /// `Forget(item)`.
    pub fn forget(&self, item: &T) {
        match self {
            WorkQueue::Classic(q) => q.forget(item),
            WorkQueue::Priority(q) => q.forget(item),
        }
    }

    /// `NumRequeues(item)`.
    #[must_use]
    pub fn num_requeues(&self, item: &T) -> usize {
        match self {
            WorkQueue::Classic(q) => q.num_requeues(item),
            WorkQueue::Priority(q) => q.num_requeues(item),
        }
    }

    /// `Len()`.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            WorkQueue::Classic(q) => q.delaying().len(),
            WorkQueue::Priority(q) => q.len(),
        }
    }

    /// Whether `len() == 0`.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `ShutDown()`.
    pub fn shut_down(&self) {
        match self {
            WorkQueue::Classic(q) => q.delaying().shut_down(),
            WorkQueue::Priority(q) => q.shut_down(),
        }
    }

    /// `ShuttingDown()`.
    #[must_use]
    pub fn shutting_down(&self) -> bool {
        match self {
            WorkQueue::Classic(q) => q.delaying().shutting_down(),
            WorkQueue::Priority(q) => q.shutting_down(),
        }
    }

    /// The clock the queue reads and sleeps on.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        match self {
            WorkQueue::Classic(q) => q.delaying().queue().clock(),
            WorkQueue::Priority(q) => q.clock(),
        }
    }

    /// Metrics, if the queue records them, as of now on the queue's clock.
    #[must_use]
    pub fn metrics(&self) -> Option<QueueMetricsSnapshot> {
        let now = self.clock().now();
        match self {
            WorkQueue::Classic(q) => q.delaying().queue().metrics().map(|m| m.snapshot_at(now)),
            WorkQueue::Priority(q) => q.metrics().map(|m| m.snapshot_at(now)),
        }
    }
}
