//! API requests from an API server's `/metrics`, scraped every second, each scrape's
//! increase dated at the scrape.
//!
//! # Why the busiest second is not the journal's, and what the check judges instead
//! A counter says how many requests the server had answered at each scrape, not when
//! each arrived: a request is known only to lie between two scrapes, and is dated at the
//! later one. No scrape interval makes the busiest second equal by design (requests at
//! 0.1 s and at 1.9 s are one second apart and two in no window of one second; scraped
//! at 1 s and 2 s they are dated one second apart, in one), and kube-apiserver exposes
//! no per-second series to read instead. What a scrape does tell is a span for each
//! request it counts: the server answered it after the scrape before began, so it was
//! sent no earlier than that less the longest request (from
//! `apiserver_request_duration_seconds`, [`RequestTotals::longest_request`]), and no
//! later than the scrape's end ([`ApiRequest::sent_from_us`](crate::result::ApiRequest::sent_from_us)
//! and `at_us`). The `apiRequests` check judges the band those spans allow around the
//! busiest window (`result::evaluate`'s `judged_by_dates`).
//!
//! - [`RequestTotals`]: `apiserver_request_total` of every group and resource (a watch
//!   counted when it starts: the counter counts it when it ends, and
//!   `apiserver_longrunning_requests` while it is open), minus the harness's own requests,
//!   which it counts as it sends them. The counter has no client label, so every other
//!   client's requests count as the provider's: the count may include others'
//!   ([`ApiCount::MayIncludeOthers`](crate::result::ApiCount::MayIncludeOthers)).
//! - [`FlowSchema`]: with the FlowSchema
//!   [`PROVIDER_FLOW_SCHEMA`](super::report::PROVIDER_FLOW_SCHEMA) installed for the
//!   provider's ServiceAccount, `apiserver_flowcontrol_dispatched_requests_total` and
//!   `apiserver_flowcontrol_rejected_requests_total` for it count every request of the
//!   provider and no other's; their verbs and resources come from [`RequestTotals`].
//!
//! By concept: [`series`] reads one scrape, [`scraper`] reads the replicas and takes a
//! counter's growth, [`request_totals`] and [`flow_schema`] are the two sources.

pub mod flow_schema;
pub mod request_totals;
pub mod scraper;
pub mod series;

pub use flow_schema::FlowSchema;
pub use request_totals::RequestTotals;
pub use scraper::{Growth, Scraper, Scrapes, scrape};
pub use series::{duration_buckets, flow_schema_total, request_counts, throttling};

#[cfg(test)]
mod tests;
