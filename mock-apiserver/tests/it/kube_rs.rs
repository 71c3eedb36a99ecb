//! kube-rs's typed API against the in-process service: CRUD, patches, status,
//! finalizers, selectors, conflicts and events.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::{Resource, ResourceExt};
use mock_apiserver::{Config, Verb};
use serde_json::json;

use crate::support::{
    Bucket, BucketStatus, Condition, bucket, client, create_bucket, server_with_buckets,
};

fn api_code(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.reason),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn create_get_list_replace_and_delete_round_trip_through_kube() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));

    let created = create_bucket(&buckets, "b1", "eu").await;
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());

    let fetched = buckets.get("b1").await.unwrap();
    assert_eq!(fetched.spec.region, "eu");

    let list = buckets.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );

    let mut changed = fetched.clone();
    changed.spec.region = "us".into();
    let replaced = buckets
        .replace("b1", &PostParams::default(), &changed)
        .await
        .unwrap();
    assert_eq!(replaced.spec.region, "us");
    assert_eq!(replaced.metadata.generation, Some(2));

    buckets
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();
    assert!(buckets.get_opt("b1").await.unwrap().is_none());
    assert_eq!(api_code(buckets.get("b1").await.unwrap_err()).0, 404);
}

#[tokio::test(start_paused = true)]
async fn creating_twice_is_already_exists_and_a_stale_replace_is_a_conflict() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let created = create_bucket(&buckets, "b1", "eu").await;
    let again = buckets
        .create(&PostParams::default(), &bucket("b1", "eu"))
        .await
        .unwrap_err();
    assert_eq!(api_code(again), (409, "AlreadyExists".into()));

    buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "us"}})),
        )
        .await
        .unwrap();
    let mut stale = created;
    stale.spec.region = "ap".into();
    let conflict = buckets
        .replace("b1", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert_eq!(api_code(conflict), (409, "Conflict".into()));
}

#[tokio::test(start_paused = true)]
async fn merge_json_and_apply_patches_all_work_and_strategic_merge_on_a_custom_resource_is_415() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));

    // Server-side apply creates when absent.
    let ssa = PatchParams::apply("test").force();
    let applied = buckets
        .patch("b1", &ssa, &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "eu"}})))
        .await
        .unwrap();
    assert_eq!(applied.spec.region, "eu");

    let merged = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(merged.spec.size, Some(5));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/size", "value": 5},
        {"op": "replace", "path": "/spec/region", "value": "us"},
        {"op": "remove", "path": "/spec/size"}
    ]))
    .unwrap();
    let patched = buckets
        .patch("b1", &PatchParams::default(), &Patch::Json::<()>(ops))
        .await
        .unwrap();
    assert_eq!(
        (patched.spec.region.as_str(), patched.spec.size),
        ("us", None)
    );

    let reapplied = buckets
        .patch("b1", &ssa, &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "ap"}})))
        .await
        .unwrap();
    assert_eq!(reapplied.spec.region, "ap");

    let strategic = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"region": "x"}})),
        )
        .await;
    assert_eq!(
        api_code(strategic.unwrap_err()),
        (415, "UnsupportedMediaType".into())
    );

    let configmaps: Api<ConfigMap> = Api::default_namespaced(client(&server));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".into());
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let cm = configmaps
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"k": "v"}})),
        )
        .await
        .unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v");
}

#[tokio::test(start_paused = true)]
async fn status_changes_only_through_the_status_subresource_and_never_move_the_generation() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let mut with_status = bucket("b1", "eu");
    with_status.status = Some(BucketStatus {
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            observed_generation: None,
        }],
    });
    let created = buckets
        .create(&PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(created.status, None, "status is dropped on create");

    let ignored = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(ignored.status, None, "the main resource ignores status");
    assert_eq!(
        ignored.metadata.resource_version, created.metadata.resource_version,
        "an ignored change is a no-op"
    );

    let condition = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
    let patched = buckets
        .patch_status("b1", &PatchParams::default(), &Patch::Merge(condition))
        .await
        .unwrap();
    assert_eq!(
        patched.status.as_ref().unwrap().conditions[0].status,
        "False"
    );
    assert_eq!(patched.metadata.generation, Some(1));

    let mut replaced = patched.clone();
    replaced.status.as_mut().unwrap().conditions[0].status = "True".into();
    replaced.spec.region = "ignored".into();
    let replaced = buckets
        .replace_status("b1", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(replaced.status.unwrap().conditions[0].status, "True");
    assert_eq!(
        replaced.spec.region, "eu",
        "the status subresource ignores spec"
    );

    let ssa = buckets
        .patch_status(
            "b1",
            &PatchParams::apply("ctrl").force(),
            &Patch::Apply(json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "status": {"conditions": [{"type": "Synced", "status": "True"}]}})),
        )
        .await
        .unwrap();
    assert_eq!(ssa.status.unwrap().conditions[0].type_, "Synced");
}

#[tokio::test(start_paused = true)]
async fn a_no_op_write_keeps_the_resource_version() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let created = create_bucket(&buckets, "b1", "eu").await;
    let ssa = PatchParams::apply("ctrl").force();
    let body =
        json!({"apiVersion": "example.org/v1alpha1", "kind": "Bucket", "spec": {"region": "eu"}});
    // The first apply of the same value is not a no-op: ctrl joins managedFields.
    let first = buckets
        .patch("b1", &ssa, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_ne!(
        first.metadata.resource_version,
        created.metadata.resource_version
    );
    let again = buckets
        .patch("b1", &ssa, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(
        again.metadata.resource_version,
        first.metadata.resource_version
    );
    let created = first;
    let relabel = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_ne!(
        relabel.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(relabel.metadata.generation, Some(1), "labels are not spec");
}

#[tokio::test(start_paused = true)]
async fn kubes_finalizer_helper_adds_runs_cleanup_and_releases_the_object() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    create_bucket(&buckets, "b1", "eu").await;
    let name = "example.org/cleanup";
    let reconcile = |event: FinalizerEvent<Bucket>| async move {
        Ok::<_, std::convert::Infallible>(match event {
            FinalizerEvent::Apply(_) => Action::await_change(),
            FinalizerEvent::Cleanup(_) => Action::await_change(),
        })
    };

    // First pass adds the finalizer with a `test null` + `add` JSON patch.
    finalizer(
        &buckets,
        name,
        Arc::new(buckets.get("b1").await.unwrap()),
        reconcile,
    )
    .await
    .unwrap();
    let with_finalizer = buckets.get("b1").await.unwrap();
    assert_eq!(with_finalizer.finalizers(), [name.to_owned()]);

    // Deleting now only marks the object.
    buckets
        .delete("b1", &DeleteParams::default())
        .await
        .unwrap();
    let deleting = buckets.get("b1").await.unwrap();
    assert!(deleting.metadata.deletion_timestamp.is_some());
    assert_eq!(deleting.metadata.deletion_grace_period_seconds, Some(0));
    let add_more = buckets
        .patch(
            "b1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [name, "another"]}})),
        )
        .await
        .unwrap_err();
    assert_eq!(
        api_code(add_more).0,
        422,
        "no new finalizers on a deleting object"
    );

    // Cleanup removes the finalizer, which deletes the object.
    finalizer(&buckets, name, Arc::new(deleting), reconcile)
        .await
        .unwrap();
    assert!(buckets.get_opt("b1").await.unwrap().is_none());

    // A later object can take the finalizer again: no empty `finalizers: []` remains.
    create_bucket(&buckets, "b2", "eu").await;
    buckets
        .patch(
            "b2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": [name]}})),
        )
        .await
        .unwrap();
    let b2 = buckets
        .patch(
            "b2",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    assert!(b2.metadata.finalizers.is_none());
    finalizer(&buckets, name, Arc::new(b2), reconcile)
        .await
        .unwrap();
    assert_eq!(
        buckets.get("b2").await.unwrap().finalizers(),
        [name.to_owned()]
    );
}

#[tokio::test(start_paused = true)]
async fn label_and_field_selectors_filter_lists() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for (name, tier) in [("a", "gold"), ("b", "silver"), ("c", "gold")] {
        let mut b = bucket(name, "eu");
        b.metadata.labels = Some([("tier".to_owned(), tier.to_owned())].into());
        buckets.create(&PostParams::default(), &b).await.unwrap();
    }
    let names = |list: kube::core::ObjectList<Bucket>| {
        list.items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>()
    };
    let gold = buckets
        .list(&ListParams::default().labels("tier=gold"))
        .await
        .unwrap();
    assert_eq!(names(gold), ["a", "c"]);
    let not_gold = buckets
        .list(&ListParams::default().labels("tier notin (gold)"))
        .await
        .unwrap();
    assert_eq!(names(not_gold), ["b"]);
    let by_name = buckets
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .unwrap();
    assert_eq!(names(by_name), ["b"]);
    let except = buckets
        .list(&ListParams::default().fields("metadata.name!=b,metadata.namespace=default"))
        .await
        .unwrap();
    assert_eq!(names(except), ["a", "c"]);
    let all: Api<Bucket> = Api::all(client(&server));
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn recorder_events_show_up_in_the_core_event_view_for_describe() {
    let server = server_with_buckets(Config::default());
    let client = client(&server);
    let buckets: Api<Bucket> = Api::default_namespaced(client.clone());
    let b1 = create_bucket(&buckets, "b1", "eu").await;
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "provider".into(),
            instance: Some("p-0".into()),
        },
    );
    let event = Event {
        type_: EventType::Normal,
        reason: "Created".into(),
        note: Some("bucket created".into()),
        action: "Create".into(),
        secondary: None,
    };
    let reference = b1.object_ref(&());
    recorder.publish(&event, &reference).await.unwrap();
    recorder.publish(&event, &reference).await.unwrap();

    let core: Api<CoreEvent> = Api::default_namespaced(client);
    let selector = format!(
        "involvedObject.name=b1,involvedObject.kind=Bucket,involvedObject.uid={}",
        b1.uid().unwrap()
    );
    let events = core
        .list(&ListParams::default().fields(&selector))
        .await
        .unwrap();
    assert_eq!(events.items.len(), 1);
    let seen = &events.items[0];
    assert_eq!(seen.message.as_deref(), Some("bucket created"));
    assert_eq!(seen.count, Some(2), "the repeat patched the series");
    assert_eq!(
        seen.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("provider")
    );
}

#[tokio::test(start_paused = true)]
async fn secrets_store_string_data_as_base64_data() {
    let server = server_with_buckets(Config::default());
    let secrets: Api<Secret> = Api::default_namespaced(client(&server));
    let mut secret = Secret::default();
    secret.metadata.name = Some("token".into());
    secret.string_data = Some([("token".to_owned(), "s3cr3t".to_owned())].into());
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let read = secrets.get("token").await.unwrap();
    assert_eq!(read.data.unwrap()["token"].0, b"s3cr3t");
    assert_eq!(read.type_.as_deref(), Some("Opaque"));
}

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
        .map(|e| (e.verb, e.resource.as_str(), e.name.as_str(), e.status))
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
            .all(|e| e.namespace == "default" && e.group == "example.org")
    );
}

#[tokio::test(start_paused = true)]
async fn paged_lists_keep_the_first_pages_version_and_expired_tokens_are_410() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..5 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let first = buckets.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(
        first
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b0", "b1"]
    );
    let token = first.metadata.continue_.clone().expect("more pages");
    create_bucket(&buckets, "b9", "eu").await;

    let second = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(
        second
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b2", "b3"]
    );
    assert_eq!(
        second.metadata.resource_version, first.metadata.resource_version,
        "one version for all pages"
    );
    let third = buckets
        .list(
            &ListParams::default()
                .limit(2)
                .continue_token(second.metadata.continue_.as_deref().unwrap()),
        )
        .await
        .unwrap();
    assert_eq!(
        third
            .items
            .iter()
            .map(ResourceExt::name_any)
            .collect::<Vec<_>>(),
        ["b4", "b9"]
    );
    assert!(
        third.metadata.continue_.is_none(),
        "the last page has no continue token"
    );

    // kubectl's `limit=500&resourceVersion=0` (kube drops the 0 when paging).
    let request = http::Request::get(
        "/apis/example.org/v1alpha1/namespaces/default/buckets?limit=2&resourceVersion=0",
    )
    .body(http_body_util::Empty::<bytes::Bytes>::new())
    .unwrap();
    let response = tower::ServiceExt::oneshot(server.service(), request)
        .await
        .unwrap();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    let all: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        all["items"].as_array().unwrap().len(),
        6,
        "resourceVersion=0 ignores the limit, like the watch cache"
    );
    assert!(all["metadata"].get("continue").is_none());

    server.expire_watches();
    let expired = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap_err();
    assert_eq!(api_code(expired), (410, "Expired".into()));
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
        .filter(|e| e.resource == "buckets")
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

#[tokio::test(start_paused = true)]
async fn a_strategic_merge_patch_merges_tagged_lists_and_records_its_manager() {
    // strategicpatch/patch.go with ObjectMeta's `patchStrategy:"merge"` finalizers.
    let server = server_with_buckets(Config::default());
    let configmaps: Api<ConfigMap> = Api::default_namespaced(client(&server));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".into());
    cm.metadata.finalizers = Some(vec!["example.org/a".into()]);
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let params = PatchParams {
        field_manager: Some("finalizer-adder".into()),
        ..PatchParams::default()
    };
    let patched = configmaps
        .patch(
            "c",
            &params,
            &Patch::Strategic(json!({"metadata": {"finalizers": ["example.org/b"]}})),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.metadata.finalizers,
        Some(vec!["example.org/b".into(), "example.org/a".into()])
    );
    let owners: Vec<String> = patched
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .filter_map(|e| e.manager)
        .collect();
    assert!(owners.contains(&"finalizer-adder".to_owned()), "{owners:?}");
    let removed = configmaps
        .patch(
            "c",
            &params,
            &Patch::Strategic(
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.org/a"]}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        removed.metadata.finalizers,
        Some(vec!["example.org/b".into()])
    );
}

#[tokio::test(start_paused = true)]
async fn a_limited_list_counts_what_follows_unless_it_is_filtered() {
    // storage/etcd3/store.go GetList: remainingItemCount when the predicate is empty.
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..5 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let first = buckets.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(first.metadata.remaining_item_count, Some(3));
    let token = first.metadata.continue_.clone().unwrap();
    let second = buckets
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(second.metadata.remaining_item_count, Some(1));
    let filtered = buckets
        .list(&ListParams::default().limit(2).labels("!absent"))
        .await
        .unwrap();
    assert_eq!(filtered.items.len(), 2);
    assert_eq!(filtered.metadata.remaining_item_count, None);
    let all = buckets.list(&ListParams::default().limit(5)).await.unwrap();
    assert_eq!(all.metadata.remaining_item_count, None);
}
