//! Kubernetes events about XRs, recorded as core's composite reconciler records them
//! (`composite/reconciler.go`, `composite/api.go`): the reason, type and message of each,
//! written to the API server in the background, so that a reconcile never waits for one.
//!
//! Core records through controller-runtime's `GetEventRecorderFor`, client-go's legacy
//! recorder (`tools/record`), and so does this one, on tokio's clock: core/v1 Events with
//! the source component core names and no host, queued as the broadcaster queues them and
//! passed through its `EventCorrelator` ([`correlator`]) before a POST or a PATCH
//! ([`writer`]). Per XR and event type, 25 events reach the API server in a burst, then one
//! per 300 s; a repeat of one reason and message is a PATCH of its count; the 10th
//! distinct message of one reason within 600 s is combined into an event of its own. The
//! reasons, types and messages are core's; the events carry no annotations (core's carry
//! the token and the controller's name).

pub mod correlator;
mod names;
pub mod writer;

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::DynamicObject;
use kube::runtime::events::EventType;
use provider::reconciler::meta::Clock;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use writer::EventCounters;

use names::Names;
use writer::{MAX_QUEUED_EVENTS, Writer};

/// The seed of the writer's random first retry wait ([`Recorder::start`]).
pub const DEFAULT_SEED: u64 = 0x0E7E_7750;

#[cfg(test)]
mod tests;

/// The component core's XR events come from (`source.component`, and so
/// `reportingComponent`): the recorder of the definition controller that starts every XR
/// controller (`definition/reconciler.go`, `Setup`). controller-runtime sets no host.
pub const REPORTING_CONTROLLER: &str =
    "defined/compositeresourcedefinition.apiextensions.crossplane.io";

/// `reasonResolve`: the Composition and revision chosen, or why not.
pub const REASON_SELECT_COMPOSITION: &str = "SelectComposition";
/// `reasonCompose`: composing, unready and unsynced resources, function results.
pub const REASON_COMPOSE: &str = "ComposeResources";
/// `reasonInit`: the finalizer could not be added.
pub const REASON_INIT: &str = "InitializeCompositeResource";
/// `reasonDelete`: the finalizer could not be removed.
pub const REASON_DELETE: &str = "DeleteCompositeResource";
/// `reasonReconcileRequestHandled`: a new `crossplane.io/reconcile-requested-at` token.
pub const REASON_RECONCILE_REQUEST_HANDLED: &str = "ReconcileRequestHandled";
/// `reasonCompositionSelection` (`api.go`): the default or enforced Composition selected.
pub const REASON_COMPOSITION_SELECTION: &str = "CompositionSelection";

/// What a recorder shares with its clones.
#[derive(Debug)]
struct Shared {
    incoming: mpsc::Sender<Event>,
    clock: Clock,
    names: Arc<Names>,
    counters: Arc<EventCounters>,
    recorded: Arc<Recorded>,
}

/// Every event a recorder was asked to record, by object and reason, before the
/// broadcaster's queue and client-go's spam filter and aggregation: what the reconciler
/// did, where the Events API shows what reached the server (a `ReconcileRequestHandled`
/// for an XR whose Normal events spent their burst waits up to 300 s there).
#[derive(Debug, Default)]
pub struct Recorded {
    counts: std::sync::Mutex<std::collections::HashMap<(String, String), u64>>,
}

impl Recorded {
    fn add(&self, object: &str, reason: &str) {
        *self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry((object.to_owned(), reason.to_owned()))
            .or_default() += 1;
    }

    /// How many events of `reason` were recorded for each object, by its name.
    #[must_use]
    pub fn by_object(&self, reason: &str) -> std::collections::BTreeMap<String, u64> {
        self.counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|((_, r), _)| r == reason)
            .map(|((object, _), n)| (object.clone(), *n))
            .collect()
    }
}

/// Records XR events; [`Recorder::nop`] records nothing (core's `NewNopRecorder`, the
/// reconciler's default).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    shared: Option<Arc<Shared>>,
}

impl Recorder {
    /// A recorder that records nothing.
    #[must_use]
    pub fn nop() -> Self {
        Recorder::default()
    }

    /// Starts a writer on `client`, dated by tokio's clock from the system time now, its
    /// first retry waits drawn from `DEFAULT_SEED`. It ends when every clone of the
    /// recorder is dropped and the queued events are written.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn start(client: kube::Client) -> (Recorder, JoinHandle<()>) {
        Recorder::start_with(client, Clock::new(), DEFAULT_SEED)
    }

    /// [`Recorder::start`] dated by `clock`, the first retry waits drawn from `seed`.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn start_with(client: kube::Client, clock: Clock, seed: u64) -> (Recorder, JoinHandle<()>) {
        let names = Arc::new(Names::default());
        let writer = Writer::new(client, clock, Arc::clone(&names), seed);
        let counters = Arc::clone(&writer.counters);
        let (incoming, incoming_rx) = mpsc::channel(MAX_QUEUED_EVENTS);
        let (watcher, watcher_rx) = mpsc::channel(MAX_QUEUED_EVENTS);
        let distribute = writer::distribute(incoming_rx, watcher, Arc::clone(&counters));
        let task = tokio::spawn(async move {
            tokio::join!(distribute, writer.run(watcher_rx));
        });
        let shared = Shared {
            incoming,
            clock,
            names,
            counters,
            recorded: Arc::default(),
        };
        (
            Recorder {
                shared: Some(Arc::new(shared)),
            },
            task,
        )
    }

    /// The writer's counters, if there is a writer.
    #[must_use]
    pub fn counters(&self) -> Option<&Arc<EventCounters>> {
        self.shared.as_ref().map(|s| &s.counters)
    }

    /// What this recorder was asked to record, if it records.
    #[must_use]
    pub fn recorded(&self) -> Option<Arc<Recorded>> {
        self.shared.as_ref().map(|s| Arc::clone(&s.recorded))
    }

    /// A `Normal` event about `xr`.
    pub fn normal(&self, xr: &DynamicObject, reason: &str, message: impl Into<String>) {
        self.record(xr, EventType::Normal, reason, message.into());
    }

    /// A `Warning` event about `xr`.
    pub fn warning(&self, xr: &DynamicObject, reason: &str, message: impl Into<String>) {
        self.record(xr, EventType::Warning, reason, message.into());
    }

    /// An event of `type_` about `xr`: `makeEvent`, then the broadcaster's `ActionOrDrop`.
    pub fn record(&self, xr: &DynamicObject, type_: EventType, reason: &str, message: String) {
        let Some(shared) = &self.shared else {
            return;
        };
        let now = shared.clock.precise_now();
        let reference = reference(xr);
        let object = reference.name.clone().unwrap_or_default();
        shared.recorded.add(&object, reason);
        let namespace = reference
            .namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let time = Some(Time(now));
        let event = Event {
            metadata: ObjectMeta {
                name: Some(shared.names.name(&object, now)),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            involved_object: reference,
            reason: Some(reason.to_owned()),
            message: Some(message),
            first_timestamp: time.clone(),
            last_timestamp: time,
            count: Some(1),
            type_: Some(
                match type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            source: Some(EventSource {
                component: Some(REPORTING_CONTROLLER.to_owned()),
                host: None,
            }),
            reporting_component: Some(REPORTING_CONTROLLER.to_owned()),
            reporting_instance: Some(String::new()),
            ..Event::default()
        };
        let counter = match shared.incoming.try_send(event) {
            Ok(()) => &shared.counters.queued,
            Err(_) => &shared.counters.dropped,
        };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The event's `involvedObject`: what client-go's `reference.GetReference` takes from an
/// object.
fn reference(xr: &DynamicObject) -> ObjectReference {
    ObjectReference {
        api_version: xr.types.as_ref().map(|t| t.api_version.clone()),
        kind: xr.types.as_ref().map(|t| t.kind.clone()),
        name: xr.metadata.name.clone(),
        namespace: xr.metadata.namespace.clone(),
        uid: xr.metadata.uid.clone(),
        resource_version: xr.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}
