//! AWS credentials stay secret: calls signed with an access key (in the header and
//! presigned), with STS session credentials (a session token), and with a wrong secret,
//! with mock-cloud logging at trace level; its log lines, its journal, summary, inventory
//! and metrics hold no secret key, no session token and no SigV4 signature.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_credential_types::Credentials;
use bytes::Bytes;
use http_body_util::Full;
use mock_cloud::{AccessKey, AccountConfig, AwsIdentity, Config, MockCloud};

use crate::aws_support::{Payload, Signing, cloud_now, element, text};

const KEY: &str = "AKIASECRETSTEST00001";
const SECRET: &str = "wJalrSECRETxUtnFEMI/K7MDENG+bPxRfiCYzz";

/// A log sink.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The signature a signed request carries (header or query).
fn signature(request: &http::Request<Full<Bytes>>) -> String {
    let from_header = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split("Signature=").nth(1))
        .map(str::to_owned);
    from_header
        .or_else(|| {
            request
                .uri()
                .query()
                .and_then(|q| q.split("X-Amz-Signature=").nth(1))
                .map(|s| s.split('&').next().unwrap_or(s).to_owned())
        })
        .expect("a signed request")
}

/// Sends `request`; returns its answer's status and body, and keeps its signature.
async fn send(
    cloud: &MockCloud,
    request: http::Request<Full<Bytes>>,
    signatures: &mut Vec<String>,
) -> (u16, String) {
    signatures.push(signature(&request));
    let response = cloud.handle(request).await;
    let status = response.status().as_u16();
    (status, text(response).await)
}

async fn admin(cloud: &MockCloud, path: &str) -> String {
    let request = http::Request::get(path)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = cloud.handle(request).await;
    assert_eq!(response.status(), 200, "GET {path}");
    text(response).await
}

async fn calls(cloud: &MockCloud, signatures: &mut Vec<String>) -> Vec<String> {
    let mine = Credentials::new(KEY, SECRET, None, None, "secrets");
    let wrong = Credentials::new(KEY, "not-the-secret", None, None, "secrets");
    let form = [("content-type", "application/x-www-form-urlencoded")];
    let mut bodies = Vec::new();

    // S3 with the access key: in the header, presigned, and with a wrong secret.
    let put = Signing::new("PUT", "/secret-bucket", "s3").sign(&mine, cloud_now(cloud));
    let (status, body) = send(cloud, put, signatures).await;
    assert_eq!(status, 200, "{body}");
    let presigned = Signing::new("GET", "/secret-bucket?location", "s3")
        .presigned(Duration::from_secs(300))
        .sign(&mine, cloud_now(cloud));
    let (status, body) = send(cloud, presigned, signatures).await;
    assert_eq!(status, 200, "{body}");
    let bad = Signing::new("GET", "/secret-bucket?tagging", "s3").sign(&wrong, cloud_now(cloud));
    let (status, body) = send(cloud, bad, signatures).await;
    assert_eq!(status, 403, "{body}");
    bodies.push(body);

    // STS: session credentials for a role of the account.
    let assume = b"Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdeployer&RoleSessionName=s1";
    let request = Signing::new("POST", "/", "sts")
        .headers(&form)
        .body(assume)
        .payload(Payload::NotS3)
        .sign(&mine, cloud_now(cloud));
    let (status, body) = send(cloud, request, signatures).await;
    assert_eq!(status, 200, "{body}");
    let session = Credentials::new(
        element(&body, "AccessKeyId").unwrap(),
        element(&body, "SecretAccessKey").unwrap(),
        Some(element(&body, "SessionToken").unwrap().to_owned()),
        None,
        "assumed",
    );

    // The session credentials on DynamoDB, EC2 (a query) and S3; then with a token
    // that is not theirs.
    let list = Signing::new("POST", "/", "dynamodb")
        .headers(&[
            ("content-type", "application/x-amz-json-1.0"),
            ("x-amz-target", "DynamoDB_20120810.ListTables"),
        ])
        .body(b"{}")
        .payload(Payload::NotS3)
        .sign(&session, cloud_now(cloud));
    let (status, body) = send(cloud, list, signatures).await;
    assert_eq!(status, 200, "{body}");
    let vpcs = Signing::new("GET", "/?Action=DescribeVpcs&Version=2016-11-15", "ec2")
        .payload(Payload::NotS3)
        .sign(&session, cloud_now(cloud));
    let (status, body) = send(cloud, vpcs, signatures).await;
    assert_eq!(status, 200, "{body}");
    let get = Signing::new("GET", "/secret-bucket?location", "s3").sign(&session, cloud_now(cloud));
    let (status, body) = send(cloud, get, signatures).await;
    assert_eq!(status, 200, "{body}");
    let forged = Credentials::new(
        session.access_key_id(),
        session.secret_access_key(),
        Some("FwoGZXIvYXdzEFORGEDTOKEN".to_owned()),
        None,
        "forged",
    );
    let who = Signing::new("POST", "/", "sts")
        .headers(&form)
        .body(b"Action=GetCallerIdentity&Version=2011-06-15")
        .payload(Payload::NotS3)
        .sign(&forged, cloud_now(cloud));
    let (status, body) = send(cloud, who, signatures).await;
    assert_eq!(status, 403, "{body}");
    bodies.push(body);

    bodies.push(session.secret_access_key().to_owned());
    bodies.push(session.session_token().unwrap().to_owned());
    bodies
}

#[test]
fn no_secret_key_session_token_or_signature_appears_in_mock_clouds_logs_journal_or_metrics() {
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = Config::empty().with_account(
        AccountConfig::new("acme")
            .with_token("t-acme")
            .with_aws(AwsIdentity::new("123456789012").with_key(AccessKey::new(KEY, SECRET))),
    );
    let cloud = MockCloud::new(config).unwrap();
    let mut signatures = Vec::new();
    let (bodies, outputs) = runtime.block_on(async {
        let bodies = calls(&cloud, &mut signatures).await;
        let mut outputs = Vec::new();
        for path in [
            mock_cloud::admin::CALLS_PATH,
            mock_cloud::admin::SUMMARY_PATH,
            mock_cloud::admin::INVENTORY_PATH,
            "/metrics",
        ] {
            outputs.push((path.to_owned(), admin(&cloud, path).await));
        }
        (bodies, outputs)
    });
    let logs = String::from_utf8_lossy(&sink.0.lock().unwrap()).into_owned();
    assert!(
        logs.contains("mock_cloud::pipeline: call") && logs.contains("service=\"sts\""),
        "trace lines were captured: {logs}"
    );
    let journal = &outputs[0].1;
    assert!(
        journal.contains("AssumeRole") && journal.contains("ListTables"),
        "{journal}"
    );
    // The answers to a wrong signature and a forged token name no secret either.
    let (session_secret, session_token) = (&bodies[2], &bodies[3]);
    let mut secrets = vec![
        SECRET.to_owned(),
        session_secret.clone(),
        session_token.clone(),
    ];
    secrets.extend(signatures.iter().cloned());
    assert_eq!(signatures.len(), 8);
    let mut everything = vec![("log lines (trace)".to_owned(), logs)];
    everything.extend(outputs);
    everything.push(("wrong-secret answer".to_owned(), bodies[0].clone()));
    everything.push(("forged-token answer".to_owned(), bodies[1].clone()));
    let mut leaks = Vec::new();
    for (name, text) in &everything {
        for secret in &secrets {
            if text.contains(secret.as_str()) {
                leaks.push(format!("{name} holds {secret}"));
            }
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
}
