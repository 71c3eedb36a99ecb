//! The provider's API requests in cluster mode, counted by each source the harness reads
//! them from (mock-apiserver's request journal, the FlowSchema's series, the request
//! metrics of every replica) against what the server's journal holds of the provider's
//! User-Agent; and a provider the server throttles.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kube::api::Api;

use super::procs::default_flags;
use super::{Cluster, calls, scenario};

impl Cluster {
    /// Runs `scenario` with its API requests read from `source` every `interval`, keeping
    /// its objects; requires an exit of 0 or 1 (its checks judged) and returns its result.
    fn run_measured_by(
        &mut self,
        scenario: &str,
        source: &str,
        interval: &str,
    ) -> serde_json::Value {
        let (status, stdout, stderr) = self.run_status(
            scenario,
            &[
                "--api-requests-from",
                source,
                "--api-scrape-interval",
                interval,
                "--keep",
            ],
        );
        assert!(
            matches!(status.code(), Some(0 | 1)),
            "{source}: exit {status}\n{stdout}\n{stderr}"
        );
        self.result()
    }

    /// The last sequence number of each replica's journal.
    fn journal_seqs(&self) -> Vec<u64> {
        (0..self.replicas.len())
            .map(|i| self.journal_since(i, u64::MAX).last_seq)
            .collect()
    }

    /// Each replica's journal's last sequence number once the provider has sent nothing
    /// for a second (its lists and watches at start are done).
    fn provider_quiet(&self) -> Vec<u64> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seqs = self.journal_seqs();
            std::thread::sleep(Duration::from_secs(1));
            if self.provider_requests_since(&seqs).1.is_empty() {
                return seqs;
            }
            assert!(Instant::now() < deadline, "the provider never went quiet");
        }
    }

    /// Replica `replica`'s journal after `since`.
    fn journal_since(&self, replica: usize, since: u64) -> mock_apiserver::JournalPage {
        let request = http::Request::get(format!("/mock/v1/requests?since={since}"))
            .body(Vec::new())
            .unwrap();
        let text = self
            .runtime
            .block_on(self.replicas[replica].request_text(request))
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// The provider's requests (its User-Agent) journalled after `since` (by replica),
    /// summed over the replicas: by verb and resource as the harness names them, and
    /// their times (µs; the replicas share one clock).
    fn provider_requests_since(&self, since: &[u64]) -> (BTreeMap<String, u64>, Vec<u64>) {
        let mut by = BTreeMap::new();
        let mut times = Vec::new();
        for (i, &since) in since.iter().enumerate() {
            let (b, t) = self.provider_requests_of(i, since);
            for (k, n) in b {
                *by.entry(k).or_default() += n;
            }
            times.extend(t);
        }
        (by, times)
    }

    /// [`Cluster::provider_requests_since`] of one replica.
    fn provider_requests_of(
        &self,
        replica: usize,
        since: u64,
    ) -> (BTreeMap<String, u64>, Vec<u64>) {
        let page = self.journal_since(replica, since);
        assert!(
            page.entries.first().is_none_or(|e| e.seq == since + 1),
            "the journal dropped entries"
        );
        let mut by = BTreeMap::new();
        let mut times = Vec::new();
        for e in page
            .entries
            .iter()
            .filter(|e| e.user_agent.starts_with("provider/"))
        {
            let resource = if e.verb == mock_apiserver::Verb::Discovery {
                harness::run::own::discovery_name(&e.resource).to_owned()
            } else {
                let (plural, sub) = e.resource.split_once('/').unwrap_or((&e.resource, ""));
                harness::run::own::resource_name(&e.group, plural, sub)
            };
            *by.entry(format!("{} {resource}", e.verb.as_str()))
                .or_default() += 1;
            times.push(e.at_us);
        }
        (by, times)
    }
}

/// A client of each replica the `kubernetes` EndpointSlices list (mock-apiserver writes
/// them with `--replicas`), or `client` alone when they list none.
pub(super) async fn replica_clients(client: &kube::Client) -> Vec<kube::Client> {
    let slices: Api<k8s_openapi::api::discovery::v1::EndpointSlice> =
        Api::namespaced(client.clone(), "default");
    let list = slices
        .list(&kube::api::ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
        .await
        .unwrap();
    let mut out = Vec::new();
    for slice in &list.items {
        let port = slice.ports.as_ref().unwrap()[0].port.unwrap();
        for e in &slice.endpoints {
            let url = format!("http://{}:{port}", e.addresses[0]);
            let config = kube::Config::new(url.parse().unwrap());
            out.push(kube::Client::try_from(config).unwrap());
        }
    }
    if out.is_empty() {
        out.push(client.clone());
    }
    out
}

/// The run's `apiRequests` verdict.
fn api_requests_verdict(result: &serde_json::Value) -> &serde_json::Value {
    result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "apiRequests")
        .expect("an apiRequests verdict")
}

/// The provider's requests in a result (`api_requests_by`), as `VERB RESOURCE` → count.
pub(super) fn api_requests_by(result: &serde_json::Value) -> BTreeMap<String, u64> {
    result["api_requests_by"]
        .as_array()
        .unwrap_or_else(|| panic!("no api_requests_by: {}", result["run"]))
        .iter()
        .map(|c| {
            (
                format!(
                    "{} {}",
                    c["verb"].as_str().unwrap(),
                    c["resource"].as_str().unwrap()
                ),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The API server as two replicas behind one address (mock-apiserver `--replicas 2`: two
/// sockets over one store, each with its own journal and `/metrics`, a round-robin TCP
/// load balancer in front, the `kubernetes` EndpointSlices listing both): the provider's
/// connections land on both, the harness finds both replicas, scrapes each and sums
/// them, and its count of the provider's requests by verb and resource equals the sum of
/// the two journals'.
#[test]
fn a_cluster_run_reads_api_requests_from_every_replicas_metrics_and_keep_leaves_the_objects() {
    let mut cluster = Cluster::start_flow_control(
        "cluster-metrics",
        default_flags(),
        None,
        &["--replicas", "2"],
    );
    assert_eq!(
        cluster.replicas.len(),
        2,
        "the EndpointSlices list both replicas"
    );
    let scenario = scenario().replace("  - {name: restart, action: restart, timeout: 60s}\n", "");
    let before = cluster.provider_quiet();
    let result = cluster.run(&scenario, &["--api-requests-from", "metrics", "--keep"]);
    let run = &result["run"];
    assert!(
        run["api_requests_measured_by"]
            .as_str()
            .unwrap()
            .starts_with("apiserver_request_total"),
        "{run}"
    );
    let notes = run["notes"].to_string();
    assert!(
        notes.contains("has 2 replicas") && notes.contains("each read directly and summed"),
        "{notes}"
    );
    let counted = api_requests_by(&result);
    let (truth, _) = cluster.provider_requests_since(&before);
    // Both replicas served the provider since it started (its lists and watches opened
    // connections on each). Within the run alone, its kept-alive connections may all sit
    // on one replica: the balancer spreads connections, not requests.
    for i in 0..before.len() {
        let (of_one, _) = cluster.provider_requests_of(i, 0);
        assert!(
            of_one.values().sum::<u64>() > 0,
            "replica {i} served some of the provider's requests: {of_one:#?}"
        );
    }
    eprintln!(
        "two replicas: {} requests counted, the journals' sum {}",
        counted.values().sum::<u64>(),
        truth.values().sum::<u64>()
    );
    assert_eq!(counted, truth, "by verb and resource");
    // 20 creates make the provider write finalizers, external names and status: every
    // bucket at least 3 requests to the provider's group.
    assert!(truth.values().sum::<u64>() >= 60, "{truth:#?}");
    assert_eq!(calls(&result, "create", "create"), 20);
    assert!(
        cluster.secret_exists("mock-cloud-team-a"),
        "--keep left the Secret"
    );
}

/// The smoke scenario in cluster mode, once per API-request source, each against a
/// mock-apiserver of its own in priority-and-fairness mode: each run's count of the provider's
/// requests by verb and resource equals what the server's journal holds of the provider's
/// User-Agent over the run (Events of both APIs, Secrets, the managed kinds and their
/// status), and its busiest second equals the journal's where it has each request's time
/// (the journal); a metrics source dates each scrape's increase at the scrape, and its
/// apiRequests check judges the band that puts around the busiest second, which holds the
/// journal's.
#[test]
fn smoke_counts_every_request_of_the_provider_alike_from_the_journal_the_flow_schema_and_the_request_metrics()
 {
    let _cores = crate::timing::sensitive();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml");
    let s = harness::scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let flags: Vec<String> = harness::run::source::provider_metrics::provider_flags(&s.settings)
        .into_iter()
        .map(|(flag, value)| format!("--{flag}={value}"))
        .collect();
    let text = std::fs::read_to_string(&path).unwrap();
    // Three stacks at once, one per source: each run waits on real time, not on the CPU.
    std::thread::scope(|scope| {
        let runs: Vec<_> = [
            ("journal", "mock-apiserver's request journal"),
            (
                "flowschema",
                "apiserver_flowcontrol_dispatched_requests_total",
            ),
            ("metrics", "apiserver_request_total"),
        ]
        .into_iter()
        .map(|(source, measured_by)| {
            let (text, flags) = (&text, flags.clone());
            scope.spawn(move || smoke_counts_from(source, measured_by, text, flags))
        })
        .collect();
        for run in runs {
            if let Err(panic) = run.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// One source's run of smoke.yaml on a stack of its own: see
/// [`smoke_counts_every_request_of_the_provider_alike_from_the_journal_the_flow_schema_and_the_request_metrics`].
fn smoke_counts_from(source: &str, measured_by: &str, text: &str, flags: Vec<String>) {
    use harness::measure::{window_us, windowed_max};

    let mut cluster = Cluster::start_stack(&format!("cluster-sources-{source}"), flags, true);
    let before = cluster.provider_quiet();
    let result = cluster.run_measured_by(text, source, "100ms");
    let run = &result["run"];
    assert!(
        run["api_requests_measured_by"]
            .as_str()
            .unwrap()
            .starts_with(measured_by),
        "{source}: {run}"
    );
    let (truth, mut times) = cluster.provider_requests_since(&before);
    let counted = api_requests_by(&result);
    for group in ["events.events.k8s.io", "buckets.mockcloud.example.org"] {
        assert!(
            truth.keys().any(|k| k.ends_with(group)),
            "the provider's {group} requests are in the journal: {truth:#?}"
        );
    }
    assert_eq!(counted, truth, "{source}: by verb and resource");
    times.sort_unstable();
    let busiest = windowed_max(&times, window_us(Duration::from_secs(1))).count as f64;
    let verdict = api_requests_verdict(&result);
    let observed = verdict["observed"].as_f64().unwrap();
    // A scrape's increase is dated at the scrape, up to the longest gap between reads
    // plus the longest request after the request was sent: the busiest second may be off
    // by the requests of that long.
    let delay = run["api_read_gap_s"]
        .as_f64()
        .map(|gap| gap + run["api_longest_request_s"].as_f64().unwrap());
    let slack = match delay {
        None => 0.0,
        Some(d) => windowed_max(&times, window_us(Duration::from_secs_f64(d))).count as f64,
    };
    assert_eq!(source == "journal", delay.is_none(), "{source}: {run}");
    let note = verdict["note"].as_str().unwrap_or_default();
    eprintln!(
        "{source}: {} requests; busiest second {observed} (journal {busiest}, slack {slack}); {} {}; {note}",
        counted.values().sum::<u64>(),
        verdict["outcome"],
        run["api_count"]
    );
    assert!(
        (observed - busiest).abs() <= slack,
        "{source}: busiest second {observed}, the journal's {busiest} (slack {slack})"
    );
    // The check judges the band the dates allow: it holds the journal's busiest second,
    // and the verdict is a pass or a failure only where the whole band is on one side.
    let band = note
        .split_once("so the most sent in any 1 s is between ")
        .map(|(_, rest)| {
            let mut ends = rest
                .split([' ', ',', ';'])
                .filter_map(|w| w.parse::<f64>().ok());
            (ends.next().unwrap(), ends.next().unwrap())
        });
    let (low, high) = band.unwrap_or((observed, observed));
    assert!(
        low <= busiest && busiest <= high,
        "{source}: the journal's {busiest} not in [{low}, {high}]"
    );
    // (A count that may include others' requests, or a provider queued by the server,
    // may make a side UNMEASURED too.)
    let limit = verdict["limit"].as_f64().unwrap();
    let outcome = verdict["outcome"].as_str().unwrap();
    if high <= limit {
        assert_ne!(outcome, "fail", "{source}: {verdict}");
    } else if low > limit {
        assert_ne!(outcome, "pass", "{source}: {verdict}");
    } else {
        assert_eq!(outcome, "unmeasured", "{source}: {verdict}");
    }
    // The server's default seats never turn smoke's provider away. On a machine busy with
    // three stacks a request may wait a moment in a queue: well under a second in all.
    let throttling = &run["api_server_throttling"];
    assert!(
        throttling["rejected"].as_u64().unwrap_or(0) == 0
            && throttling["queued_s"].as_f64().unwrap_or(0.0) < 1.0,
        "{source}: {run}"
    );
    let expect_count = if source == "metrics" {
        "mayIncludeOthers"
    } else {
        "exact"
    };
    assert_eq!(run["api_count"], expect_count, "{source}: {run}");
}

/// A provider held back by the server: mock-apiserver's priority and fairness gives the
/// provider's FlowSchema a priority level of one seat and short queues, so a create wave
/// queues and some requests get 429s. The run reports the server's throttling from the
/// FlowSchema's series, and the apiRequests check, within its bound, is UNMEASURED rather
/// than a pass by the provider's own merit.
#[test]
fn a_provider_the_server_throttles_is_reported_and_not_passed_on_its_budget() {
    let config = "apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: loadtest-tiny}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 1
    limitResponse:
      type: Queue
      queuing: {queues: 1, handSize: 1, queueLengthLimit: 1}
---
"
    .to_owned()
        + &harness::run::flow_schema::manifest("loadtest-system", "provider")
            .replace("name: workload-low", "name: loadtest-tiny");
    let mut cluster = Cluster::start_flow_control(
        "cluster-throttled",
        default_flags()
            .into_iter()
            .map(|f| f.replace("=10", "=100"))
            .collect(),
        Some(&config),
        &[
            "--max-requests-inflight",
            "1",
            "--max-mutating-requests-inflight",
            "1",
            "--apf-queue-wait",
            "50ms",
        ],
    );
    // 40 Buckets created at once and reconciled by 100 workers: more requests at a time
    // than one seat and a queue of one hold, whatever the machine's speed (20 at 10
    // workers left a loaded machine's server idle enough to hold none back). The 429s
    // back the provider's requeues off, so whether every Bucket is Ready within the
    // create's 30 s depends on the machine: a run stopped by the timeout is judged too,
    // and `--keep` leaves the clean-up (as throttled as the rest) to the server's exit.
    let scenario = scenario()
        .replace("  - {name: restart, action: restart, timeout: 60s}\n", "")
        .replace("maxReconcileRate: 10", "maxReconcileRate: 100")
        .replace("count: 20,", "count: 40,")
        .replace(
            "action: create, rate: 40, timeout: 60s",
            "action: create, timeout: 30s",
        );
    let result = cluster.run_measured_by(&scenario, "flowschema", "200ms");
    let th = &result["run"]["api_server_throttling"];
    eprintln!("throttling: {th}");
    assert_eq!(th["priority_level"], "loadtest-tiny", "{th}");
    let held = th["rejected"].as_u64().unwrap() + th["queued"].as_u64().unwrap();
    assert!(held > 0, "the server held the provider back: {th}");
    let verdict = api_requests_verdict(&result);
    eprintln!("apiRequests: {} {}", verdict["outcome"], verdict["note"]);
    if verdict["observed"].as_f64() <= verdict["limit"].as_f64() {
        // Within the limit, and not a pass: UNMEASURED, or INCOMPLETE (with the same
        // clause) when the create timed out.
        let outcome = &verdict["outcome"];
        assert!(
            outcome == "unmeasured" || (outcome == "incomplete" && result["partial"] == true),
            "{verdict}"
        );
        assert!(
            verdict["note"]
                .as_str()
                .unwrap()
                .contains("the server held the provider back"),
            "{verdict}"
        );
    }
}
