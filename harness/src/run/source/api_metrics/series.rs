//! What one scrape of `/metrics` says: the requests an API server counted by verb and
//! resource, and what its priority and fairness did to one flow schema.

use std::collections::BTreeMap;

use crate::result::ServerThrottling;
use crate::run::own::{RequestKey, resource_name};
use crate::run::prometheus::{has_label, label_value, samples};

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

/// The `apiserver_request_duration_seconds` buckets of a scrape, by series (the labels,
/// `le` among them), leaving out the long-running requests (`WATCH`, `WATCHLIST`,
/// `CONNECT`), which a run counts as they start.
#[must_use]
pub fn duration_buckets(metrics: &str) -> BTreeMap<String, u64> {
    samples(metrics, "apiserver_request_duration_seconds_bucket")
        .filter(|(labels, _)| {
            !matches!(
                label_value(labels, "verb"),
                Some("WATCH" | "WATCHLIST" | "CONNECT")
            )
        })
        .map(|(labels, value)| (labels.to_owned(), value as u64))
        .collect()
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
