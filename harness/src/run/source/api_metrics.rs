//! API requests from an API server's `/metrics`, scraped every second, each scrape's
//! increase dated at the scrape (so a window's count is exact to within one scrape
//! interval).
//!
//! # Why the busiest second is not the journal's, and how far it can be
//! A counter says how many requests the server had answered at each scrape, not when
//! each arrived: a request is known only to lie between two scrapes, and is dated at the
//! later one. No scrape interval makes the busiest second equal by design (requests at
//! 0.1 s and at 1.9 s are one second apart and two in no window of one second; scraped
//! at 1 s and 2 s they are dated one second apart, in one window), and kube-apiserver
//! exposes no per-second series to read instead. What holds, for a longest gap `g`
//! between two scrapes: the busiest second of the dated requests differs from the
//! busiest second of their true times by at most the most true requests in any `g`. A
//! window of dated requests holds requests of that window and of the `g` before it; a
//! window of true times holds requests dated in it, and those after its last scrape,
//! within `g`. The server counts a request when it answers, so on a live server `g` is
//! the gap plus the longest request (a watch is counted from its start through
//! `apiserver_longrunning_requests`). The result's `api_read_gap_s` gives `g`.
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
use std::sync::Arc;

use super::intern::Interner;
use super::report::PROVIDER_FLOW_SCHEMA;
use crate::result::{ApiCount, ApiRequest, ServerThrottling};
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::own::{OwnRequests, RequestKey, resource_name};
use crate::run::prometheus::{counter_increase, has_label, label_value, samples};
use crate::run::replicas::Replicas;

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

/// One read of the API server's `/metrics`: each replica's text, by replica.
pub type Scrapes = Vec<(Arc<str>, String)>;

/// How a counter's growth between two reads of one target is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// The target is one server: a counter that went down was reset (the process
    /// restarted), so all of its new value is growth.
    Resets,
    /// The target is several replicas behind one address, each read answered by any of
    /// them: a counter that went down is another replica's, a change of series, not a
    /// reset; growth is what passes the highest value seen (so a count may miss what
    /// the replicas the reads did not land on served, never count one twice).
    HighWater,
}

impl Growth {
    /// The growth from `seen` (the last value, or for [`Growth::HighWater`] the highest)
    /// to `now`, and what to remember as seen.
    #[must_use]
    pub fn step(self, seen: u64, now: u64) -> (u64, u64) {
        match self {
            Growth::Resets => (counter_increase(seen, now), now),
            Growth::HighWater => (now.saturating_sub(seen), seen.max(now)),
        }
    }
}

/// Reads `/metrics` of every target of [`Replicas`].
#[derive(Clone)]
pub struct Scraper {
    targets: Vec<(Arc<str>, kube::Client)>,
    growth: Growth,
}

impl Scraper {
    /// Reads what `replicas` names.
    #[must_use]
    pub fn new(replicas: &Replicas) -> Scraper {
        Scraper {
            targets: replicas.targets.clone(),
            growth: if replicas.balanced {
                Growth::HighWater
            } else {
                Growth::Resets
            },
        }
    }

    /// Every target's `/metrics`.
    ///
    /// # Errors
    /// One cannot be read.
    pub async fn scrape(&self) -> Result<Scrapes, ApiReadError> {
        let mut out = Vec::with_capacity(self.targets.len());
        for (name, client) in &self.targets {
            out.push((Arc::clone(name), scrape(client).await?));
        }
        Ok(out)
    }
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
    scraper: Scraper,
    clock: RunClock,
    own: OwnRequests,
    /// Each replica's counts as last seen (see [`Growth`]).
    last: BTreeMap<Arc<str>, BTreeMap<RequestKey, u64>>,
    /// The server's counts' growth since the first scrape.
    server: BTreeMap<RequestKey, u64>,
    /// The harness's own counts at the first scrape.
    own_base: BTreeMap<RequestKey, u64>,
    /// The requests handed out so far, by key.
    emitted: BTreeMap<RequestKey, u64>,
    names: Interner,
}

impl RequestTotals {
    /// Takes the baseline from `first`, a scrape by `scraper` made now.
    #[must_use]
    pub fn start(scraper: Scraper, clock: RunClock, own: OwnRequests, first: &Scrapes) -> Self {
        RequestTotals {
            scraper,
            clock,
            last: first
                .iter()
                .map(|(replica, text)| (Arc::clone(replica), request_counts(text)))
                .collect(),
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
        let scrapes = self.scraper.scrape().await?;
        let at_us = self.clock.now().0;
        Ok(self.absorb(&scrapes, at_us))
    }

    /// The requests that `scrapes`, made at `at_us`, add: for each verb and resource, the
    /// server's growth since the first scrape, summed over its replicas (each replica's
    /// series its own, so one replica's lower count is not a reset of another's), less
    /// the harness's own requests since then, less what was handed out before. The
    /// harness counts a request as it sends it and the server once it has answered, so a
    /// count the harness is ahead on waits for the next scrape rather than going below
    /// zero.
    pub fn absorb(&mut self, scrapes: &Scrapes, at_us: u64) -> Vec<ApiRequest> {
        let growth = self.scraper.growth;
        for (replica, text) in scrapes {
            let counts = request_counts(text);
            let seen = self.last.entry(Arc::clone(replica)).or_default();
            if growth == Growth::Resets {
                // A series gone from the text was reset to nothing.
                seen.retain(|key, _| counts.contains_key(key));
            }
            for (key, &now) in &counts {
                let before = seen.get(key).copied().unwrap_or(0);
                let (grew, keep) = growth.step(before, now);
                seen.insert(key.clone(), keep);
                *self.server.entry(key.clone()).or_default() += grew;
            }
        }
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
    clock: RunClock,
    /// Each replica's count as last seen (see [`Growth`]).
    last: BTreeMap<Arc<str>, u64>,
    totals: RequestTotals,
    /// Verbs and resources [`RequestTotals`] counted that no request of the FlowSchema
    /// has taken yet.
    pool: BTreeMap<(String, Option<std::sync::Arc<str>>), u64>,
    /// The FlowSchema's throttling at the first scrape and at the last, by replica.
    throttled: BTreeMap<Arc<str>, (ServerThrottling, ServerThrottling)>,
}

impl FlowSchema {
    /// Takes the baseline from `first`, a scrape made now; `None` when the FlowSchema's
    /// series is not there.
    /// With several replicas the series must be on one at least: a replica's series
    /// appears when it first classifies one of the provider's requests, so a replica
    /// without it has counted none yet (zero).
    #[must_use]
    pub fn start(
        scraper: Scraper,
        clock: RunClock,
        own: OwnRequests,
        first: &Scrapes,
    ) -> Option<Self> {
        let totals: Vec<Option<u64>> = first
            .iter()
            .map(|(_, text)| flow_schema_total(text, PROVIDER_FLOW_SCHEMA))
            .collect();
        if totals.iter().all(Option::is_none) {
            return None;
        }
        let mut last = BTreeMap::new();
        let mut throttled = BTreeMap::new();
        for ((replica, text), total) in first.iter().zip(totals) {
            last.insert(Arc::clone(replica), total.unwrap_or(0));
            let base = throttling(text, PROVIDER_FLOW_SCHEMA).unwrap_or_default();
            throttled.insert(Arc::clone(replica), (base.clone(), base));
        }
        Some(FlowSchema {
            throttled,
            totals: RequestTotals::start(scraper, clock, own, first),
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
        let scrapes = self.totals.scraper.scrape().await?;
        let at_us = self.clock.now().0;
        Ok(self.absorb(&scrapes, at_us))
    }

    /// The provider's requests that `scrapes`, made at `at_us`, add, summed over the
    /// replicas.
    pub fn absorb(&mut self, scrapes: &Scrapes, at_us: u64) -> Vec<ApiRequest> {
        for r in self.totals.absorb(scrapes, at_us) {
            *self.pool.entry((r.verb, r.resource)).or_default() += 1;
        }
        let growth = self.totals.scraper.growth;
        let mut grew = 0;
        for (replica, text) in scrapes {
            let total = flow_schema_total(text, PROVIDER_FLOW_SCHEMA).unwrap_or(0);
            if let Some(now) = throttling(text, PROVIDER_FLOW_SCHEMA) {
                let entry = self
                    .throttled
                    .entry(Arc::clone(replica))
                    .or_insert_with(|| (ServerThrottling::default(), now.clone()));
                entry.1 = now;
            }
            let seen = self.last.entry(Arc::clone(replica)).or_default();
            let (g, keep) = growth.step(*seen, total);
            *seen = keep;
            grew += g;
        }
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
        let mut out = ServerThrottling::default();
        let mut queued_s = 0.0;
        for (first, last) in self.throttled.values() {
            if out.priority_level.is_empty() {
                out.priority_level.clone_from(&last.priority_level);
            }
            out.rejected += last.rejected.saturating_sub(first.rejected);
            out.queued += last.queued.saturating_sub(first.queued);
            queued_s += (last.queued_s - first.queued_s).max(0.0);
        }
        out.queued_s = (queued_s * 1e3).round() / 1e3;
        out
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

    /// A scraper of one server (its reads are made by the tests).
    fn scraper() -> Scraper {
        Scraper {
            targets: Vec::new(),
            growth: Growth::Resets,
        }
    }

    /// One server's scrape.
    fn one(text: &str) -> Scrapes {
        vec![(Arc::from("a"), text.to_owned())]
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

    #[test]
    fn a_request_the_server_counts_without_a_resource_is_named_alike_from_the_label_and_the_path() {
        use crate::run::own::request_key;
        let get = http::Method::GET;
        for (path, label) in [
            (
                "/openapi/v3/apis/mockcloud.example.org/v1alpha1",
                "openapi/v3/",
            ),
            ("/openapi/v3", "openapi/v3"),
            ("/livez", "/livez"),
        ] {
            let text = format!(
                "apiserver_request_total{{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"{label}\",verb=\"GET\",version=\"\"}} 1\n"
            );
            let counts = request_counts(&text);
            assert_eq!(
                counts.keys().collect::<Vec<_>>(),
                [&request_key(&get, path, "")],
                "{path}"
            );
        }
    }

    #[tokio::test]
    async fn the_harness_own_requests_are_taken_out_even_when_the_server_counts_them_later() {
        let own = OwnRequests::default();
        let first = series("GET", "", "secrets", "", 10);
        let mut totals =
            RequestTotals::start(scraper(), RunClock::start(), own.clone(), &one(&first));
        // The harness reads a Secret; the server has not counted it yet, the provider's
        // two reads it has.
        let get = http::Request::get("/api/v1/namespaces/a/secrets/s")
            .body(kube::client::Body::empty())
            .unwrap();
        own.count(&get);
        let got = totals.absorb(&one(&series("GET", "", "secrets", "", 12)), 1_000_000);
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 1)]));
        // Now it has, and one more of the provider's.
        let got = totals.absorb(&one(&series("GET", "", "secrets", "", 14)), 2_000_000);
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
            scraper(),
            RunClock::start(),
            OwnRequests::default(),
            &one(&text(1, 10, 8, 0.5)),
        )
        .unwrap();
        assert!(!fs.throttling().held_back());
        let _ = fs.absorb(&one(&text(4, 30, 20, 2.75)), 1);
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
        let mut fs = FlowSchema::start(
            scraper(),
            RunClock::start(),
            OwnRequests::default(),
            &one(&first),
        )
        .expect("the series is there");
        // Two dispatched; one finished so far.
        let mut got = fs.absorb(
            &one(&[flow(7), series("GET", "", "secrets", "", 6)].concat()),
            1,
        );
        assert_eq!(got.len(), 2);
        // The second finished, and another client's request too.
        got.extend(
            fs.absorb(
                &one(&[
                    flow(7),
                    series("GET", "", "secrets", "", 7),
                    series("LIST", "", "pods", "", 1),
                ]
                .concat()),
                2,
            ),
        );
        let (count, notes) = fs.settle(&mut got);
        assert_eq!(count, ApiCount::Exact);
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("counted 1 requests beyond"), "{notes:?}");
    }

    #[tokio::test]
    async fn replicas_are_summed_each_its_own_series_so_a_lower_count_on_another_is_no_reset() {
        let first = vec![
            (
                Arc::from("10.0.0.1:6443"),
                series("GET", "", "secrets", "", 10),
            ),
            (
                Arc::from("10.0.0.2:6443"),
                series("GET", "", "secrets", "", 3),
            ),
        ];
        let mut totals =
            RequestTotals::start(scraper(), RunClock::start(), OwnRequests::default(), &first);
        let got = totals.absorb(
            &vec![
                (
                    Arc::from("10.0.0.1:6443"),
                    series("GET", "", "secrets", "", 12),
                ),
                (
                    Arc::from("10.0.0.2:6443"),
                    series("GET", "", "secrets", "", 4),
                ),
            ],
            1,
        );
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 3)]));
        // The second replica restarted: its counter's new value is all growth.
        let got = totals.absorb(
            &vec![
                (
                    Arc::from("10.0.0.1:6443"),
                    series("GET", "", "secrets", "", 12),
                ),
                (
                    Arc::from("10.0.0.2:6443"),
                    series("GET", "", "secrets", "", 2),
                ),
            ],
            2,
        );
        assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
    }

    #[test]
    fn behind_one_address_a_lower_count_is_another_replica_and_only_a_new_high_is_growth() {
        // Reads through a load balancer land on replica A (10), B (3), A (12), B (6).
        let mut seen = 10;
        let mut grew = 0;
        for now in [3, 12, 6, 13] {
            let (g, keep) = Growth::HighWater.step(seen, now);
            grew += g;
            seen = keep;
        }
        // A's 3 more; B's counts are another series, not resets.
        assert_eq!((grew, seen), (3, 13));
        let (mut seen, mut as_resets) = (10, 0);
        for now in [3, 12, 6, 13] {
            as_resets += Growth::Resets.step(seen, now).0;
            seen = now;
        }
        assert_eq!(
            as_resets,
            3 + 9 + 6 + 7,
            "what taking them for resets counts"
        );
        assert_eq!(Growth::Resets.step(10, 3), (3, 3));
        assert_eq!(Growth::Resets.step(10, 12), (2, 12));
    }

    #[tokio::test]
    async fn the_flow_schema_is_summed_over_replicas_each_from_zero_until_its_series_appears() {
        let flow = |n: u64| {
            format!(
                "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"}} {n}\n"
            )
        };
        let a = |text: String| (Arc::<str>::from("a"), text);
        let b = |text: String| (Arc::<str>::from("b"), text);
        let start = |first: &Scrapes| {
            FlowSchema::start(scraper(), RunClock::start(), OwnRequests::default(), first)
        };
        assert!(start(&vec![a(String::new()), b(String::new())]).is_none());
        // B has classified none of the provider's requests yet: its series appears later.
        let mut fs = start(&vec![a(flow(5)), b(String::new())]).unwrap();
        assert_eq!(fs.absorb(&vec![a(flow(6)), b(flow(2))], 1).len(), 3);
        assert_eq!(fs.absorb(&vec![a(flow(6)), b(flow(4))], 2).len(), 2);
    }

    /// `RequestTotals` fed scrapes at `scrapes_us` of requests at `true_us` (sorted),
    /// the dates it gives them.
    fn dated(true_us: &[u64], scrapes_us: &[u64]) -> Vec<u64> {
        let text = |at: u64| {
            series(
                "GET",
                "",
                "secrets",
                "",
                true_us.iter().filter(|&&t| t <= at).count() as u64,
            )
        };
        let mut totals = RequestTotals::start(
            scraper(),
            RunClock::start(),
            OwnRequests::default(),
            &one(&text(0)),
        );
        let mut out: Vec<u64> = scrapes_us
            .iter()
            .flat_map(|&at| totals.absorb(&one(&text(at)), at))
            .map(|r| r.at_us)
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn a_scraped_counters_busiest_second_is_within_the_most_requests_of_its_longest_gap() {
        use crate::measure::windowed_max;
        const SECOND: u64 = 1_000_000;
        // Requests at 0.1 s and 1.9 s, three each: at most three in any second; scraped
        // at 1 s and 2 s, six in one. The bound is reached: three in a gap of 1 s.
        let true_us = [100_000; 3]
            .into_iter()
            .chain([1_900_000; 3])
            .collect::<Vec<_>>();
        let got = dated(&true_us, &[SECOND, 2 * SECOND]);
        assert_eq!(windowed_max(&true_us, SECOND).count, 3);
        assert_eq!(windowed_max(&got, SECOND).count, 6);
        assert_eq!(windowed_max(&true_us, SECOND).count + 3, 6);
        // Bursts and lulls over 20 s, scraped every 100 ms with up to 60 ms of jitter: the
        // busiest second is off by no more than the most requests in the longest gap.
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut true_us: Vec<u64> = (0..3_000)
            .map(|i| {
                let burst = (i % 5) * 4 * SECOND;
                burst + next(if i % 3 == 0 { 4 * SECOND } else { 800_000 }) + 1
            })
            .collect();
        true_us.sort_unstable();
        let mut scrapes = Vec::new();
        let mut at = 0;
        while at <= 21 * SECOND {
            at += 100_000 + next(60_000);
            scrapes.push(at);
        }
        let gap = scrapes.windows(2).map(|w| w[1] - w[0]).max().unwrap();
        let got = dated(&true_us, &scrapes);
        assert_eq!(got.len(), true_us.len(), "every request dated once");
        let (observed, truth) = (
            windowed_max(&got, SECOND).count,
            windowed_max(&true_us, SECOND).count,
        );
        let bound = windowed_max(&true_us, gap).count;
        assert!(
            observed.abs_diff(truth) <= bound,
            "busiest second {observed}, truly {truth}, bound {bound}"
        );
        assert!(
            bound < truth / 2,
            "the bound is not trivial: {bound} of {truth}"
        );
    }
}
