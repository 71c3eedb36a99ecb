//! The `cloud_requests` target: mock-cloud's request handling, in-process through its
//! tower Service (`Switchable`, the service `serve` puts on a socket): the generic JSON
//! API, the admin API (journal pages, faults and config documents), and AWS-shaped
//! requests (SigV4 headers and presigned queries, `Action=` forms, `X-Amz-Target` JSON,
//! S3 paths and XML), signed with the cloud's keys so that they pass authentication where
//! the cloud speaks AWS.
//!
//! Input: a structured session ([`Session`]): a config and up to [`MAX_REQUESTS`]
//! requests, with virtual time passing between them.
//!
//! Asserts: no panic; every request gets an answer whose body reads to the end; no 5xx
//! except the ones the cloud was asked for (injected faults, a protocol's 5xx throttle).

mod admin;
mod any;
mod build;
mod input;

use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use mock_cloud::{Config, MockCloud, Switchable};
use tower::ServiceExt;

pub use build::Now;
pub use input::{AdminOp, Request, Session, Setup};

/// The most requests one input sends.
pub const MAX_REQUESTS: usize = 24;

/// How long an answer may take in virtual time (injected latency included).
pub(crate) const ANSWER_WITHIN: Duration = Duration::from_secs(30 * 24 * 3600);

/// An account of the fuzzed cloud.
#[derive(Debug, Clone, Copy)]
pub struct Account {
    /// The `{account}` path segment.
    pub name: &'static str,
    /// Its bearer token.
    pub token: &'static str,
    /// Its AWS account id.
    pub account_id: &'static str,
    /// Its access key id.
    pub access_key: &'static str,
    /// The key's secret.
    pub secret: &'static str,
}

/// The accounts of the fuzzed cloud.
pub const ACCOUNTS: [Account; 2] = [
    Account {
        name: "acme",
        token: "t-acme",
        account_id: "111111111111",
        access_key: "AKIAFUZZACME00000001",
        secret: "s-acme",
    },
    Account {
        name: "other",
        token: "t-other",
        account_id: "222222222222",
        access_key: "AKIAFUZZOTHER0000002",
        secret: "s-other",
    },
];

/// The access key and secret of `ACCOUNTS[i % (len + 1)]`; one past the accounts, a key
/// the cloud does not know.
#[must_use]
pub fn access_key(i: u8) -> (&'static str, &'static str) {
    ACCOUNTS
        .get(usize::from(i) % (ACCOUNTS.len() + 1))
        .map_or(("AKIAFUZZNOBODY000003", "s-nobody"), |a| {
            (a.access_key, a.secret)
        })
}

/// The cloud's config document: two accounts with tokens (and AWS identities if `aws`),
/// quotas low enough to throttle, count quotas, quick provisioning.
///
/// ```
/// use fuzz::cloud::{Setup, config_yaml};
/// for setup in [Setup::Generic, Setup::AwsJson, Setup::AwsEc2, Setup::Shadow] {
///     for aws in [true, false] {
///         mock_cloud::Config::from_yaml(&config_yaml(setup, aws), "fuzz.yaml").unwrap();
///     }
/// }
/// ```
#[must_use]
pub fn config_yaml(setup: Setup, aws: bool) -> String {
    let flavor = match setup {
        Setup::Generic | Setup::Shadow => "generic",
        Setup::AwsJson => "aws-json",
        Setup::AwsEc2 => "aws-ec2",
    };
    let mut yaml = format!(
        "flavor: {flavor}\nshadow: {}\njournal_cap: 64\n\
         provisioning: {{database_create_ms: 300, database_delete_ms: 200}}\n\
         quotas:\n  classes:\n    read: {{burst: 8, per_second: 4}}\n    mutate: {{burst: 4, per_second: 1}}\n\
         \x20 counts: {{buckets: 3, databases: 2, records: 4}}\naccounts:\n",
        setup == Setup::Shadow
    );
    for a in ACCOUNTS {
        yaml.push_str(&format!(
            "  - name: {}\n    tokens: [{}]\n",
            a.name, a.token
        ));
        if aws {
            yaml.push_str(&format!(
                "    aws: {{account_id: \"{}\", access_keys: [{{id: {}, secret: {}}}]}}\n",
                a.account_id, a.access_key, a.secret
            ));
        }
    }
    yaml
}

/// The cloud for `setup`, with the accounts' AWS identities.
///
/// # Panics
/// If the document is not a valid config (a broken generator).
#[must_use]
pub fn config(setup: Setup) -> Config {
    Config::from_yaml(&config_yaml(setup, true), "fuzz.yaml").expect("the fuzz config is valid")
}

/// Lets `wait_ms` of virtual time pass; then the cloud behind `switch` (a
/// `PUT /admin/v1/config` may have replaced it) and its wall-clock time.
pub(crate) async fn after(switch: &Switchable, wait_ms: u16) -> (MockCloud, Now) {
    tokio::time::sleep(Duration::from_millis(u64::from(wait_ms))).await;
    let cloud = switch.current();
    let now = Now(cloud.epoch() + cloud.elapsed());
    (cloud, now)
}

/// Sends `http_request` to the cloud behind `switch` and reads the answer to its end: the
/// request line, the status and the body; `None` when no answer came within
/// [`ANSWER_WITHIN`], which only an active fault (`faults_active`) may cause.
///
/// # Panics
/// When no answer comes without faults, when the body does not end or breaks off, and
/// when the answer is a 5xx the cloud was not asked for ([`asked_for`]).
pub(crate) async fn exchange(
    switch: &Switchable,
    http_request: http::Request<Full<Bytes>>,
    faults_active: bool,
) -> Option<(String, u16, Bytes)> {
    let described = format!("{} {}", http_request.method(), http_request.uri());
    let head = http_request.method() == http::Method::HEAD;
    // A latency fault is a distribution the caller chose, with no cap: a log-normal
    // with a wide sigma can draw more than ANSWER_WITHIN. Only then may an answer not
    // come; without faults it always does.
    let Ok(response) =
        tokio::time::timeout(ANSWER_WITHIN, switch.clone().oneshot(http_request)).await
    else {
        assert!(faults_active, "no answer to {described}");
        return None;
    };
    let response = response.unwrap_or_else(|never| match never {});
    let status = response.status().as_u16();
    let body = tokio::time::timeout(ANSWER_WITHIN, response.into_body().collect())
        .await
        .unwrap_or_else(|_| panic!("the body of {described} does not end"))
        .unwrap_or_else(|e| panic!("the body of {described} breaks off: {e}"))
        .to_bytes();
    assert!(
        asked_for(status, &body, faults_active, head),
        "{described}: {status} {}",
        String::from_utf8_lossy(&body)
    );
    Some((described, status, body))
}

/// Whether a 5xx is one the cloud was asked for: an injected fault (faults active), a
/// throttle that is a 5xx in its protocol (EC2's `RequestLimitExceeded`, S3's `SlowDown`),
/// or S3's 501 `NotImplemented` (its answer to an operation or a streaming payload it does
/// not have). A `HEAD` is answered without a body, so there only the status can be read:
/// 501 or 503 is taken as those answers.
#[must_use]
pub fn asked_for(status: u16, body: &[u8], faults_active: bool, head: bool) -> bool {
    if status < 500 || faults_active {
        return true;
    }
    if head && body.is_empty() && matches!(status, 501 | 503) {
        return true;
    }
    let text = String::from_utf8_lossy(body);
    (status == 503 && (text.contains("RequestLimitExceeded") || text.contains("SlowDown")))
        || (status == 501 && text.contains("<Code>NotImplemented</Code>"))
}

/// Runs one input.
///
/// # Panics
/// When mock-cloud breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(session) = Session::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    crate::runtime().block_on(run(session));
}

async fn run(session: Session) {
    let switch =
        Switchable::new(MockCloud::new(config(session.setup)).expect("the fuzz config builds"));
    for request in session.requests.iter().take(MAX_REQUESTS) {
        let (cloud, now) = after(&switch, request.wait_ms).await;
        let Some(http_request) = request.build(now) else {
            continue;
        };
        exchange(&switch, http_request, !cloud.faults().is_empty()).await;
    }
}
