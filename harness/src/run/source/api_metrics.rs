//! API requests from an API server's `/metrics`, scraped every second, each scrape's
//! increase dated at the scrape (so a window's count is exact to within one scrape
//! interval).
//!
//! - [`RequestTotals`]: `apiserver_request_total` of every group and resource (a watch
//!   counted when it starts: the counter counts it when it ends, and
//!   `apiserver_longrunning_requests` while it is open), minus the harness's own requests,
//!   which it counts as it sends them. The counter has no client label, so every other
//!   client's requests count as the provider's: the count may include others'
//!   ([`ApiCount::MayIncludeOthers`]).
//! - [`FlowSchema`]: with the FlowSchema [`PROVIDER_FLOW_SCHEMA`] installed for the
//!   provider's ServiceAccount, `apiserver_flowcontrol_dispatched_requests_total` and
//!   `apiserver_flowcontrol_rejected_requests_total` for it count every request of the
//!   provider and no other's; their verbs and resources come from [`RequestTotals`].

use std::collections::BTreeMap;

use super::intern::Interner;
use super::report::PROVIDER_FLOW_SCHEMA;
use crate::result::{ApiCount, ApiRequest, ServerThrottling};
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::own::{OwnRequests, RequestKey, resource_name};
use crate::run::prometheus::{counter_increase, has_label, label_value, samples};

/// The [`RequestKey`] of an `apiserver_request_total` (or `apiserver_longrunning_requests`)
/// sample's labels: its verb, and its resource (`PLURAL[.GROUP][/SUBRESOURCE]`), or for a
/// request that names no resource (the server labels it with an empty `resource` and its
/// path in `subresource`) the path, as `discovery`.
fn key_of(labels: &str) -> RequestKey {
    let label = label_value(labels, "verb").unwrap_or("");
    let group = label_value(labels, "group").unwrap_or("");
    let resource = label_value(labels, "resource").unwrap_or("");
    let sub = label_value(labels, "subresource").unwrap_or("");
    if resource.is_empty() {
        return RequestKey {
            verb: mock_apiserver::Verb::Discovery.as_str(),
            resource: if sub.is_empty() { "/" } else { sub }.to_owned(),
        };
    }
    let verb = mock_apiserver::Verb::from_metric_label(label)
        .map_or("other", mock_apiserver::Verb::as_str);
    RequestKey {
        verb,
        resource: resource_name(group, resource, sub),
    }
}

/// The requests an API server counted, by verb and resource, summed across codes and
/// versions: `apiserver_request_total`, plus the open watches of
/// `apiserver_longrunning_requests`, so that a watch counts from its start (the total
/// counts it when it ends).
#[must_use]
pub fn request_counts(metrics: &str) -> BTreeMap<RequestKey, u64> {
    let mut counts = BTreeMap::new();
    let open = samples(metrics, "apiserver_longrunning_requests")
        .filter(|(labels, _)| matches!(label_value(labels, "verb"), Some("WATCH" | "WATCHLIST")));
    for (labels, value) in samples(metrics, "apiserver_request_total").chain(open) {
        *counts.entry(key_of(labels)).or_default() += value as u64;
    }
    counts
}

/// `apiserver_flowcontrol_dispatched_requests_total` plus
/// `apiserver_flowcontrol_rejected_requests_total` of one flow schema (every request it
/// classified, served or answered 429), if the series exist.
#[must_use]
pub fn flow_schema_total(metrics: &str, flow_schema: &str) -> Option<u64> {
    samples(metrics, "apiserver_flowcontrol_dispatched_requests_total")
        .chain(samples(
            metrics,
            "apiserver_flowcontrol_rejected_requests_total",
        ))
        .filter(|(labels, _)| has_label(labels, "flow_schema", flow_schema))
        .map(|(_, v)| v as u64)
        .reduce(|a, b| a + b)
}

/// The cumulative throttling of one flow schema in a scrape: its priority level, requests
/// rejected, requests that waited in a queue more than 5 ms (the wait histogram above its
/// `0.005` bucket: a request that was not queued still spends microseconds in the filter),
/// and the wait of all its requests, seconds. `None` when it has no series.
#[must_use]
pub fn throttling(metrics: &str, flow_schema: &str) -> Option<ServerThrottling> {
    let ours = |labels: &&str| has_label(labels, "flow_schema", flow_schema);
    let (labels, _) = samples(metrics, "apiserver_flowcontrol_dispatched_requests_total")
        .chain(samples(
            metrics,
            "apiserver_flowcontrol_rejected_requests_total",
        ))
        .find(|(l, _)| ours(l))?;
    let mut out = ServerThrottling {
        priority_level: label_value(labels, "priority_level")
            .unwrap_or_default()
            .to_owned(),
        ..ServerThrottling::default()
    };
    out.rejected = samples(metrics, "apiserver_flowcontrol_rejected_requests_total")
        .filter(|(l, _)| ours(l))
        .map(|(_, v)| v as u64)
        .sum();
    let count: u64 = samples(
        metrics,
        "apiserver_flowcontrol_request_wait_duration_seconds_count",
    )
    .filter(|(l, _)| ours(l))
    .map(|(_, v)| v as u64)
    .sum();
    let unqueued: u64 = samples(
        metrics,
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket",
    )
    .filter(|(l, _)| ours(l) && has_label(l, "le", "0.005"))
    .map(|(_, v)| v as u64)
    .sum();
    out.queued = count.saturating_sub(unqueued);
    out.queued_s = samples(
        metrics,
        "apiserver_flowcontrol_request_wait_duration_seconds_sum",
    )
    .filter(|(l, _)| ours(l))
    .map(|(_, v)| v)
    .sum();
    Some(out)
}

/// The API server's `/metrics` text.
///
/// # Errors
/// It cannot be read.
pub async fn scrape(client: &kube::Client) -> Result<String, ApiReadError> {
    let request = http::Request::get("/metrics")
        .body(Vec::new())
        .map_err(|e| ApiReadError::Request(kube::Error::HttpError(e)))?;
    client
        .request_text(request)
        .await
        .map_err(ApiReadError::Request)
}

/// Every request the API server counted minus the harness's own, from
/// `apiserver_request_total`, by verb and resource.
pub struct RequestTotals {
    client: kube::Client,
    clock: RunClock,
    own: OwnRequests,
    /// The last scrape's counts.
    last: BTreeMap<RequestKey, u64>,
    /// The server's counts' growth since the first scrape.
    server: BTreeMap<RequestKey, u64>,
    /// The harness's own counts at the first scrape.
    own_base: BTreeMap<RequestKey, u64>,
    /// The requests handed out so far, by key.
    emitted: BTreeMap<RequestKey, u64>,
    names: Interner,
}

impl RequestTotals {
    /// Takes the baseline from `first`, a scrape made now.
    #[must_use]
    pub fn start(client: kube::Client, clock: RunClock, own: OwnRequests, first: &str) -> Self {
        RequestTotals {
            client,
            clock,
            last: request_counts(first),
            own_base: own.snapshot(),
            own,
            server: BTreeMap::new(),
            emitted: BTreeMap::new(),
            names: Interner::default(),
        }
    }

    /// The requests since the last read, dated now.
    ///
    /// # Errors
    /// The metrics cannot be read.
    pub async fn read(&mut self) -> Result<Vec<ApiRequest>, ApiReadError> {
        let text = scrape(&self.client).await?;
        let at_us = self.clock.now().0;
        Ok(self.absorb(&text, at_us))
    }

    /// The requests that `text`, a scrape made at `at_us`, adds: for each verb and
    /// resource, the server's growth since the first scrape less the harness's own
    /// requests since then, less what was handed out before. The harness counts a request
    /// as it sends it and the server once it has answered, so a count the harness is ahead
    /// on waits for the next scrape rather than going below zero.
    pub fn absorb(&mut self, text: &str, at_us: u64) -> Vec<ApiRequest> {
        let counts = request_counts(text);
        for (key, &now) in &counts {
            let before = self.last.get(key).copied().unwrap_or(0);
            *self.server.entry(key.clone()).or_default() += counter_increase(before, now);
        }
        self.last = counts;
        let own = self.own.snapshot();
        let mut requests = Vec::new();
        for (key, &server) in &self.server {
            let own_now = own.get(key).copied().unwrap_or(0);
            let own_before = self.own_base.get(key).copied().unwrap_or(0);
            let emitted = self.emitted.entry(key.clone()).or_default();
            let due = server
                .saturating_sub(own_now.saturating_sub(own_before))
                .saturating_sub(*emitted);
            if due == 0 {
                continue;
            }
            *emitted += due;
            let resource = self.names.get(format_args!("{}", key.resource));
            requests.extend((0..due).map(|_| ApiRequest {
                at_us,
                verb: key.verb.to_owned(),
                resource: Some(resource.clone()),
                from_provider: true,
                object: None,
                main_write: false,
            }));
        }
        requests
    }
}

/// Every request of the provider's ServiceAccount, from its FlowSchema's counters, each
/// given a verb and resource from [`RequestTotals`]' count of the same interval.
pub struct FlowSchema {
    client: kube::Client,
    clock: RunClock,
    last: u64,
    totals: RequestTotals,
    /// Verbs and resources [`RequestTotals`] counted that no request of the FlowSchema
    /// has taken yet.
    pool: BTreeMap<(String, Option<std::sync::Arc<str>>), u64>,
    /// The FlowSchema's throttling at the first scrape and at the last.
    throttled: (ServerThrottling, ServerThrottling),
}

impl FlowSchema {
    /// Takes the baseline from `first`, a scrape made now; `None` when the FlowSchema's
    /// series is not there.
    #[must_use]
    pub fn start(
        client: kube::Client,
        clock: RunClock,
        own: OwnRequests,
        first: &str,
    ) -> Option<Self> {
        let last = flow_schema_total(first, PROVIDER_FLOW_SCHEMA)?;
        let base = throttling(first, PROVIDER_FLOW_SCHEMA).unwrap_or_default();
        Some(FlowSchema {
            throttled: (base.clone(), base),
            totals: RequestTotals::start(client.clone(), clock, own, first),
            client,
            clock,
            last,
            pool: BTreeMap::new(),
        })
    }

    /// The provider's requests since the last read, dated now.
    ///
    /// # Errors
    /// The metrics cannot be read.
    pub async fn read(&mut self) -> Result<Vec<ApiRequest>, ApiReadError> {
        let text = scrape(&self.client).await?;
        let at_us = self.clock.now().0;
        Ok(self.absorb(&text, at_us))
    }

    /// The provider's requests that `text`, a scrape made at `at_us`, adds.
    pub fn absorb(&mut self, text: &str, at_us: u64) -> Vec<ApiRequest> {
        for r in self.totals.absorb(text, at_us) {
            *self.pool.entry((r.verb, r.resource)).or_default() += 1;
        }
        let total = flow_schema_total(text, PROVIDER_FLOW_SCHEMA).unwrap_or(0);
        if let Some(now) = throttling(text, PROVIDER_FLOW_SCHEMA) {
            self.throttled.1 = now;
        }
        let grew = counter_increase(self.last, total);
        self.last = total;
        (0..grew)
            .map(|_| {
                let (verb, resource) = self.take().unwrap_or_else(|| ("unknown".to_owned(), None));
                ApiRequest {
                    at_us,
                    verb,
                    resource,
                    from_provider: true,
                    object: None,
                    main_write: false,
                }
            })
            .collect()
    }

    /// How the server held the provider back between the first scrape and the last.
    #[must_use]
    pub fn throttling(&self) -> ServerThrottling {
        let (first, last) = &self.throttled;
        ServerThrottling {
            priority_level: last.priority_level.clone(),
            rejected: last.rejected.saturating_sub(first.rejected),
            queued: last.queued.saturating_sub(first.queued),
            queued_s: ((last.queued_s - first.queued_s).max(0.0) * 1e3).round() / 1e3,
        }
    }

    /// A verb and resource from the pool.
    fn take(&mut self) -> Option<(String, Option<std::sync::Arc<str>>)> {
        let mut entry = self.pool.first_entry()?;
        *entry.get_mut() -= 1;
        let key = entry.key().clone();
        if *entry.get() == 0 {
            entry.remove();
        }
        Some(key)
    }

    /// At the end: gives the requests read before their verb and resource were counted
    /// the ones counted since, and says what is left on either side (the other clients'
    /// requests `apiserver_request_total` counted; the provider's requests that have no
    /// verb and resource).
    pub fn settle(&mut self, requests: &mut [ApiRequest]) -> (ApiCount, Vec<String>) {
        for r in requests.iter_mut().filter(|r| r.resource.is_none()) {
            let Some((verb, resource)) = self.take() else {
                break;
            };
            r.verb = verb;
            r.resource = resource;
        }
        let mut notes = Vec::new();
        let unknown = requests.iter().filter(|r| r.resource.is_none()).count();
        if unknown > 0 {
            notes.push(format!(
                "{unknown} of the provider's API requests (by its FlowSchema) have no verb and resource: apiserver_request_total counted fewer than the FlowSchema"
            ));
        }
        let others: u64 = self.pool.values().sum();
        if others > 0 {
            notes.push(format!(
                "apiserver_request_total counted {others} requests beyond the FlowSchema's (other clients'): the provider's verbs and resources may include some of theirs; its count does not"
            ));
        }
        (ApiCount::Exact, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> kube::Client {
        let service = tower::service_fn(|_: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, _>(std::io::Error::other("not used"))
        });
        kube::Client::new(service, "default")
    }

    fn series(verb: &str, group: &str, resource: &str, sub: &str, n: u64) -> String {
        format!(
            "apiserver_request_total{{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"{group}\",resource=\"{resource}\",scope=\"namespace\",subresource=\"{sub}\",verb=\"{verb}\",version=\"v1\"}} {n}\n"
        )
    }

    fn table(requests: &[ApiRequest]) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for r in requests {
            let key = format!("{} {}", r.verb, r.resource.as_deref().unwrap_or("?"));
            *out.entry(key).or_default() += 1;
        }
        out
    }

    #[test]
    fn the_flow_schema_counters_are_found_by_their_label() {
        let text = "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"} 41\n\
apiserver_flowcontrol_rejected_requests_total{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\",reason=\"queue-full\"} 2\n\
apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"service-accounts\",priority_level=\"workload-low\"} 7\n";
        assert_eq!(flow_schema_total(text, PROVIDER_FLOW_SCHEMA), Some(43));
        assert_eq!(flow_schema_total(text, "absent"), None);
    }

    #[test]
    fn request_counts_cover_every_group_and_count_watches_from_their_start() {
        let text = [
            series("LIST", "mockcloud.example.org", "buckets", "", 3),
            series("PATCH", "mockcloud.example.org", "buckets", "status", 5),
            series("APPLY", "mockcloud.example.org", "buckets", "status", 2),
            series("POST", "events.k8s.io", "events", "", 4),
            series("POST", "", "events", "", 1),
            series("GET", "", "secrets", "", 6),
            series("WATCH", "", "secrets", "", 1),
            series("GET", "", "", "/apis", 2),
            "apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"} 2\n".to_owned(),
        ]
        .concat();
        let counts: Vec<(String, u64)> = request_counts(&text)
            .into_iter()
            .map(|(k, n)| (format!("{} {}", k.verb, k.resource), n))
            .collect();
        let want = [
            ("create events", 1),
            ("create events.events.k8s.io", 4),
            ("discovery /apis", 2),
            ("get secrets", 6),
            ("list buckets.mockcloud.example.org", 3),
            ("patch buckets.mockcloud.example.org/status", 7),
            ("watch secrets", 3),
        ]
        .map(|(k, n)| (k.to_owned(), n));
        assert_eq!(counts, want);
    }

    #[tokio::test]
    async fn the_harness_own_requests_are_taken_out_even_when_the_server_counts_them_later() {
        let own = OwnRequests::default();
        let first = series("GET", "", "secrets", "", 10);
        let mut totals = RequestTotals::start(client(), RunClock::start(), own.clone(), &first);
        // The harness reads a Secret; the server has not counted it yet, the provider's
        // two reads it has.
        let get = http::Request::get("/api/v1/namespaces/a/secrets/s")
            .body(kube::client::Body::empty())
            .unwrap();
        own.count(&get);
        let got = totals.absorb(&series("GET", "", "secrets", "", 12), 1_000_000);
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 1)]));
        // Now it has, and one more of the provider's.
        let got = totals.absorb(&series("GET", "", "secrets", "", 14), 2_000_000);
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
        assert!(got.iter().all(|r| r.at_us == 2_000_000 && r.from_provider));
    }

    #[tokio::test]
    async fn the_servers_throttling_of_the_flow_schema_is_its_rejections_and_queued_requests() {
        let text = |rejected: u64, count: u64, zero: u64, sum: f64| {
            let l = "flow_schema=\"loadtest-provider\",priority_level=\"tiny\"";
            format!(
                "apiserver_flowcontrol_dispatched_requests_total{{{l}}} 10\n\
apiserver_flowcontrol_rejected_requests_total{{{l},reason=\"time-out\"}} {rejected}\n\
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute=\"true\",{l},le=\"0.005\"}} {zero}\n\
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute=\"true\",{l},le=\"1\"}} {count}\n\
apiserver_flowcontrol_request_wait_duration_seconds_sum{{execute=\"true\",{l}}} {sum}\n\
apiserver_flowcontrol_request_wait_duration_seconds_count{{execute=\"true\",{l}}} {count}\n\
apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"other\",priority_level=\"tiny\",reason=\"time-out\"}} 99\n"
            )
        };
        let mut fs = FlowSchema::start(
            client(),
            RunClock::start(),
            OwnRequests::default(),
            &text(1, 10, 8, 0.5),
        )
        .unwrap();
        assert!(!fs.throttling().held_back());
        let _ = fs.absorb(&text(4, 30, 20, 2.75), 1);
        let th = fs.throttling();
        assert_eq!(
            th,
            ServerThrottling {
                priority_level: "tiny".into(),
                rejected: 3,
                queued: 8,
                queued_s: 2.25
            }
        );
        assert!(th.held_back());
        assert_eq!(throttling("", PROVIDER_FLOW_SCHEMA), None);
    }

    #[tokio::test]
    async fn the_flow_schema_counts_and_request_totals_name_the_verbs() {
        let flow = |n: u64| {
            format!(
                "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"}} {n}\n"
            )
        };
        let first = [flow(5), series("GET", "", "secrets", "", 5)].concat();
        let mut fs = FlowSchema::start(client(), RunClock::start(), OwnRequests::default(), &first)
            .expect("the series is there");
        // Two dispatched; one finished so far.
        let mut got = fs.absorb(&[flow(7), series("GET", "", "secrets", "", 6)].concat(), 1);
        assert_eq!(got.len(), 2);
        // The second finished, and another client's request too.
        got.extend(
            fs.absorb(
                &[
                    flow(7),
                    series("GET", "", "secrets", "", 7),
                    series("LIST", "", "pods", "", 1),
                ]
                .concat(),
                2,
            ),
        );
        let (count, notes) = fs.settle(&mut got);
        assert_eq!(count, ApiCount::Exact);
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("counted 1 requests beyond"), "{notes:?}");
    }
}
