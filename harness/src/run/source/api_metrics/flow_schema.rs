//! The FlowSchema source: every request of the provider's ServiceAccount, from the counters
//! of its FlowSchema, given verbs and resources by [`RequestTotals`].

use std::collections::BTreeMap;
use std::sync::Arc;

use super::request_totals::RequestTotals;
use super::scraper::{Scraper, Scrapes};
use super::series::{flow_schema_total, throttling};
use crate::result::{ApiCount, ApiRequest, ServerThrottling};
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::own::OwnRequests;
use crate::run::source::report::PROVIDER_FLOW_SCHEMA;

/// Every request of the provider's ServiceAccount, from its FlowSchema's counters, each
/// given a verb and resource from [`RequestTotals`]' count of the same interval.
pub struct FlowSchema {
    clock: RunClock,
    /// Each replica's count as last seen (see [`Growth`](super::scraper::Growth)).
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
        let started = self.clock.now().0;
        let scrapes = self.totals.scraper.scrape().await?;
        let at_us = self.clock.now().0;
        let requests = self.absorb(&scrapes, at_us);
        self.totals.read_from_us = started;
        Ok(requests)
    }

    /// The baseline scrape began at `at_us`: see [`RequestTotals::first_read_from`].
    pub fn first_read_from(&mut self, at_us: u64) {
        self.totals.first_read_from(at_us);
    }

    /// The provider's requests that `scrapes`, made at `at_us`, add, summed over the
    /// replicas.
    pub fn absorb(&mut self, scrapes: &Scrapes, at_us: u64) -> Vec<ApiRequest> {
        for r in self.totals.absorb(scrapes, at_us) {
            *self.pool.entry((r.verb, r.resource)).or_default() += 1;
        }
        let (growth, from) = (self.totals.scraper.growth, self.totals.read_from_us);
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
                    sent_from_us: Some(from),
                }
            })
            .collect()
    }

    /// The longest request the server answered since the first scrape: see
    /// [`RequestTotals::longest_request`].
    #[must_use]
    pub fn longest_request(&self) -> Option<f64> {
        self.totals.longest_request()
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
