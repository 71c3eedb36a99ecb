//! Kubernetes Events for managed resources, written in the background through a
//! [`Recorder`] (kube's, on the provider's clock) so that a reconcile never waits for one.

mod recorder;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Resource;
use kube::runtime::events::{Event, EventType, Reporter};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use recorder::Recorder;

use crate::reconciler::meta::Clock;

/// Events waiting to be written; more are dropped (and counted) rather than slowing a
/// reconcile, as client-go's broadcaster drops events when its queue is full.
const QUEUE: usize = 4096;

/// The `reportingController` of our events.
pub const REPORTING_CONTROLLER: &str = "provider-mockcloud";

/// Sends events to a background writer.
#[derive(Clone, Debug)]
pub struct EventSink {
    tx: mpsc::Sender<(Event, ObjectReference)>,
    counters: Arc<EventCounters>,
}

/// How many events were queued, written, failed and dropped.
#[derive(Debug, Default)]
pub struct EventCounters {
    queued: AtomicU64,
    written: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
}

impl EventCounters {
    /// Events handed to the writer.
    #[must_use]
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }
    /// Events the API server accepted.
    #[must_use]
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
    /// Events the API server refused.
    #[must_use]
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
    /// Events dropped because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl EventSink {
    /// Starts the writer on `client`, dating events by `clock`. It ends when every clone of
    /// the sink is dropped.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start(client: kube::Client, clock: Clock) -> (EventSink, JoinHandle<()>) {
        EventSink::start_as(client, clock, REPORTING_CONTROLLER)
    }

    /// [`EventSink::start`], reporting as `controller` (an event's `reportingController`).
    ///
    /// # Panics
    /// Outside a tokio runtime.
    pub fn start_as(
        client: kube::Client,
        clock: Clock,
        controller: &str,
    ) -> (EventSink, JoinHandle<()>) {
        let reporter = Reporter {
            controller: controller.to_owned(),
            instance: None,
        };
        let mut recorder = Recorder::new(client, reporter, clock);
        let (tx, mut rx) = mpsc::channel::<(Event, ObjectReference)>(QUEUE);
        let counters = Arc::new(EventCounters::default());
        let task_counters = Arc::clone(&counters);
        let task = tokio::spawn(async move {
            while let Some((event, reference)) = rx.recv().await {
                match recorder.publish(&event, &reference).await {
                    Ok(()) => task_counters.written.fetch_add(1, Ordering::Relaxed),
                    Err(error) => {
                        tracing::debug!(%error, reason = %event.reason, "cannot write event");
                        task_counters.failed.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        });
        (EventSink { tx, counters }, task)
    }

    /// The counters.
    #[must_use]
    pub fn counters(&self) -> &Arc<EventCounters> {
        &self.counters
    }

    /// A `Normal` event.
    pub fn normal<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.send(obj, EventType::Normal, reason, note);
    }

    /// A `Warning` event.
    pub fn warning<K: Resource<DynamicType = ()>>(&self, obj: &K, reason: &str, note: String) {
        self.send(obj, EventType::Warning, reason, note);
    }

    fn send<K: Resource<DynamicType = ()>>(
        &self,
        obj: &K,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        self.record(obj.object_ref(&()), type_, reason, note);
    }

    /// An event about the object `reference` names: for objects of kinds known only at
    /// run time (a `DynamicObject`'s reference).
    pub fn record(&self, reference: ObjectReference, type_: EventType, reason: &str, note: String) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: Some(note),
            action: "Reconcile".to_owned(),
            secondary: None,
        };
        match self.tx.try_send((event, reference)) {
            Ok(()) => self.counters.queued.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.counters.dropped.fetch_add(1, Ordering::Relaxed),
        };
    }
}
