//! Kubernetes events about XRs, recorded as core's composite reconciler records them
//! (`composite/reconciler.go`, `composite/api.go`): the reason, type and message of each,
//! written to the API server in the background through the provider's event writer
//! ([`provider::events::EventSink`], kube's recorder on tokio's clock), so that a reconcile
//! never waits for one and every event is a request at the API server.
//!
//! Core records through client-go's `EventRecorder` (core/v1 Events with its correlator:
//! a burst of 25 per object and reason, then one per 5 minutes, aggregated after 10 in 10
//! minutes); the writer here is kube's (events.k8s.io/v1, a repeat within 6 minutes
//! joins its series with a PATCH). The reasons, types and messages are core's.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::DynamicObject;
use kube::runtime::events::EventType;
use provider::events::EventSink;
use provider::reconciler::meta::Clock;
use tokio::task::JoinHandle;

/// The component core's XR events come from: the recorder of the definition controller
/// that starts every XR controller (`definition/reconciler.go`, `Setup`).
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

/// Records XR events; [`Recorder::nop`] records nothing (core's `NewNopRecorder`, the
/// reconciler's default).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    sink: Option<EventSink>,
}

impl Recorder {
    /// A recorder that records nothing.
    #[must_use]
    pub fn nop() -> Self {
        Recorder::default()
    }

    /// A recorder writing through `sink`.
    #[must_use]
    pub fn new(sink: EventSink) -> Self {
        Recorder { sink: Some(sink) }
    }

    /// Starts a writer on `client`, reporting as [`REPORTING_CONTROLLER`], dated by tokio's
    /// clock from the system time now. It ends when every clone of the recorder is dropped.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use]
    pub fn start(client: kube::Client) -> (Recorder, JoinHandle<()>) {
        let (sink, task) = EventSink::start_as(client, Clock::new(), REPORTING_CONTROLLER);
        (Recorder::new(sink), task)
    }

    /// The writer's counters, if there is a writer.
    #[must_use]
    pub fn sink(&self) -> Option<&EventSink> {
        self.sink.as_ref()
    }

    /// A `Normal` event about `xr`.
    pub fn normal(&self, xr: &DynamicObject, reason: &str, message: impl Into<String>) {
        self.record(xr, EventType::Normal, reason, message.into());
    }

    /// A `Warning` event about `xr`.
    pub fn warning(&self, xr: &DynamicObject, reason: &str, message: impl Into<String>) {
        self.record(xr, EventType::Warning, reason, message.into());
    }

    /// An event of `type_` about `xr`.
    pub fn record(&self, xr: &DynamicObject, type_: EventType, reason: &str, message: String) {
        if let Some(sink) = &self.sink {
            sink.record(reference(xr), type_, reason, message);
        }
    }
}

/// The event's `regarding`: what client-go's `reference.GetReference` takes from an object.
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
