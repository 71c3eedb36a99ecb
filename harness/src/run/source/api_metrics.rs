//! API requests from an API server's `/metrics`, scraped every second, each scrape's
//! increase dated at the scrape (so a window's count is exact to within one scrape
//! interval).
//!
//! - With the FlowSchema [`PROVIDER_FLOW_SCHEMA`] (ci/manifests) installed,
//!   `apiserver_flowcontrol_dispatched_requests_total` for it counts every request of the
//!   provider's ServiceAccount.
//! - Without it, `apiserver_request_total` has no client label, so the provider's requests
//!   are the requests to the provider's API group minus the harness's own (which the
//!   harness counts as it sends them), and the provider's Events and Secret reads are not
//!   in it.

use std::collections::BTreeMap;

use super::report::PROVIDER_FLOW_SCHEMA;
use crate::result::ApiRequest;
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::own::OwnRequests;
use crate::run::prometheus::{counter_increase, has_label, label_value, samples};

/// `apiserver_request_total` for `group`, summed by verb (lowercase Kubernetes verbs).
#[must_use]
pub fn request_totals(metrics: &str, group: &str) -> BTreeMap<String, u64> {
    let mut totals = BTreeMap::new();
    for (labels, value) in samples(metrics, "apiserver_request_total") {
        if !has_label(labels, "group", group) {
            continue;
        }
        let label = label_value(labels, "verb").unwrap_or("");
        let verb = mock_apiserver::Verb::from_metric_label(label)
            .map_or_else(|| label.to_ascii_lowercase(), |v| v.as_str().to_owned());
        *totals.entry(verb).or_default() += value as u64;
    }
    totals
}

/// `apiserver_flowcontrol_dispatched_requests_total` of one flow schema, if the series
/// exists.
#[must_use]
pub fn flow_schema_total(metrics: &str, flow_schema: &str) -> Option<u64> {
    samples(metrics, "apiserver_flowcontrol_dispatched_requests_total")
        .filter(|(labels, _)| has_label(labels, "flow_schema", flow_schema))
        .map(|(_, v)| v as u64)
        .reduce(|a, b| a + b)
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

/// The provider's requests to its API group from `apiserver_request_total`.
pub struct RequestTotals {
    client: kube::Client,
    clock: RunClock,
    own: OwnRequests,
    last: BTreeMap<String, u64>,
    last_own: BTreeMap<&'static str, u64>,
}

impl RequestTotals {
    /// Takes the baseline from `first`, a scrape made now.
    #[must_use]
    pub fn start(client: kube::Client, clock: RunClock, own: OwnRequests, first: &str) -> Self {
        RequestTotals {
            client,
            clock,
            last: request_totals(first, provider::crd::GROUP),
            last_own: own.snapshot(),
            own,
        }
    }

    /// The provider's requests since the last read, dated now.
    ///
    /// # Errors
    /// The metrics cannot be read.
    pub async fn read(&mut self) -> Result<Vec<ApiRequest>, ApiReadError> {
        let text = scrape(&self.client).await?;
        let at_us = self.clock.now().0;
        let totals = request_totals(&text, provider::crd::GROUP);
        let own = self.own.snapshot();
        let mut requests = Vec::new();
        for (verb, &total) in &totals {
            let before = self.last.get(verb).copied().unwrap_or(0);
            let grew = counter_increase(before, total);
            let own_verb: &str = verb;
            let own_now = own.get(own_verb).copied().unwrap_or(0);
            let own_before = self.last_own.get(own_verb).copied().unwrap_or(0);
            let provider = grew.saturating_sub(own_now - own_before);
            requests.extend((0..provider).map(|_| ApiRequest {
                at_us,
                verb: verb.clone(),
                from_provider: true,
                object: None,
                main_write: false,
            }));
        }
        self.last = totals;
        self.last_own = own;
        Ok(requests)
    }
}

/// Every request of the provider's ServiceAccount, from its FlowSchema's counter.
pub struct FlowSchema {
    client: kube::Client,
    clock: RunClock,
    last: u64,
}

impl FlowSchema {
    /// Takes the baseline from `first`, a scrape made now; `None` when the FlowSchema's
    /// series is not there.
    #[must_use]
    pub fn start(client: kube::Client, clock: RunClock, first: &str) -> Option<Self> {
        let last = flow_schema_total(first, PROVIDER_FLOW_SCHEMA)?;
        Some(FlowSchema {
            client,
            clock,
            last,
        })
    }

    /// The provider's requests since the last read, dated now.
    ///
    /// # Errors
    /// The metrics cannot be read.
    pub async fn read(&mut self) -> Result<Vec<ApiRequest>, ApiReadError> {
        let text = scrape(&self.client).await?;
        let at_us = self.clock.now().0;
        let total = flow_schema_total(&text, PROVIDER_FLOW_SCHEMA).unwrap_or(0);
        let grew = counter_increase(self.last, total);
        self.last = total;
        Ok((0..grew)
            .map(|_| ApiRequest {
                at_us,
                verb: "all".to_owned(),
                from_provider: true,
                object: None,
                main_write: false,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let totals = request_totals(text, provider::crd::GROUP);
        assert_eq!(totals.get("list"), Some(&3));
        assert_eq!(totals.get("patch"), Some(&7));
        assert_eq!(totals.len(), 2);
    }
}
