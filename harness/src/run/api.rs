//! Where a run's API-server request counts come from.
//!
//! - Embedded: mock-apiserver's journal in this process: every request, its time, verb and
//!   `User-Agent` (the harness's own requests carry [`HARNESS_USER_AGENT`]).
//! - Cluster, when the server is a mock-apiserver: its journal over HTTP
//!   (`/mock/v1/requests?since=SEQ`), read every second; as exact as embedded.
//! - Cluster, any other API server: its `/metrics`, scraped every second, each scrape's
//!   increase dated at the scrape (so a window's count is exact to within one scrape
//!   interval). When the FlowSchema [`PROVIDER_FLOW_SCHEMA`] (ci/manifests) is installed,
//!   `apiserver_flowcontrol_dispatched_requests_total` for it counts every request of the
//!   provider's ServiceAccount. Without it, `apiserver_request_total` has no client label,
//!   so the provider's requests are the requests to the provider's API group minus the
//!   harness's own (which the harness counts as it sends them), and the provider's Events
//!   and Secret reads are not in it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use kube::client::Body;
use serde::Deserialize;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::collect::{counter_increase, has_label, label_value, prometheus_samples};
use super::objects::GROUP;
use crate::result::ApiRequest;

/// The `User-Agent` of the harness's own Kubernetes requests; every other request at the API
/// server is the provider's.
pub const HARNESS_USER_AGENT: &str = "harness";

/// The FlowSchema that sets the provider's requests apart in the API server's metrics.
pub const PROVIDER_FLOW_SCHEMA: &str = "loadtest-provider";

/// How often a cluster run reads the API server's journal or metrics.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// Where a cluster run should read API requests from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ApiSource {
    /// The mock journal if the server has one, else `/metrics`.
    #[default]
    Auto,
    /// mock-apiserver's journal (`/mock/v1/requests`); the run stops if there is none.
    Journal,
    /// The server's `/metrics`; the run stops if it cannot be read.
    Metrics,
}

/// How API requests were measured, for the result's notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiMeasure {
    /// mock-apiserver's journal (in-process or over HTTP): exact.
    Journal,
    /// `apiserver_request_total` scraped every [`SCRAPE_INTERVAL`].
    Metrics,
    /// `apiserver_flowcontrol_dispatched_requests_total` of [`PROVIDER_FLOW_SCHEMA`],
    /// scraped every [`SCRAPE_INTERVAL`].
    FlowSchema,
    /// Neither could be read.
    None,
}

impl ApiMeasure {
    /// A sentence for the result.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            ApiMeasure::Journal => "mock-apiserver's request journal: every request, exact times",
            ApiMeasure::Metrics => {
                "apiserver_request_total for the provider's API group, minus the harness's own requests, scraped every 1 s (window counts exact to one scrape interval; Events and Secret reads not included)"
            }
            ApiMeasure::FlowSchema => {
                "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"loadtest-provider\"}: every request of the provider's ServiceAccount, scraped every 1 s (window counts exact to one scrape interval)"
            }
            ApiMeasure::None => {
                "not measured: the API server offers neither a mock journal nor /metrics to this kubeconfig"
            }
        }
    }
}

/// The Kubernetes verb of a request the harness sends, for subtracting its own requests.
#[must_use]
pub fn verb_of(method: &http::Method, path: &str, query: Option<&str>) -> &'static str {
    let named = {
        // Segments after /apis/GROUP/VERSION/: [namespaces, ns,] plural [, name [, sub]].
        let rest: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).skip(3).collect();
        let rest = if rest.first() == Some(&"namespaces") && rest.len() >= 3 {
            &rest[2..]
        } else {
            &rest[..]
        };
        rest.len() >= 2
    };
    let watch = query.is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"));
    match *method {
        http::Method::GET if watch => "watch",
        http::Method::GET if named => "get",
        http::Method::GET => "list",
        http::Method::POST => "create",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE if named => "delete",
        http::Method::DELETE => "deletecollection",
        _ => "other",
    }
}

/// The harness's own requests to the provider's API group, by verb.
#[derive(Clone, Debug, Default)]
pub struct OwnRequests(Arc<Mutex<BTreeMap<&'static str, u64>>>);

impl OwnRequests {
    /// Counts `request` if it is for the provider's group.
    pub fn count(&self, request: &http::Request<Body>) {
        let path = request.uri().path();
        if path.starts_with(&format!("/apis/{GROUP}/")) {
            let verb = verb_of(request.method(), path, request.uri().query());
            *self
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(verb)
                .or_default() += 1;
        }
    }

    fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// `apiserver_request_total` for `group`, summed by verb (lowercase Kubernetes verbs).
#[must_use]
pub fn request_totals(metrics: &str, group: &str) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for (labels, value) in prometheus_samples(metrics, "apiserver_request_total") {
        if !has_label(labels, "group", group) {
            continue;
        }
        let verb = match label_value(labels, "verb").unwrap_or("") {
            "POST" => "create".to_owned(),
            "PUT" => "update".to_owned(),
            "PATCH" | "APPLY" => "patch".to_owned(),
            other => other.to_ascii_lowercase(),
        };
        *totals.entry(verb).or_default() += value as u64;
    }
    totals
}

/// `apiserver_flowcontrol_dispatched_requests_total` of one flow schema, if the series
/// exists.
#[must_use]
pub fn flow_schema_total(metrics: &str, flow_schema: &str) -> Option<u64> {
    prometheus_samples(metrics, "apiserver_flowcontrol_dispatched_requests_total")
        .filter(|(labels, _)| has_label(labels, "flow_schema", flow_schema))
        .map(|(_, v)| v as u64)
        .reduce(|a, b| a + b)
}

/// A mock-apiserver journal document.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JournalDoc {
    last_seq: u64,
    entries: Vec<JournalEntry>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JournalEntry {
    seq: u64,
    time: String,
    verb: String,
    user_agent: String,
}

#[derive(Default)]
struct Collected {
    requests: Vec<ApiRequest>,
    /// Journal: entries that fell out of the server's journal before they were read.
    missed: u64,
    errors: u64,
    last_error: Option<String>,
}

/// Reads the API server's journal or metrics in the background.
pub struct ApiPoller {
    measure: ApiMeasure,
    collected: Arc<Mutex<Collected>>,
    stop: Arc<AtomicBool>,
    task: Option<JoinHandle<()>>,
}

struct PollState {
    client: kube::Client,
    start: Instant,
    start_wall: SystemTime,
    own: OwnRequests,
    cursor: u64,
    last_totals: BTreeMap<String, u64>,
    last_own: BTreeMap<&'static str, u64>,
}

async fn get_text(client: &kube::Client, path: &str) -> Result<String, kube::Error> {
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    client.request_text(request).await
}

impl PollState {
    async fn poll(&mut self, measure: ApiMeasure, out: &Mutex<Collected>) {
        let result = match measure {
            ApiMeasure::Journal => self.poll_journal().await,
            ApiMeasure::Metrics => self.poll_metrics().await,
            ApiMeasure::FlowSchema => self.poll_flow_schema().await,
            ApiMeasure::None => Ok((Vec::new(), 0)),
        };
        let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok((requests, missed)) => {
                out.requests.extend(requests);
                out.missed += missed;
            }
            Err(e) => {
                out.errors += 1;
                out.last_error = Some(e);
            }
        }
    }

    async fn poll_journal(&mut self) -> Result<(Vec<ApiRequest>, u64), String> {
        let text = get_text(
            &self.client,
            &format!("/mock/v1/requests?since={}", self.cursor),
        )
        .await
        .map_err(|e| e.to_string())?;
        let doc: JournalDoc = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let missed = doc
            .entries
            .first()
            .map_or(0, |e| e.seq.saturating_sub(self.cursor + 1));
        let start_wall = self.start_wall;
        let requests = doc
            .entries
            .iter()
            .filter_map(|e| {
                let at: k8s_openapi::jiff::Timestamp = e.time.parse().ok()?;
                let at = SystemTime::from(at);
                Some(ApiRequest {
                    at_us: at.duration_since(start_wall).ok()?.as_micros() as u64,
                    verb: e.verb.clone(),
                    from_provider: e.user_agent != HARNESS_USER_AGENT,
                })
            })
            .collect();
        self.cursor = doc.last_seq.max(self.cursor);
        Ok((requests, missed))
    }

    async fn poll_flow_schema(&mut self) -> Result<(Vec<ApiRequest>, u64), String> {
        let text = get_text(&self.client, "/metrics")
            .await
            .map_err(|e| e.to_string())?;
        let at_us = self.start.elapsed().as_micros() as u64;
        let total = flow_schema_total(&text, PROVIDER_FLOW_SCHEMA).unwrap_or(0);
        let before = self.last_totals.get("all").copied().unwrap_or(0);
        let grew = counter_increase(before, total);
        self.last_totals.insert("all".to_owned(), total);
        let requests = (0..grew)
            .map(|_| ApiRequest {
                at_us,
                verb: "all".to_owned(),
                from_provider: true,
            })
            .collect();
        Ok((requests, 0))
    }

    async fn poll_metrics(&mut self) -> Result<(Vec<ApiRequest>, u64), String> {
        let text = get_text(&self.client, "/metrics")
            .await
            .map_err(|e| e.to_string())?;
        let at_us = self.start.elapsed().as_micros() as u64;
        let totals = request_totals(&text, GROUP);
        let own = self.own.snapshot();
        let mut requests = Vec::new();
        for (verb, &total) in &totals {
            let before = self.last_totals.get(verb).copied().unwrap_or(0);
            let grew = counter_increase(before, total);
            let own_verb: &str = verb;
            let own_now = own.get(own_verb).copied().unwrap_or(0);
            let own_before = self.last_own.get(own_verb).copied().unwrap_or(0);
            let provider = grew.saturating_sub(own_now - own_before);
            requests.extend((0..provider).map(|_| ApiRequest {
                at_us,
                verb: verb.clone(),
                from_provider: true,
            }));
        }
        self.last_totals = totals;
        self.last_own = own;
        Ok((requests, 0))
    }
}

impl ApiPoller {
    /// Finds what the server offers (a mock journal, else `/metrics`) and starts reading it
    /// every [`SCRAPE_INTERVAL`]. Requests before this call are not counted.
    ///
    /// # Errors
    /// The source asked for cannot be read.
    pub async fn start(
        client: kube::Client,
        start: Instant,
        start_wall: SystemTime,
        own: OwnRequests,
        source: ApiSource,
    ) -> Result<ApiPoller, String> {
        let mut state = PollState {
            client,
            start,
            start_wall,
            own,
            cursor: 0,
            last_totals: BTreeMap::new(),
            last_own: BTreeMap::new(),
        };
        let probe = match source {
            ApiSource::Metrics => None,
            ApiSource::Auto | ApiSource::Journal => Some(
                get_text(
                    &state.client,
                    &format!("/mock/v1/requests?since={}", u64::MAX),
                )
                .await
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<JournalDoc>(&t).map_err(|e| e.to_string())),
            ),
        };
        let measure = match probe {
            Some(Ok(doc)) => {
                state.cursor = doc.last_seq;
                ApiMeasure::Journal
            }
            Some(Err(e)) if source == ApiSource::Journal => {
                return Err(format!(
                    "--api-requests-from journal: the API server has no mock journal at /mock/v1/requests ({e})"
                ));
            }
            _ => match get_text(&state.client, "/metrics").await {
                Ok(text) => {
                    if let Some(total) = flow_schema_total(&text, PROVIDER_FLOW_SCHEMA) {
                        state.last_totals.insert("all".to_owned(), total);
                        ApiMeasure::FlowSchema
                    } else {
                        state.last_totals = request_totals(&text, GROUP);
                        state.last_own = state.own.snapshot();
                        ApiMeasure::Metrics
                    }
                }
                Err(e) if source == ApiSource::Metrics => {
                    return Err(format!(
                        "--api-requests-from metrics: cannot read the API server's /metrics ({e})"
                    ));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the API server's /metrics: API requests are not measured");
                    ApiMeasure::None
                }
            },
        };
        let collected: Arc<Mutex<Collected>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let task = (measure != ApiMeasure::None).then(|| {
            let (collected, stop) = (Arc::clone(&collected), Arc::clone(&stop));
            tokio::spawn(async move {
                loop {
                    let stopping = stop.load(Ordering::Acquire);
                    state.poll(measure, &collected).await;
                    if stopping {
                        return;
                    }
                    tokio::time::sleep(SCRAPE_INTERVAL).await;
                    if stop.load(Ordering::Acquire) {
                        // One last read after the stop, so the tail is in.
                        state.poll(measure, &collected).await;
                        return;
                    }
                }
            })
        });
        Ok(ApiPoller {
            measure,
            collected,
            stop,
            task,
        })
    }

    /// What the poller reads.
    #[must_use]
    pub fn measure(&self) -> ApiMeasure {
        self.measure
    }

    /// Reads one last time and stops; returns the requests, sorted by time, and notes.
    pub async fn finish(&mut self) -> (Vec<ApiRequest>, Vec<String>) {
        self.stop.store(true, Ordering::Release);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        let mut c = self.collected.lock().unwrap_or_else(|e| e.into_inner());
        let mut requests = std::mem::take(&mut c.requests);
        requests.sort_by_key(|r| r.at_us);
        let mut notes = Vec::new();
        if c.missed > 0 {
            notes.push(format!(
                "{} API requests left the server's journal before they were read",
                c.missed
            ));
        }
        if c.errors > 0 {
            notes.push(format!(
                "{} reads of the API server's {} failed (last: {})",
                c.errors,
                if self.measure == ApiMeasure::Journal {
                    "journal"
                } else {
                    "metrics"
                },
                c.last_error.as_deref().unwrap_or("?")
            ));
        }
        (requests, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_follow_the_api_servers_names() {
        let g = "/apis/mockcloud.example.org/v1alpha1";
        let get = http::Method::GET;
        assert_eq!(
            verb_of(&get, &format!("{g}/namespaces/a/buckets"), None),
            "list"
        );
        assert_eq!(
            verb_of(&get, &format!("{g}/namespaces/a/buckets/b"), None),
            "get"
        );
        assert_eq!(
            verb_of(
                &get,
                &format!("{g}/namespaces/a/buckets"),
                Some("watch=true&resourceVersion=1")
            ),
            "watch"
        );
        assert_eq!(
            verb_of(&get, &format!("{g}/providerconfigs/x"), None),
            "get"
        );
        assert_eq!(
            verb_of(
                &http::Method::PATCH,
                &format!("{g}/namespaces/a/buckets/b/status"),
                None
            ),
            "patch"
        );
        assert_eq!(
            verb_of(
                &http::Method::POST,
                &format!("{g}/namespaces/a/buckets"),
                None
            ),
            "create"
        );
        assert_eq!(
            verb_of(
                &http::Method::DELETE,
                &format!("{g}/namespaces/a/buckets/b"),
                None
            ),
            "delete"
        );
    }

    #[test]
    fn the_flow_schema_counter_is_found_by_its_label() {
        let text = "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"} 41\n\
apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"service-accounts\",priority_level=\"workload-low\"} 7\n";
        assert_eq!(flow_schema_total(text, PROVIDER_FLOW_SCHEMA), Some(41));
        assert_eq!(flow_schema_total(text, "absent"), None);
    }

    #[test]
    fn request_totals_sum_the_groups_lines_by_verb() {
        let text = "# HELP apiserver_request_total x\n\
apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"mockcloud.example.org\",resource=\"buckets\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1alpha1\"} 3\n\
apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"mockcloud.example.org\",resource=\"buckets\",scope=\"resource\",subresource=\"status\",verb=\"PATCH\",version=\"v1alpha1\"} 5\n\
apiserver_request_total{code=\"409\",component=\"apiserver\",dry_run=\"\",group=\"mockcloud.example.org\",resource=\"buckets\",scope=\"resource\",subresource=\"\",verb=\"APPLY\",version=\"v1alpha1\"} 2\n\
apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"v1\"} 99\n";
        let totals = request_totals(text, GROUP);
        assert_eq!(totals.get("list"), Some(&3));
        assert_eq!(totals.get("patch"), Some(&7));
        assert_eq!(totals.len(), 2);
    }
}
