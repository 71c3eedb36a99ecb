//! The `aws_requests` target: mock-cloud's AWS front ends, in-process through its tower
//! Service (`Switchable`): S3 (restXml: paths, subresources, headers, XML bodies), STS
//! (awsQuery forms), EC2 (ec2Query forms) and DynamoDB (awsJson1_0 bodies), each call
//! shaped as the SDKs shape it and signed by aws-sigv4, the SDK's own signer, in the
//! `Authorization` header or as a presigned query; now and then signed with an unknown
//! key, for another service, long ago, with a tampered signature, or not at all.
//!
//! Input: a structured session ([`Session`]): a config and up to
//! [`crate::cloud::MAX_REQUESTS`] calls, with virtual time passing between them.
//!
//! Asserts: no panic; every request gets an answer whose body reads to the end; no 5xx
//! except the ones the cloud was asked for (injected faults, a protocol's 5xx throttle);
//! and a call signed as an SDK signs it (a key the cloud knows, its own service, now,
//! untampered) is never refused for its signature: mock-cloud's SigV4 verifier agrees
//! with the SDK's signer on every request the generator makes.

mod build;
mod input;

use arbitrary::{Arbitrary, Unstructured};
use mock_cloud::{MockCloud, Switchable};

pub use input::{Call, Request, Session, Signing};

use crate::cloud::{ACCOUNTS, MAX_REQUESTS, after, config, exchange};

/// What every protocol's signature-mismatch message starts with.
const MISMATCH: &str = "The request signature we calculated does not match";

/// Runs one input.
///
/// # Panics
/// When mock-cloud breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(session) = Session::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    crate::runtime().block_on(run(&session));
}

/// What one call got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The request line.
    pub request: String,
    /// The service called (`s3`, `sts`, `ec2`, `dynamodb`), or `admin`.
    pub service: &'static str,
    /// Signed as an SDK signs it, with a key the cloud knows.
    pub signed_well: bool,
    /// The status.
    pub status: u16,
    /// The body.
    pub body: String,
}

/// Sends `session`'s calls to a fresh cloud, checks each answer, and returns them.
///
/// # Panics
/// When mock-cloud breaks a promise (see the module's docs).
pub async fn run(session: &Session) -> Vec<Answer> {
    let switch =
        Switchable::new(MockCloud::new(config(session.setup)).expect("the fuzz config builds"));
    let mut answers = Vec::new();
    for request in session.requests.iter().take(MAX_REQUESTS) {
        let (cloud, now) = after(&switch, request.wait_ms).await;
        let Some(http_request) = request.build(now) else {
            continue;
        };
        let signed_well =
            request.signed_well() && knows_keys(&cloud) && plain_headers(&http_request);
        let Some((described, status, body)) =
            exchange(&switch, http_request, !cloud.faults().is_empty()).await
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&body).into_owned();
        assert!(
            !(signed_well && text.contains(MISMATCH)),
            "{described} was signed by aws-sigv4 with a known key and refused: {status} {text}\n{request:#?}"
        );
        answers.push(Answer {
            request: described,
            service: request.service(),
            signed_well,
            status,
            body: text,
        });
    }
    answers
}

/// Whether every header value is printable ASCII. Where a value holds a tab or a
/// non-ASCII whitespace the signers differ: aws-sigv4 trims and collapses spaces only,
/// botocore every whitespace, and so does mock-cloud (a tab at either end never reaches a
/// server: HTTP/1.1 parsers strip it).
fn plain_headers<B>(request: &http::Request<B>) -> bool {
    request
        .headers()
        .values()
        .all(|v| v.as_bytes().iter().all(|b| (b' '..=b'~').contains(b)))
}

/// Whether the cloud (whose config a `PUT /admin/v1/config` may have replaced) knows the
/// fuzz accounts' access keys.
fn knows_keys(cloud: &MockCloud) -> bool {
    ACCOUNTS.iter().all(|a| {
        cloud.config().accounts.iter().any(|c| {
            c.aws
                .as_ref()
                .is_some_and(|aws| aws.access_keys.iter().any(|k| k.id == a.access_key))
        })
    })
}
