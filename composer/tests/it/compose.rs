//! One XR composed against mock-apiserver with the built-in function in process: the
//! composed resources, their owner and label, readiness, the requests of a steady-state
//! compose, and garbage collection by the server when the XR goes.

use std::time::Duration;

use composer::api::CompositionRevision;
use composer::composite::{Composed, Composer, LABEL_COMPOSITE};
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use mock_apiserver::{ApiServer, Config, Verb};
use serde_json::json;
use tokio::time::Instant;

use crate::fixture::{Cluster, set_condition, widget_resource, widgets_pipeline, xr_resource, xrd};

const N: usize = 3;

fn revision() -> CompositionRevision {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "CompositionRevision",
        "metadata": {"name": "widgets-1"},
        "spec": {
            "revision": 1,
            "compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
            "pipeline": widgets_pipeline(N, "60s"),
        },
    }))
    .unwrap()
}

/// A server with the XRD installed, a composer with the built-in function in process, and
/// the XRs' and widgets' APIs in `default`.
struct Setup {
    server: ApiServer,
    composer: Composer,
    xrs: Api<DynamicObject>,
    widgets: Api<DynamicObject>,
}

async fn setup() -> Setup {
    let cluster = Cluster::new(ApiServer::new(Config::default())).await;
    cluster.install_xrd(&xrd()).await;
    let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
    let composer = Composer::new(cluster.client.clone(), functions);
    Setup {
        xrs: cluster.api(&xr_resource()),
        widgets: cluster.api(&widget_resource()),
        server: cluster.server,
        composer,
    }
}

impl Setup {
    /// Creates the XWidget `name` (labelled as its own composite) with `spec`.
    async fn create_xr(&self, name: &str, spec: serde_json::Value) -> DynamicObject {
        let xr: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": name, "labels": {LABEL_COMPOSITE: name}},
            "spec": spec,
        }))
        .unwrap();
        self.xrs.create(&PostParams::default(), &xr).await.unwrap()
    }

    /// Composes `xr` with `revision`.
    async fn compose(&self, xr: &DynamicObject, revision: &CompositionRevision) -> Composed {
        self.composer
            .compose(xr, &xr_resource(), revision, deadline())
            .await
            .unwrap()
    }

    async fn widgets(&self) -> Vec<DynamicObject> {
        self.widgets
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    }
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(120)
}

#[tokio::test(start_paused = true)]
async fn an_xr_is_composed_becomes_ready_and_a_steady_compose_applies_n_plus_two() {
    let s = setup().await;
    let xr = s.create_xr("one", json!({"region": "eu-west-1"})).await;

    let first = s.compose(&xr, &revision()).await;
    assert_eq!(first.outcome.waiting, N, "nothing is ready yet");
    assert_eq!(first.ttl, Some(Duration::from_secs(60)));
    let composed = s.widgets().await;
    assert_eq!(composed.len(), N);
    for w in &composed {
        assert!(w.metadata.name.as_deref().unwrap().starts_with("one-"));
        assert_eq!(w.metadata.labels.as_ref().unwrap()[LABEL_COMPOSITE], "one");
        let owner = &w.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str()),
            ("XWidget", xr.metadata.uid.as_deref().unwrap())
        );
        assert_eq!(owner.controller, Some(true));
        assert_eq!(w.data["spec"]["region"], "eu-west-1");
    }
    let xr = s.xrs.get("one").await.unwrap();
    assert_eq!(
        xr.data["spec"]["crossplane"]["resourceRefs"]
            .as_array()
            .unwrap()
            .len(),
        N
    );
    // Synced and Ready are the reconciler's to write; the compose reports them.
    assert_eq!(first.outcome.conditions[1].reason, "Creating");

    // The provider's part: every widget Ready.
    for w in &composed {
        set_condition(&s.widgets, w, "Ready", "True").await;
    }
    let second = s.compose(&xr, &revision()).await;
    assert_eq!(second.outcome.waiting, 0);
    let ready = &second.outcome.conditions[1];
    assert_eq!((ready.type_, ready.status), ("Ready", "True"));
    let xr = s.xrs.get("one").await.unwrap();

    // A steady-state compose with no cache: N live reads and N+2 server-side applies,
    // nothing else.
    let before = s.server.journal().last_seq();
    let steady = s.compose(&xr, &revision()).await;
    assert_eq!(steady.outcome.waiting, 0);
    assert_eq!(steady.live_reads, N);
    let requests = s.server.journal().since(before);
    let count = |verb: Verb| requests.iter().filter(|e| e.verb == verb).count();
    assert_eq!(count(Verb::Patch), N + 2, "{requests:#?}");
    assert_eq!(count(Verb::Get), N);
    assert_eq!(requests.len(), 2 * N + 2);
    assert_eq!(s.widgets().await.len(), N);

    // Deleting the XR leaves nothing: its composed resources are owned by it.
    s.xrs
        .delete("one", &DeleteParams::foreground())
        .await
        .unwrap();
    assert!(s.xrs.get_opt("one").await.unwrap().is_none());
    assert!(s.widgets().await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_resource_no_longer_desired_is_deleted_as_garbage() {
    let s = setup().await;
    let xr = s.create_xr("two", json!({})).await;
    s.compose(&xr, &revision()).await;

    let mut fewer = revision();
    fewer.spec.composition.pipeline[0].input.as_mut().unwrap()["resources"][0]["count"] = json!(1);
    let xr = s.xrs.get("two").await.unwrap();
    let composed = s.compose(&xr, &fewer).await;
    assert_eq!(composed.deleted, N - 1);
    assert_eq!(s.widgets().await.len(), 1);
    let xr = s.xrs.get("two").await.unwrap();
    assert_eq!(
        xr.data["spec"]["crossplane"]["resourceRefs"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// `(manager, operation, subresource)` of each of `o`'s managedFields entries.
fn managers(o: &DynamicObject) -> Vec<(String, String, String)> {
    o.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.subresource.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn composes_while_a_provider_updates_status_meet_no_conflict_and_a_steady_compose_writes_nothing()
 {
    // Crossplane core server-side applies every composed resource on every reconcile
    // (force, with its composed field owner) while the provider writes their status with
    // Update calls on /status. As in a cluster (managedfields' no-op apply,
    // managedfieldsupdater.go), the applies never conflict with the provider's status, and
    // an apply that changes nothing writes nothing: no resourceVersion, no event.
    let s = setup().await;
    s.create_xr("three", json!({"region": "eu-west-1"})).await;
    let owner = composer::composite::composed_field_owner("three", "XWidget", "example.org");
    let provider = PostParams {
        field_manager: Some("provider-widgets".into()),
        ..PostParams::default()
    };

    for round in 0..4 {
        let xr = s.xrs.get("three").await.unwrap();
        let before = s.server.journal().last_seq();
        s.compose(&xr, &revision()).await;

        // The provider observes each widget and writes its status (an Update, PUT on
        // /status, from the object it read), Ready flipping every round.
        let ready = if round % 2 == 0 { "True" } else { "False" };
        for mut w in s.widgets().await {
            let name = w.metadata.name.clone().unwrap();
            w.data["status"] = json!({
                "atProvider": {"id": format!("{name}-id")},
                "conditions": [{"type": "Ready", "status": ready, "reason": "Observed"}],
            });
            s.widgets
                .replace_status(&name, &provider, &w)
                .await
                .unwrap();
        }

        // The next reconcile sees the status change (the XR's readiness follows it);
        // the one after that has nothing to change.
        let xr = s.xrs.get("three").await.unwrap();
        s.compose(&xr, &revision()).await;
        let composed = s.widgets().await;
        let rv = s.server.resource_version();
        let steady_from = s.server.journal().last_seq();
        let xr = s.xrs.get("three").await.unwrap();
        let steady = s.compose(&xr, &revision()).await;
        assert_eq!(
            steady.outcome.waiting,
            if ready == "True" { 0 } else { N },
            "round {round}"
        );
        assert_eq!(
            s.server.resource_version(),
            rv,
            "round {round}: a compose that changes nothing bumps no resourceVersion"
        );
        let steady_requests = s.server.journal().since(steady_from);
        assert_eq!(
            steady_requests
                .iter()
                .filter(|e| e.verb == Verb::Patch)
                .count(),
            N + 2,
            "{steady_requests:#?}"
        );
        let after = s.widgets().await;
        for (was, now) in composed.iter().zip(&after) {
            assert_eq!(now.metadata.resource_version, was.metadata.resource_version);
            assert_eq!(now.metadata.managed_fields, was.metadata.managed_fields);
        }

        // No request of the round was refused: no 409 between the composer's applies
        // and the provider's status updates (the first compose's reads of widgets not
        // made yet are 404s).
        let refused: Vec<_> = s
            .server
            .journal()
            .since(before)
            .into_iter()
            .filter(|e| e.status >= 400 && !(e.status == 404 && e.verb == Verb::Get))
            .collect();
        assert!(refused.is_empty(), "round {round}: {refused:#?}");

        // Each widget: the composer's apply owns what it applies, the provider's update
        // owns the status, and neither took the other's fields.
        for w in &after {
            let name = w.metadata.name.as_deref().unwrap();
            assert_eq!(w.data["status"]["atProvider"]["id"], format!("{name}-id"));
            assert_eq!(w.data["status"]["conditions"][0]["status"], ready);
            assert_eq!(w.data["spec"]["region"], "eu-west-1");
            let mut entries = managers(w);
            entries.sort();
            assert_eq!(
                entries,
                [
                    (owner.clone(), "Apply".to_owned(), String::new()),
                    (
                        "provider-widgets".to_owned(),
                        "Update".to_owned(),
                        "status".to_owned()
                    ),
                ],
                "{name}"
            );
            let applied = w
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .find(|e| e.manager.as_deref() == Some(owner.as_str()))
                .unwrap();
            let fields = serde_json::to_value(&applied.fields_v1).unwrap();
            assert!(fields.get("f:status").is_none(), "{fields}");
            assert_eq!(fields["f:spec"]["f:region"], json!({}), "{fields}");
        }
    }
}
