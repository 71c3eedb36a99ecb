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

/// A request: method, URI, content type and body.
type Call<'a> = (Method, &'a str, &'a str, &'a str);

/// Sends each request and checks it gets a `Status` with `code` and `reason`.
async fn assert_statuses(server: &ApiServer, cases: &[(Call<'_>, u16, &str)]) {
    for ((method, uri, content_type, body), code, reason) in cases {
        let got = call(server, method.clone(), uri, content_type, body).await;
        assert_eq!(
            (got.0.as_u16(), &got.1["reason"]),
            (*code, &json!(reason)),
            "{method} {uri} {content_type} {body:?}: {}",
            got.1
        );
        assert_status(&got, *code, reason);
    }
}

#[tokio::test(start_paused = true)]
async fn malformed_json_is_a_bad_request() {
    let server = server_with_buckets(Config::default());
    let b1 = format!("{BUCKETS}/b1");
    let json = "application/json";
    assert_statuses(
        &server,
        &[
            (
                (Method::POST, BUCKETS, json, "{not json"),
                400,
                "BadRequest",
            ),
            ((Method::POST, BUCKETS, json, "[1,2]"), 400, "BadRequest"),
            ((Method::POST, BUCKETS, json, ""), 400, "BadRequest"),
            (
                (Method::PATCH, &b1, "application/merge-patch+json", "{oops"),
                400,
                "BadRequest",
            ),
        ],
    )
    .await;
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
    let unsupported = |content_type| {
        (
            (Method::POST, BUCKETS, content_type, body),
            415,
            "UnsupportedMediaType",
        )
    };
    assert_statuses(
        &server,
        &[
            unsupported("text/plain"),
            unsupported("application/vnd.kubernetes.protobuf"),
            unsupported("application/xml"),
        ],
    )
    .await;
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
    let b1 = format!("{BUCKETS}/b1");
    let json = "application/json";
    let json_patch = "application/json-patch+json";
    let wrong_kind =
        r#"{"apiVersion":"example.org/v1alpha1","kind":"Widget","metadata":{"name":"w"}}"#;
    let missing_ns = "/apis/example.org/v1alpha1/namespaces/nowhere/buckets";
    assert_statuses(
        &server,
        &[
            // No name.
            (
                (Method::POST, BUCKETS, json, r#"{"spec":{}}"#),
                422,
                "Invalid",
            ),
            (
                (
                    Method::POST,
                    BUCKETS,
                    json,
                    r#"{"metadata":{"name":"Bad_Name"}}"#,
                ),
                422,
                "Invalid",
            ),
            ((Method::POST, BUCKETS, json, wrong_kind), 400, "BadRequest"),
            (
                (
                    Method::POST,
                    BUCKETS,
                    json,
                    r#"{"metadata":{"name":"b","namespace":"other"}}"#,
                ),
                400,
                "BadRequest",
            ),
            (
                (
                    Method::POST,
                    missing_ns,
                    json,
                    r#"{"metadata":{"name":"b"}}"#,
                ),
                404,
                "NotFound",
            ),
        ],
    )
    .await;

    call(
        &server,
        Method::POST,
        BUCKETS,
        json,
        r#"{"metadata":{"name":"b1"},"spec":{"region":"eu"}}"#,
    )
    .await;
    assert_statuses(
        &server,
        &[
            // An unconditional update.
            (
                (
                    Method::PUT,
                    &b1,
                    json,
                    r#"{"metadata":{"name":"b1"},"spec":{"region":"x"}}"#,
                ),
                422,
                "Invalid",
            ),
            (
                (
                    Method::PATCH,
                    &b1,
                    json_patch,
                    r#"[{"op":"jump","path":"/a"}]"#,
                ),
                400,
                "BadRequest",
            ),
            (
                (
                    Method::PATCH,
                    &b1,
                    json_patch,
                    r#"[{"op":"test","path":"/spec","value":1}]"#,
                ),
                422,
                "Invalid",
            ),
            (
                (
                    Method::DELETE,
                    &b1,
                    json,
                    r#"{"preconditions":{"uid":"nope"}}"#,
                ),
                409,
                "Conflict",
            ),
        ],
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn methods_a_path_does_not_support_are_not_allowed() {
    let server = server_with_buckets(Config::default());
    let b1 = format!("{BUCKETS}/b1");
    let json = "application/json";
    assert_statuses(
        &server,
        &[
            (
                (Method::POST, "/version", json, "{}"),
                405,
                "MethodNotAllowed",
            ),
            ((Method::POST, &b1, json, "{}"), 405, "MethodNotAllowed"),
            ((Method::PUT, BUCKETS, json, "{}"), 405, "MethodNotAllowed"),
        ],
    )
    .await;
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
