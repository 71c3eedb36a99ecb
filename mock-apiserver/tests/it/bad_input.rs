//! Bad input gets the right `Status` and never takes the server down.

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mock_apiserver::{ApiServer, Config};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::support::server_with_buckets;

async fn call(
    server: &ApiServer,
    method: Method,
    uri: &str,
    content_type: &str,
    body: &str,
) -> (StatusCode, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    if !content_type.is_empty() {
        request = request.header("content-type", content_type);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let response = server.service().oneshot(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

const BUCKETS: &str = "/apis/example.org/v1alpha1/namespaces/default/buckets";

fn assert_status(got: &(StatusCode, Value), code: u16, reason: &str) {
    assert_eq!(got.0.as_u16(), code, "{}", got.1);
    assert_eq!(got.1["kind"], "Status");
    assert_eq!(got.1["code"], code);
    assert_eq!(got.1["reason"], reason);
}

#[tokio::test(start_paused = true)]
async fn malformed_json_is_a_bad_request() {
    let server = server_with_buckets(Config::default());
    assert_status(
        &call(
            &server,
            Method::POST,
            BUCKETS,
            "application/json",
            "{not json",
        )
        .await,
        400,
        "BadRequest",
    );
    assert_status(
        &call(&server, Method::POST, BUCKETS, "application/json", "[1,2]").await,
        400,
        "BadRequest",
    );
    assert_status(
        &call(&server, Method::POST, BUCKETS, "application/json", "").await,
        400,
        "BadRequest",
    );
    let patch = call(
        &server,
        Method::PATCH,
        &format!("{BUCKETS}/b1"),
        "application/merge-patch+json",
        "{oops",
    )
    .await;
    assert_status(&patch, 400, "BadRequest");
}

#[tokio::test(start_paused = true)]
async fn unknown_resources_groups_and_paths_are_not_found() {
    let server = server_with_buckets(Config::default());
    for uri in [
        "/apis/example.org/v1alpha1/namespaces/default/widgets",
        "/apis/nowhere.io/v1/things",
        "/api/v2/pods",
        "/apis/example.org/v1alpha1/namespaces/default/buckets/b1/scale",
        "/api/v1/configmaps/cm",
        "/totally/unknown",
        "/apis/nowhere.io/v1",
    ] {
        assert_status(
            &call(&server, Method::GET, uri, "", "").await,
            404,
            "NotFound",
        );
    }
    let missing = call(&server, Method::GET, &format!("{BUCKETS}/b1"), "", "").await;
    assert_status(&missing, 404, "NotFound");
    assert_eq!(
        missing.1["details"],
        json!({"name": "b1", "group": "example.org", "kind": "buckets"})
    );
}

#[tokio::test(start_paused = true)]
async fn bad_selectors_and_parameters_are_bad_requests() {
    let server = server_with_buckets(Config::default());
    for query in [
        "labelSelector=tier+in+(gold",
        "labelSelector=a%3Db%3Dc%3D%3D",
        "fieldSelector=spec.region%3Deu",
        "fieldSelector=nonsense",
        "watch=true&resourceVersion=abc",
        "watch=true&timeoutSeconds=soon",
        "limit=lots",
        "limit=2&continue=not-a-token",
    ] {
        let got = call(&server, Method::GET, &format!("{BUCKETS}?{query}"), "", "").await;
        assert_status(&got, 400, "BadRequest");
    }
}

#[tokio::test(start_paused = true)]
async fn wrong_content_types_are_unsupported_media_types() {
    let server = server_with_buckets(Config::default());
    let body = r#"{"metadata":{"name":"b1"},"spec":{"region":"eu"}}"#;
    for content_type in [
        "text/plain",
        "application/vnd.kubernetes.protobuf",
        "application/xml",
    ] {
        assert_status(
            &call(&server, Method::POST, BUCKETS, content_type, body).await,
            415,
            "UnsupportedMediaType",
        );
    }
    assert_eq!(
        call(&server, Method::POST, BUCKETS, "application/json", body)
            .await
            .0,
        StatusCode::CREATED
    );
    let patch = call(
        &server,
        Method::PATCH,
        &format!("{BUCKETS}/b1"),
        "application/json",
        "{}",
    )
    .await;
    assert_status(&patch, 415, "UnsupportedMediaType");
    let apply = call(
        &server,
        Method::PATCH,
        &format!("{BUCKETS}/b1"),
        "application/apply-patch+yaml",
        body,
    )
    .await;
    // An apply without fieldManager fails ValidatePatchOptions
    // (apimachinery/pkg/apis/meta/v1/validation/validation.go): 422 on PatchOptions.
    assert_status(&apply, 422, "Invalid");
    assert_eq!(
        apply.1["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(
        apply.1["details"]["causes"][0]["reason"],
        "FieldValueRequired"
    );
}

#[tokio::test(start_paused = true)]
async fn invalid_objects_are_unprocessable_and_mismatches_are_bad_requests() {
    let server = server_with_buckets(Config::default());
    let no_name = call(
        &server,
        Method::POST,
        BUCKETS,
        "application/json",
        r#"{"spec":{}}"#,
    )
    .await;
    assert_status(&no_name, 422, "Invalid");
    let bad_name = call(
        &server,
        Method::POST,
        BUCKETS,
        "application/json",
        r#"{"metadata":{"name":"Bad_Name"}}"#,
    )
    .await;
    assert_status(&bad_name, 422, "Invalid");
    let wrong_kind =
        r#"{"apiVersion":"example.org/v1alpha1","kind":"Widget","metadata":{"name":"w"}}"#;
    assert_status(
        &call(
            &server,
            Method::POST,
            BUCKETS,
            "application/json",
            wrong_kind,
        )
        .await,
        400,
        "BadRequest",
    );
    let wrong_ns = r#"{"metadata":{"name":"b","namespace":"other"}}"#;
    assert_status(
        &call(&server, Method::POST, BUCKETS, "application/json", wrong_ns).await,
        400,
        "BadRequest",
    );
    let missing_ns = "/apis/example.org/v1alpha1/namespaces/nowhere/buckets";
    assert_status(
        &call(
            &server,
            Method::POST,
            missing_ns,
            "application/json",
            r#"{"metadata":{"name":"b"}}"#,
        )
        .await,
        404,
        "NotFound",
    );

    call(
        &server,
        Method::POST,
        BUCKETS,
        "application/json",
        r#"{"metadata":{"name":"b1"},"spec":{"region":"eu"}}"#,
    )
    .await;
    let unconditional = call(
        &server,
        Method::PUT,
        &format!("{BUCKETS}/b1"),
        "application/json",
        r#"{"metadata":{"name":"b1"},"spec":{"region":"x"}}"#,
    )
    .await;
    assert_status(&unconditional, 422, "Invalid");
    let bad_op = call(
        &server,
        Method::PATCH,
        &format!("{BUCKETS}/b1"),
        "application/json-patch+json",
        r#"[{"op":"jump","path":"/a"}]"#,
    )
    .await;
    assert_status(&bad_op, 400, "BadRequest");
    let failed_test = call(
        &server,
        Method::PATCH,
        &format!("{BUCKETS}/b1"),
        "application/json-patch+json",
        r#"[{"op":"test","path":"/spec","value":1}]"#,
    )
    .await;
    assert_status(&failed_test, 422, "Invalid");
    let precondition = call(
        &server,
        Method::DELETE,
        &format!("{BUCKETS}/b1"),
        "application/json",
        r#"{"preconditions":{"uid":"nope"}}"#,
    )
    .await;
    assert_status(&precondition, 409, "Conflict");
}

#[tokio::test(start_paused = true)]
async fn methods_a_path_does_not_support_are_not_allowed() {
    let server = server_with_buckets(Config::default());
    assert_status(
        &call(&server, Method::POST, "/version", "application/json", "{}").await,
        405,
        "MethodNotAllowed",
    );
    assert_status(
        &call(
            &server,
            Method::POST,
            &format!("{BUCKETS}/b1"),
            "application/json",
            "{}",
        )
        .await,
        405,
        "MethodNotAllowed",
    );
    assert_status(
        &call(&server, Method::PUT, BUCKETS, "application/json", "{}").await,
        405,
        "MethodNotAllowed",
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_got_garbage_still_serves_good_requests() {
    let server = server_with_buckets(Config::default());
    let garbage = [
        "\u{0}\u{1}",
        "{\"metadata\":",
        "null",
        "{\"metadata\":[]}",
        "{\"metadata\":{\"name\":5}}",
    ];
    for body in garbage {
        let (code, _) = call(&server, Method::POST, BUCKETS, "application/json", body).await;
        assert!(code.is_client_error(), "{body:?} gave {code}");
        let (code, _) = call(
            &server,
            Method::PATCH,
            &format!("{BUCKETS}/b1"),
            "application/json-patch+json",
            body,
        )
        .await;
        assert!(code.is_client_error(), "{body:?} gave {code}");
    }
    let ok = call(
        &server,
        Method::POST,
        BUCKETS,
        "application/json",
        r#"{"metadata":{"name":"fine"},"spec":{"region":"eu"}}"#,
    )
    .await;
    assert_eq!(ok.0, StatusCode::CREATED);
}

#[tokio::test(start_paused = true)]
async fn list_options_the_apiserver_refuses_are_refused_with_its_answers() {
    // ValidateListOptions (apimachinery/pkg/apis/meta/internalversion/validation) and
    // the storage's continue check (apiserver/pkg/storage/etcd3/store.go).
    let server = server_with_buckets(Config::default());
    let cases = [
        (
            "?watch=true&sendInitialEvents=true",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "?sendInitialEvents=true",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
        (
            "?resourceVersionMatch=Exact",
            422,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "?limit=1&continue=abc&resourceVersion=3",
            400,
            "specifying resource version is not allowed when using continue",
        ),
    ];
    for (query, code, message) in cases {
        let got = call(&server, Method::GET, &format!("{BUCKETS}{query}"), "", "").await;
        assert_status(
            &got,
            code,
            if code == 422 { "Invalid" } else { "BadRequest" },
        );
        assert_eq!(got.1["message"], message, "{query}");
    }
}
