//! Helpers: build clouds and requests, call the cloud as a tower Service, read bodies.

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use mock_cloud::{AccountConfig, Config, MockCloud, Quotas, ResponseBody};
use serde_json::Value;
use tower::ServiceExt;

/// A cloud with accounts `acme` (token `t-acme`) and `other` (token `t-other`).
pub fn two_accounts(quotas: Quotas) -> Config {
    Config::empty()
        .with_account(
            AccountConfig::new("acme")
                .with_token("t-acme")
                .with_quotas(quotas.clone()),
        )
        .with_account(
            AccountConfig::new("other")
                .with_token("t-other")
                .with_quotas(quotas),
        )
}

pub fn cloud(config: Config) -> MockCloud {
    MockCloud::new(config).expect("valid config")
}

pub fn request(method: &str, path: &str, token: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut builder = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("valid request")
}

/// Sends a request through the tower Service interface.
pub async fn send(cloud: &MockCloud, request: Request<Full<Bytes>>) -> Response<ResponseBody> {
    cloud
        .clone()
        .oneshot(request)
        .await
        .expect("the service is infallible")
}

pub async fn call(
    cloud: &MockCloud,
    method: &str,
    path: &str,
    token: &str,
    body: &str,
) -> (u16, Value) {
    let response = send(cloud, request(method, path, Some(token), body)).await;
    let status = response.status().as_u16();
    (status, json_body(response).await)
}

/// `GET path` as `token`.
pub async fn get_json(cloud: &MockCloud, path: &str, token: &str) -> (u16, Value) {
    call(cloud, "GET", path, token, "").await
}

/// Creates `{"name": name}` in `collection` of `account`, as the account's token `t-<account>`.
pub async fn create_named(
    cloud: &MockCloud,
    account: &str,
    collection: &str,
    name: &str,
) -> (u16, Value) {
    let path = format!("/v1/accounts/{account}/{collection}");
    let body = serde_json::json!({ "name": name }).to_string();
    call(cloud, "POST", &path, &format!("t-{account}"), &body).await
}

pub async fn json_body(response: Response<ResponseBody>) -> Value {
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("full body")
        .to_bytes();
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
}

pub fn header(response: &Response<ResponseBody>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii header").to_owned())
}
