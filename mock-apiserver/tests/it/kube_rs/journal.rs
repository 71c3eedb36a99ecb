//! The server's journal and request counts of kube-rs's requests: verb, resource and
//! status, applies counted as APPLY, and whether a patch changed the object.

use kube::api::{Api, ListParams, Patch, PatchParams};
use mock_apiserver::{Config, Verb};
use serde_json::json;

use crate::support::{Bucket, client, create_bucket, server_with_buckets};

#[tokio::test(start_paused = true)]
async fn the_journal_records_each_request_with_verb_resource_and_status() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let before = server.journal().last_seq();
    create_bucket(&buckets, "b1", "eu").await;
    buckets.get("b1").await.unwrap();
    let _ = buckets.get("missing").await;
    buckets.list(&ListParams::default()).await.unwrap();
    let entries = server.journal().since(before);
    let summary: Vec<(Verb, &str, &str, u16)> = entries
        .iter()
        .map(|e| (e.verb, &*e.resource, &*e.name, e.status))
        .collect();
    assert_eq!(
        summary,
        [
            (Verb::Create, "buckets", "", 201),
            (Verb::Get, "buckets", "b1", 200),
            (Verb::Get, "buckets", "missing", 404),
            (Verb::List, "buckets", "", 200),
        ]
    );
    assert!(
        entries
            .iter()
            .all(|e| &*e.namespace == "default" && &*e.group == "example.org")
    );
}

#[tokio::test(start_paused = true)]
async fn server_side_applies_count_as_apply_in_request_totals_like_the_real_server() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let ssa = PatchParams::apply("test").force();
    let body =
        json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "eu"}});
    buckets
        .patch("b1", &ssa, &Patch::Apply(body))
        .await
        .unwrap();
    buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap();
    let text = server.journal().prometheus_text();
    let series = |verb: &str| {
        text.lines()
            .find(|l| l.contains("resource=\"buckets\"") && l.contains(&format!("verb=\"{verb}\"")))
            .map(|l| l.rsplit(' ').next().unwrap().to_owned())
    };
    assert_eq!(series("APPLY").as_deref(), Some("1"), "{text}");
    // CleanScope and the path's version (endpoints/metrics/metrics.go).
    assert!(
        text.contains("resource=\"buckets\",scope=\"resource\",subresource=\"\",verb=\"APPLY\",version=\"v1alpha1\"} 1"),
        "{text}"
    );
    assert_eq!(series("PATCH").as_deref(), Some("1"), "{text}");
    let verbs: Vec<Verb> = server.journal().since(0).iter().map(|e| e.verb).collect();
    assert_eq!(
        verbs.iter().filter(|v| **v == Verb::Patch).count(),
        2,
        "the journal says patch for both"
    );
}

#[tokio::test(start_paused = true)]
async fn the_journal_tells_a_patch_that_changed_the_object_from_a_no_op() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let ssa = PatchParams::apply("test").force();
    let apply = |region: &str| {
        Patch::Apply(
            json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": region}}),
        )
    };
    let created = buckets.patch("b1", &ssa, &apply("eu")).await.unwrap();
    let again = buckets.patch("b1", &ssa, &apply("eu")).await.unwrap();
    // The same apply again bumps no resourceVersion: a no-op.
    assert_eq!(
        created.metadata.resource_version,
        again.metadata.resource_version
    );
    buckets.patch("b1", &ssa, &apply("us")).await.unwrap();
    buckets.patch("b1", &ssa, &apply("us")).await.unwrap();
    let _ = buckets
        .patch("nope", &PatchParams::default(), &Patch::Merge(json!({})))
        .await;
    buckets.get("b1").await.unwrap();
    let changed: Vec<(Verb, u16, Option<bool>)> = server
        .journal()
        .since(0)
        .iter()
        .filter(|e| &*e.resource == "buckets")
        .map(|e| (e.verb, e.status, e.changed))
        .collect();
    assert_eq!(
        changed,
        [
            (Verb::Patch, 201, Some(true)),
            (Verb::Patch, 200, Some(false)),
            (Verb::Patch, 200, Some(true)),
            (Verb::Patch, 200, Some(false)),
            (Verb::Patch, 404, None),
            (Verb::Get, 200, None),
        ]
    );
    // The journal's page carries it on the wire; a request without it leaves it out.
    let page = serde_json::to_value(server.journal().page(0)).unwrap();
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(
        entries
            .iter()
            .filter(|e| e["changed"] == json!(false))
            .count(),
        2
    );
    assert!(entries.iter().any(|e| e.get("changed").is_none()));
}
