//! Credentials stay secret: a run on the embedded stack, logged at trace level, through
//! throttles and an outage (the paths where errors quote what they failed on), with every
//! output grepped for the accounts' bearer tokens: the log lines of every crate, the
//! reports (result.json, junit.xml, report.html), mock-cloud's journal, summary and
//! inventory, mock-apiserver's journal, and the Events the provider posted.

use std::io::Write;
use std::sync::{Arc, Mutex};

use base64::Engine;
use bytes::Bytes;
use harness::run::{Progress, run};
use http_body_util::{BodyExt, Full};
use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use tower::ServiceExt;

const SCENARIO: &str = "\
apiVersion: harness/v1
name: secrets
provider: {maxReconcileRate: 20, pollInterval: 2s}
cloud:
  accounts:
    - name: tight
      quotas:
        mutate: {burst: 2, perSecond: 2}
    - name: roomy
  provisioning: {databaseCreate: 1s, databaseDelete: 1s}
resources:
  - {name: bucket, kind: Bucket, count: 8, account: tight}
  - {name: db, kind: Database, count: 2, account: roomy, spec: {engine: postgres, version: '16', sizeGb: 10}}
phases:
  - {name: create, action: create, timeout: 60s}
  - {name: outage, action: cloudOutage, duration: 3s, status: 503, timeout: 60s}
  - {name: update, action: update, groups: [bucket], spec: {versioning: true}, timeout: 60s}
assertions:
  - {check: orphans}
  - {check: duplicates}
";

use crate::keeping::Keeping;

type Kept = crate::keeping::Kept<(ApiServer, MockCloud)>;

/// A log sink shared by every thread of the run's runtime.
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

async fn get(apiserver: &ApiServer, path: &str) -> String {
    let request = http::Request::get(path)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = apiserver.service().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200, "GET {path}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&body).into_owned()
}

/// Every output of the run, by name.
fn outputs(sink: &Sink, r: &harness::result::RunResult) -> Vec<(String, String)> {
    vec![
        (
            "log lines (trace level)".to_owned(),
            String::from_utf8_lossy(&sink.0.lock().unwrap()).into_owned(),
        ),
        (
            "result.json".to_owned(),
            serde_json::to_string_pretty(r).unwrap(),
        ),
        ("junit.xml".to_owned(), harness::report::junit(r)),
        ("report.html".to_owned(), harness::report::html(r)),
        (
            "assertion table".to_owned(),
            harness::report::assertion_table(r),
        ),
    ]
}

#[test]
fn no_bearer_token_appears_in_any_log_line_report_journal_or_event_of_a_run() {
    let sink = Sink::default();
    let writer = sink.clone();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    let on_threads = dispatch.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || {
            // Every worker and blocking thread logs into the sink for its lifetime.
            std::mem::forget(tracing::dispatcher::set_default(&on_threads));
        })
        .build()
        .unwrap();
    let kept = Kept::default();
    let scenario = harness::scenario::parse(SCENARIO, "secrets.yaml").expect("valid scenario");
    let output = tracing::dispatcher::with_default(&dispatch, || {
        runtime.block_on(run::<Keeping<(ApiServer, MockCloud)>, _>(
            &scenario,
            kept.clone(),
            &Progress::quiet(),
            std::future::pending,
        ))
    })
    .expect("the stack starts");
    let r = &output.result;
    let (apiserver, cloud) = kept.lock().unwrap().take().expect("the target started");
    let mut outputs = outputs(&sink, r);
    outputs.push((
        "mock-cloud journal".to_owned(),
        format!("{:?}", cloud.calls()),
    ));
    outputs.push((
        "mock-cloud summary".to_owned(),
        format!("{:?}", cloud.summary()),
    ));
    outputs.push((
        "mock-cloud inventory".to_owned(),
        format!("{:?}", cloud.inventory()),
    ));
    outputs.push((
        "mock-apiserver journal".to_owned(),
        format!("{:?}", apiserver.journal().since(0)),
    ));
    let events = runtime.block_on(async {
        format!(
            "{}\n{}",
            get(&apiserver, "/apis/events.k8s.io/v1/events").await,
            get(&apiserver, "/api/v1/events").await
        )
    });
    assert!(
        events.contains("\"reason\""),
        "the provider posted events: {events}"
    );
    outputs.push(("events".to_owned(), events));

    let logs = &outputs[0].1;
    assert!(logs.contains("TRACE"), "trace-level lines were captured");
    assert!(
        r.phases.iter().any(|p| p.name == "outage"),
        "the run went through the outage"
    );
    let mut secrets = Vec::new();
    for account in ["tight", "roomy"] {
        let token = harness::run::cloud::cloud_token(account);
        secrets.push(base64::engine::general_purpose::STANDARD.encode(&token));
        secrets.push(token);
    }
    // The needles are right: the tokens are where they belong, in the Secrets.
    let stored = runtime.block_on(get(&apiserver, "/api/v1/secrets"));
    for secret in secrets.iter().step_by(2) {
        assert!(
            stored.contains(secret.as_str()),
            "the Secrets hold {secret}"
        );
    }
    let mut leaks = Vec::new();
    for (name, text) in &outputs {
        for secret in &secrets {
            if let Some(at) = text.find(secret.as_str()) {
                let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
                let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
                leaks.push(format!("{name}: {}", &text[line..end.min(line + 400)]));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "credentials leaked:\n{}",
        leaks.join("\n")
    );
}
