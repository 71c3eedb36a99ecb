//! A reconcile step that fails, as core handles it: a warning event, `Synced=False` with
//! reason `ReconcileError` and the error's message, and the status written with an Update,
//! each counted at mock-apiserver's journal; and the `ReconcileRequestHandled` event of a
//! reconcile request. All on tokio's paused clock.

use std::time::Duration;

use composer::composite::{
    REASON_COMPOSE, REASON_RECONCILE_REQUEST_HANDLED, REASON_SELECT_COMPOSITION,
    RECONCILE_REQUESTED_AT_ANNOTATION, ReconcileError, Reconciler, Recorder, RequeueSettings,
};
use composer::function::builtin::Resources;
use composer::function::{Faulty, Functions, InProcessRunner};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::{ApiServer, Config, Verb};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::fixture::{
    Cluster, NS, builtin_step, realtime, reconciler, widgets_pipeline, xr, xr_resource, xrd,
};

const N: usize = 3;

/// The cluster with the XR kind and the XR `xr-0`.
async fn cluster() -> Cluster {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    cluster
        .api(&xr_resource())
        .create(&PostParams::default(), &xr("xr-0"))
        .await
        .unwrap();
    cluster
}

/// `reconciler` recording its events through a writer on the cluster.
fn recording(cluster: &Cluster, reconciler: Reconciler) -> Reconciler {
    let (events, _writer) = Recorder::start(cluster.client.clone());
    reconciler.with_events(events)
}

/// A recording reconciler of the cluster's XRs composing with `functions`, with default
/// requeues and breaker.
fn recording_with(cluster: &Cluster, functions: Functions) -> Reconciler {
    recording(
        cluster,
        reconciler(
            cluster,
            functions,
            RequeueSettings::default(),
            &realtime(BreakerConfig::default()),
        ),
    )
}

fn builtin() -> Functions {
    Functions::new().with("resources", InProcessRunner::new(Resources))
}

/// The XR's condition of `type_`.
async fn condition(cluster: &Cluster, type_: &str) -> Value {
    let xr = cluster.api(&xr_resource()).get("xr-0").await.unwrap();
    xr.data["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_).cloned())
        .unwrap_or_default()
}

/// `(type, reason, message, count)` of every event about `xr-0`, oldest first.
async fn events(cluster: &Cluster) -> Vec<(String, String, String, i32)> {
    let mut all = Api::<Event>::namespaced(cluster.client.clone(), NS)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    all.sort_by_key(|e| e.metadata.name.clone());
    all.into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some("xr-0"))
        .map(|e| {
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.message.unwrap_or_default(),
                e.count.unwrap_or(1),
            )
        })
        .collect()
}

/// Reconciles `xr-0`, lets the event writer run, and returns the result and the
/// `(verb, resource)` of each request the reconcile and its events made.
async fn reconcile(
    cluster: &Cluster,
    reconciler: &Reconciler,
) -> (
    Result<composer::composite::Requeue, ReconcileError>,
    Vec<(Verb, String)>,
) {
    let from = cluster.server.journal().last_seq();
    let result = reconciler.reconcile(Some(NS), "xr-0", 0.5).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let requests = cluster
        .server
        .journal()
        .since(from)
        .into_iter()
        .map(|e| (e.verb, e.resource.to_string()))
        .collect();
    (result, requests)
}

fn count(requests: &[(Verb, String)], verb: Verb, resource: &str) -> usize {
    requests
        .iter()
        .filter(|(v, r)| *v == verb && r == resource)
        .count()
}

fn synced_error(message: &str) -> Value {
    json!({"status": "False", "reason": "ReconcileError", "message": message})
}

fn status_reason_message(c: &Value) -> Value {
    json!({"status": c["status"], "reason": c["reason"], "message": c["message"]})
}

#[tokio::test(start_paused = true)]
async fn an_xr_without_a_composition_is_marked_synced_false_with_a_warning_and_a_status_update() {
    let cluster = cluster().await;
    let reconciler = recording_with(&cluster, builtin());
    let (result, requests) = reconcile(&cluster, &reconciler).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ReconcileError::Select(_)), "{error:?}");
    let message = "cannot select Composition: no compatible Compositions found";
    assert_eq!(
        composer::composite::error_message(&error),
        message,
        "the condition's message is core's wrapped error"
    );
    assert_eq!(
        status_reason_message(&condition(&cluster, "Synced").await),
        synced_error(message)
    );
    // The finalizer went first; its Update's answer replaced the XR held, as in core,
    // dropping the Responsive condition marked before it.
    let xr = cluster.api(&xr_resource()).get("xr-0").await.unwrap();
    assert!(xr.metadata.finalizers.unwrap().len() == 1);
    assert_eq!(condition(&cluster, "Responsive").await, Value::Null);
    // At the journal: the XR GET, the finalizer Update, the Compositions LIST, the status
    // Update, and the warning event.
    assert_eq!(count(&requests, Verb::Update, "xwidgets/status"), 1);
    assert_eq!(count(&requests, Verb::Create, "events"), 1, "{requests:#?}");
    assert_eq!(requests.len(), 5, "{requests:#?}");
    assert_eq!(
        events(&cluster).await,
        [(
            "Warning".to_owned(),
            REASON_SELECT_COMPOSITION.to_owned(),
            message.to_owned(),
            1
        )]
    );
    // Core writes the status on every failure, changed or not; the repeated warning joins
    // its event's count (a PATCH).
    let (result, requests) = reconcile(&cluster, &reconciler).await;
    assert!(result.is_err());
    assert_eq!(count(&requests, Verb::Update, "xwidgets/status"), 1);
    assert_eq!(count(&requests, Verb::Patch, "events"), 1, "{requests:#?}");
    assert_eq!(events(&cluster).await[0].3, 2);
    // With no Update before the failure this time, the breaker's condition is kept.
    assert_eq!(
        condition(&cluster, "Responsive").await["reason"],
        "WatchCircuitClosed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_fatal_function_result_fails_the_compose_with_core_s_message() {
    let cluster = cluster().await;
    cluster
        .composition("widgets", &widgets_pipeline(N, "60s"))
        .await;
    let functions = Functions::new().with(
        "resources",
        InProcessRunner::new(Faulty::new(Resources).fatal("boom")),
    );
    let reconciler = recording_with(&cluster, functions);
    let (result, requests) = reconcile(&cluster, &reconciler).await;
    let error = result.unwrap_err();
    assert!(matches!(error, ReconcileError::Compose(_)), "{error:?}");
    let message =
        r#"cannot compose resources: pipeline step "compose" returned a fatal result: boom"#;
    assert_eq!(
        status_reason_message(&condition(&cluster, "Synced").await),
        synced_error(message)
    );
    // Nothing was applied: no composed resource, no status apply; one status Update.
    assert_eq!(count(&requests, Verb::Patch, "widgets"), 0);
    assert_eq!(count(&requests, Verb::Patch, "xwidgets/status"), 0);
    assert_eq!(count(&requests, Verb::Update, "xwidgets/status"), 1);
    // The Composition and the revision selected (two events: client-go's correlator keys an
    // event by its message too), then the failure.
    let events = events(&cluster).await;
    assert_eq!(
        events
            .iter()
            .map(|(t, r, n, c)| (t.as_str(), r.as_str(), n.as_str(), *c))
            .collect::<Vec<_>>(),
        [
            (
                "Normal",
                REASON_SELECT_COMPOSITION,
                "Successfully selected composition: widgets",
                1
            ),
            (
                "Normal",
                REASON_SELECT_COMPOSITION,
                "Selected composition revision: widgets-1",
                1
            ),
            ("Warning", REASON_COMPOSE, message, 1),
        ]
    );
}

/// A client whose composed applies (PATCHes of widgets) reach the API server with a media
/// type it does not accept: a refusal that is not a validation error.
fn refusing_client(cluster: &Cluster) -> kube::Client {
    let inner = cluster.server.service();
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        async move {
            if request.method() == http::Method::PATCH && request.uri().path().contains("/widgets/")
            {
                request.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/x-unknown"),
                );
            }
            inner.oneshot(request).await
        }
    });
    kube::Client::new(service, NS)
}

#[tokio::test(start_paused = true)]
async fn a_refused_composed_apply_fails_the_compose_and_an_invalid_one_leaves_the_resource_unsynced()
 {
    // Refused (415): the compose fails with the apply's error. First composed as usual:
    // on a first compose the refs apply changes the XR, so core's status Update of the
    // failure, from the XR read before it, would conflict.
    let cluster = cluster().await;
    cluster
        .composition("widgets", &widgets_pipeline(N, "60s"))
        .await;
    let usual = reconciler(
        &cluster,
        builtin(),
        RequeueSettings::default(),
        &realtime(BreakerConfig::default()),
    );
    reconcile(&cluster, &usual).await.0.unwrap();
    let client = refusing_client(&cluster);
    let refusing = Reconciler::new(
        client.clone(),
        xrd(),
        xr_resource(),
        composer::composite::Composer::new(client, builtin()),
        RequeueSettings::default(),
    );
    let refusing = recording(&cluster, refusing);
    let (result, requests) = reconcile(&cluster, &refusing).await;
    let error = result.unwrap_err();
    let synced = condition(&cluster, "Synced").await;
    let message = synced["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            r#"cannot compose resources: cannot apply composed resource "widget-0": "#
        ),
        "{message}"
    );
    assert_eq!(message, composer::composite::error_message(&error));
    assert_eq!(synced["reason"], "ReconcileError");
    // The first composed apply was refused; the others and the status apply never went.
    assert_eq!(count(&requests, Verb::Patch, "widgets"), 1);
    assert_eq!(count(&requests, Verb::Patch, "xwidgets/status"), 0);
    assert_eq!(count(&requests, Verb::Update, "xwidgets/status"), 1);
    assert_eq!(events(&cluster).await.last().unwrap().1, REASON_COMPOSE);

    // Invalid (422, a Gadget whose size must be an integer): a warning per resource, each
    // unsynced, Synced=False with the unsynced resources; the reconcile itself succeeds.
    let cluster = cluster_with_gadgets().await;
    let gadgets = json!([builtin_step(
        N,
        json!({"apiVersion": "test.example.org/v1", "kind": "Gadget"}),
        "spec.size",
        "60s",
    )]);
    cluster.composition("gadgets", &gadgets).await;
    let reconciler = recording_with(&cluster, builtin());
    let (result, requests) = reconcile(&cluster, &reconciler).await;
    result.unwrap();
    assert_eq!(count(&requests, Verb::Patch, "gadgets"), N);
    assert_eq!(count(&requests, Verb::Patch, "xwidgets/status"), 1);
    assert_eq!(
        status_reason_message(&condition(&cluster, "Synced").await),
        synced_error("Unsynced resources: widget-0, widget-1, and widget-2")
    );
    // One warning per refused resource and a Normal event per unsynced and per unready one:
    // client-go's correlator keys an event by its message too, so each is an event of its
    // own.
    let events = events(&cluster).await;
    let of = |type_: &str| {
        events
            .iter()
            .filter(|e| e.0 == type_ && e.1 == REASON_COMPOSE)
            .map(|e| (e.2.as_str(), e.3))
            .collect::<Vec<_>>()
    };
    let warnings = of("Warning");
    assert_eq!(warnings.len(), N, "{events:#?}");
    for (i, (message, count)) in warnings.iter().enumerate() {
        let refused = format!(r#"cannot apply composed resource "widget-{i}": "#);
        assert!(message.starts_with(&refused), "{message}");
        assert_eq!(*count, 1);
    }
    let normal: Vec<(String, i32)> = (0..N)
        .flat_map(|i| {
            [
                (
                    format!(r#"Composed resource "widget-{i}" is not yet valid"#),
                    1,
                ),
                (
                    format!(r#"Composed resource "widget-{i}" is not yet ready"#),
                    1,
                ),
            ]
        })
        .collect();
    assert_eq!(
        of("Normal")
            .into_iter()
            .map(|(m, c)| (m.to_owned(), c))
            .collect::<Vec<_>>(),
        normal
    );
}

/// The cluster with a `Gadget` kind whose `spec.size` must be an integer.
async fn cluster_with_gadgets() -> Cluster {
    let cluster = cluster().await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.test.example.org"},
        "spec": {"group": "test.example.org", "names": {"kind": "Gadget", "plural": "gadgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}}}]},
    });
    cluster
        .create_crd(&serde_json::from_value(crd).unwrap())
        .await;
    cluster
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_request_is_announced_with_an_event_and_kept_only_where_core_keeps_it() {
    let cluster = cluster().await;
    cluster
        .composition("widgets", &widgets_pipeline(N, "60s"))
        .await;
    let reconciler = recording_with(&cluster, builtin());
    let xrs = cluster.api(&xr_resource());
    reconcile(&cluster, &reconciler).await.0.unwrap();
    assert!(handled(&cluster).await.is_empty());

    let request = |token: &str| json!({"metadata": {"annotations": {RECONCILE_REQUESTED_AT_ANNOTATION: token}}});
    xrs.patch(
        "xr-0",
        &PatchParams::default(),
        &Patch::Merge(&request("t1")),
    )
    .await
    .unwrap();
    let (result, requests) = reconcile(&cluster, &reconciler).await;
    result.unwrap();
    assert_eq!(
        handled(&cluster).await,
        [(
            "Normal".to_owned(),
            REASON_RECONCILE_REQUEST_HANDLED.to_owned(),
            "Handling reconcile request".to_owned(),
            1
        )]
    );
    assert_eq!(count(&requests, Verb::Create, "events"), 1, "{requests:#?}");
    // The compose's status apply answer replaced the XR held, token and all: the token is
    // not kept, so the next reconcile handles it again (the event's count grows).
    let xr = xrs.get("xr-0").await.unwrap();
    assert!(xr.data["status"].get("lastHandledReconcileAt").is_none());
    reconcile(&cluster, &reconciler).await.0.unwrap();
    assert_eq!(handled(&cluster).await[0].3, 2);

    // A new token on a reconcile that fails before composing: the failure's status Update
    // carries the token, so the reconcile after that does not announce it again.
    Api::<composer::api::Composition>::all(cluster.client.clone())
        .delete("widgets", &Default::default())
        .await
        .unwrap();
    xrs.patch(
        "xr-0",
        &PatchParams::default(),
        &Patch::Merge(&request("t2")),
    )
    .await
    .unwrap();
    assert!(reconcile(&cluster, &reconciler).await.0.is_err());
    assert_eq!(
        xrs.get("xr-0").await.unwrap().data["status"]["lastHandledReconcileAt"],
        "t2"
    );
    assert_eq!(handled(&cluster).await[0].3, 3);
    assert!(reconcile(&cluster, &reconciler).await.0.is_err());
    assert_eq!(handled(&cluster).await[0].3, 3, "t2 was handled already");
}

/// The `ReconcileRequestHandled` events about `xr-0`.
async fn handled(cluster: &Cluster) -> Vec<(String, String, String, i32)> {
    events(cluster)
        .await
        .into_iter()
        .filter(|e| e.1 == REASON_RECONCILE_REQUEST_HANDLED)
        .collect()
}

/// A second pipeline step reporting on the XR: while `failing` is false it passes the
/// desired state on with a `DatabaseReady` condition and a NORMAL result; then a NORMAL
/// result and a FATAL one, no condition.
struct Reporter {
    failing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl composer::function::Function for Reporter {
    fn run_function(
        &self,
        request: composer::function::proto::RunFunctionRequest,
    ) -> composer::function::BoxFuture<
        '_,
        Result<composer::function::proto::RunFunctionResponse, tonic::Status>,
    > {
        use composer::function::proto::{
            Condition, Result as FnResult, RunFunctionResponse, Severity, Status,
        };
        let failing = self.failing.load(std::sync::atomic::Ordering::Relaxed);
        let result = |severity: Severity, message: &str| FnResult {
            severity: severity as i32,
            message: message.to_owned(),
            ..FnResult::default()
        };
        let response = RunFunctionResponse {
            desired: request.desired,
            context: request.context,
            results: if failing {
                vec![
                    result(Severity::Normal, "checked"),
                    result(Severity::Fatal, "database gone"),
                ]
            } else {
                vec![result(Severity::Normal, "checked")]
            },
            conditions: if failing {
                vec![]
            } else {
                vec![Condition {
                    r#type: "DatabaseReady".to_owned(),
                    status: Status::ConditionTrue as i32,
                    reason: "Available".to_owned(),
                    message: Some("up".to_owned()),
                    target: None,
                }]
            },
            ..RunFunctionResponse::default()
        };
        Box::pin(std::future::ready(Ok(response)))
    }
}

#[tokio::test(start_paused = true)]
async fn functions_set_their_conditions_and_a_fatal_result_leaves_the_unreported_ones_unknown() {
    let cluster = cluster().await;
    let mut pipeline = widgets_pipeline(N, "60s");
    pipeline
        .as_array_mut()
        .unwrap()
        .push(json!({"step": "report", "functionRef": {"name": "reporter"}}));
    cluster.composition("widgets", &pipeline).await;
    let failing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let functions = builtin().with(
        "reporter",
        InProcessRunner::new(Reporter {
            failing: std::sync::Arc::clone(&failing),
        }),
    );
    let reconciler = recording_with(&cluster, functions);
    reconcile(&cluster, &reconciler).await.0.unwrap();
    let database = condition(&cluster, "DatabaseReady").await;
    assert_eq!(
        status_reason_message(&database),
        json!({"status": "True", "reason": "Available", "message": "up"})
    );
    assert!(
        events(&cluster)
            .await
            .iter()
            .any(|e| e.1 == REASON_COMPOSE && e.2 == r#"Pipeline step "report": checked"#)
    );

    // FATAL: the condition the functions no longer report is Unknown, FatalError.
    failing.store(true, std::sync::atomic::Ordering::Relaxed);
    let (result, _) = reconcile(&cluster, &reconciler).await;
    assert!(result.is_err());
    assert_eq!(
        status_reason_message(&condition(&cluster, "Synced").await),
        synced_error(
            r#"cannot compose resources: pipeline step "report" returned a fatal result: database gone"#
        )
    );
    assert_eq!(
        status_reason_message(&condition(&cluster, "DatabaseReady").await),
        json!({"status": "Unknown", "reason": "FatalError",
            "message": "A fatal error occurred before the status of this condition could be determined."})
    );
}
