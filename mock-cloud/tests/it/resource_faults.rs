//! Per-resource faults: lasting errors, NotFound after a create, drift and slow creates,
//! chosen by name, tag or share, set at start and at run time.

use std::time::Duration;

use mock_cloud::{Faults, LastingError, Quotas, ResourceEffect, ResourceFault, ResourceSelector};
use tokio::time::advance;

use crate::support::{call, cloud, request, send, two_accounts};

const BUCKETS: &str = "/v1/accounts/acme/buckets";

fn rule(name: &str, effect: ResourceEffect) -> ResourceFault {
    ResourceFault {
        select: ResourceSelector {
            name: Some(name.to_owned()),
            ..ResourceSelector::default()
        },
        effect,
    }
}

fn denied() -> ResourceEffect {
    ResourceEffect::Error {
        error: LastingError::AccessDenied,
        code: None,
        actions: None,
    }
}

async fn create(cloud: &mock_cloud::MockCloud, body: &str) -> (u16, serde_json::Value) {
    call(cloud, "POST", BUCKETS, "t-acme", body).await
}

#[tokio::test(start_paused = true)]
async fn access_denied_by_name_pattern_fails_every_call_of_those_resources_only() {
    let faults = Faults::none().with_resource_fault(rule("bad-*", denied()));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    let (status, body) = create(&cloud, r#"{"name":"bad-1"}"#).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("AccessDenied"))
    );
    assert_eq!(
        call(&cloud, "GET", &format!("{BUCKETS}/bad-1"), "t-acme", "")
            .await
            .0,
        403
    );
    assert_eq!(create(&cloud, r#"{"name":"good-1"}"#).await.0, 201);
    assert_eq!(
        call(&cloud, "GET", &format!("{BUCKETS}/good-1"), "t-acme", "")
            .await
            .0,
        200
    );
    let faulted: Vec<bool> = cloud.calls().iter().map(|c| c.fault).collect();
    assert_eq!(faulted, [true, true, false, false]);
    assert_eq!(cloud.calls()[1].name, "bad-1");
}

#[tokio::test(start_paused = true)]
async fn a_name_conflict_fails_creates_with_its_code_while_reads_find_nothing() {
    let conflict = ResourceEffect::Error {
        error: LastingError::Conflict,
        code: Some("BucketAlreadyExists".into()),
        actions: None,
    };
    let faults = Faults::none().with_resource_fault(rule("taken", conflict));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    let (status, body) = create(&cloud, r#"{"name":"taken"}"#).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("BucketAlreadyExists"))
    );
    assert_eq!(
        call(&cloud, "GET", &format!("{BUCKETS}/taken"), "t-acme", "")
            .await
            .0,
        404
    );
    assert!(cloud.inventory().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_created_resource_stays_invisible_to_reads_for_its_window_then_appears() {
    let effect = ResourceEffect::NotFoundAfterCreate {
        duration: Duration::from_secs(30),
    };
    let faults = Faults::none().with_resource_fault(rule("slowly-*", effect));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    assert_eq!(create(&cloud, r#"{"name":"slowly-1"}"#).await.0, 201);
    let get = format!("{BUCKETS}/slowly-1");
    advance(Duration::from_secs(29)).await;
    assert_eq!(call(&cloud, "GET", &get, "t-acme", "").await.0, 404);
    advance(Duration::from_secs(1)).await;
    assert_eq!(call(&cloud, "GET", &get, "t-acme", "").await.0, 200);
}

#[tokio::test(start_paused = true)]
async fn a_drifting_field_differs_on_every_read_even_after_an_update() {
    let effect = ResourceEffect::Drift {
        field: Some("versioning".into()),
    };
    let faults = Faults::none().with_resource_fault(rule("*", effect));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    create(&cloud, r#"{"name":"d","spec":{"versioning":true}}"#).await;
    let get = format!("{BUCKETS}/d");
    for _ in 0..3 {
        let (status, body) = call(&cloud, "GET", &get, "t-acme", "").await;
        assert_eq!(
            (status, &body["spec"]["versioning"]),
            (200, &serde_json::json!(false))
        );
        let (status, _) = call(
            &cloud,
            "PUT",
            &get,
            "t-acme",
            r#"{"spec":{"versioning":true}}"#,
        )
        .await;
        assert_eq!(status, 200);
    }
    assert_eq!(
        cloud.inventory()[0].spec["versioning"],
        true,
        "the store keeps the written value"
    );
}

#[tokio::test(start_paused = true)]
async fn a_slow_create_stays_creating_for_its_duration_even_for_a_bucket() {
    let effect = ResourceEffect::SlowCreate {
        duration: Duration::from_secs(600),
    };
    let faults = Faults::none().with_resource_fault(rule("*", effect));
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    let (status, body) = create(&cloud, r#"{"name":"s"}"#).await;
    assert_eq!((status, body["state"].as_str()), (201, Some("creating")));
    advance(Duration::from_secs(599)).await;
    let get = format!("{BUCKETS}/s");
    assert_eq!(
        call(&cloud, "GET", &get, "t-acme", "").await.1["state"],
        "creating"
    );
    advance(Duration::from_secs(1)).await;
    assert_eq!(
        call(&cloud, "GET", &get, "t-acme", "").await.1["state"],
        "available"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tag_selects_resources_by_the_tags_in_their_spec() {
    let faults = Faults::none().with_resource_fault(ResourceFault {
        select: ResourceSelector {
            tag: Some(("team".into(), "red".into())),
            ..ResourceSelector::default()
        },
        effect: denied(),
    });
    let cloud = cloud(two_accounts(Quotas::unlimited()).with_faults(faults));
    assert_eq!(
        create(&cloud, r#"{"name":"r","spec":{"tags":{"team":"red"}}}"#)
            .await
            .0,
        403
    );
    assert_eq!(
        create(&cloud, r#"{"name":"b","spec":{"tags":{"team":"blue"}}}"#)
            .await
            .0,
        201
    );
}

#[tokio::test(start_paused = true)]
async fn a_share_set_at_run_time_through_the_admin_api_fails_about_that_many_resources() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    for i in 0..400 {
        create(&cloud, &format!(r#"{{"name":"r-{i}"}}"#)).await;
    }
    let body = r#"{"seed":3,"resources":[{"name":"r-*","percent":10,"error":"AccessDenied"}]}"#;
    let response = send(&cloud, request("PUT", "/admin/v1/faults", None, body)).await;
    assert_eq!(response.status(), 200);
    let mut denied = 0;
    for i in 0..400 {
        let (status, _) = call(&cloud, "GET", &format!("{BUCKETS}/r-{i}"), "t-acme", "").await;
        denied += usize::from(status == 403);
    }
    assert!((20..=60).contains(&denied), "{denied} of 400");
    let document = mock_cloud::admin::FaultsDocument::from(&cloud.faults());
    assert_eq!(
        serde_json::to_value(document).unwrap()["resources"],
        serde_json::json!([{"name": "r-*", "percent": 10.0, "error": "AccessDenied"}])
    );
}

#[tokio::test(start_paused = true)]
async fn a_rule_with_two_effects_or_an_unknown_error_is_refused_naming_it() {
    let cloud = cloud(two_accounts(Quotas::unlimited()));
    for (body, expected) in [
        (
            r#"{"resources":[{"error":"AccessDenied","slow_create_s":5}]}"#,
            "resources[0]: more than one effect",
        ),
        (
            r#"{"resources":[{"error":"Forbidden"}]}"#,
            "resources[0].error: unknown error \"Forbidden\"",
        ),
        (
            r#"{"resources":[{"percent":120,"drift":{}}]}"#,
            "resources[0].percent must be within 0 and 100",
        ),
    ] {
        let response = send(&cloud, request("PUT", "/admin/v1/faults", None, body)).await;
        assert_eq!(response.status(), 400, "{body}");
        let body = crate::support::json_body(response).await;
        let text = body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(text.contains(expected), "{text} lacks {expected}");
    }
}
