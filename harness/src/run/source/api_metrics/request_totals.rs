//! The request-totals source: every request the API server counted (`apiserver_request_total`)
//! minus the harness's own, each dated at the scrape that counted it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::scraper::{Growth, Scraper, Scrapes};
use super::series::{duration_buckets, request_counts};
use crate::result::ApiRequest;
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::own::{OwnRequests, RequestKey};
use crate::run::source::intern::Interner;

/// Every request the API server counted minus the harness's own, from
/// `apiserver_request_total`, by verb and resource.
pub struct RequestTotals {
    pub(super) scraper: Scraper,
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
    /// Each replica's `apiserver_request_duration_seconds` buckets as last seen.
    durations_last: BTreeMap<Arc<str>, BTreeMap<String, u64>>,
    /// Their growth since the first scrape, summed by bucket (`le`).
    durations: BTreeMap<String, u64>,
    /// When the last read that succeeded began, on the run's clock (at first, the
    /// baseline scrape; 0 until [`RequestTotals::first_read_from`] says when that was).
    pub(super) read_from_us: u64,
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
            durations_last: first
                .iter()
                .map(|(replica, text)| (Arc::clone(replica), duration_buckets(text)))
                .collect(),
            durations: BTreeMap::new(),
            read_from_us: 0,
        }
    }

    /// The baseline scrape (`first` of [`RequestTotals::start`]) began at `at_us` on the
    /// run's clock: the requests the next read counts were answered after that.
    pub fn first_read_from(&mut self, at_us: u64) {
        self.read_from_us = at_us;
    }

    /// The longest request the server answered since the first scrape, seconds, as the
    /// upper bound of the smallest `apiserver_request_duration_seconds` bucket that holds
    /// every one (watches and other long-running requests left out: they are counted as
    /// they start); `None` when one took longer than the last bucket. Every client's
    /// requests, the harness's too: an upper bound on the provider's.
    #[must_use]
    pub fn longest_request(&self) -> Option<f64> {
        let all = self.durations.get("+Inf").copied().unwrap_or(0);
        if all == 0 {
            return Some(0.0);
        }
        self.durations
            .iter()
            .filter(|(_, n)| **n >= all)
            .filter_map(|(le, _)| le.parse::<f64>().ok())
            .filter(|le| le.is_finite())
            .min_by(f64::total_cmp)
    }

    /// The requests since the last read, dated now.
    ///
    /// # Errors
    /// The metrics cannot be read.
    pub async fn read(&mut self) -> Result<Vec<ApiRequest>, ApiReadError> {
        let started = self.clock.now().0;
        let scrapes = self.scraper.scrape().await?;
        let at_us = self.clock.now().0;
        let requests = self.absorb(&scrapes, at_us);
        self.read_from_us = started;
        Ok(requests)
    }

    /// The requests that `scrapes`, made at `at_us`, add (each dated at `at_us`, and
    /// answered after the last read began): for each verb and resource, the
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
            let seen = self.durations_last.entry(Arc::clone(replica)).or_default();
            for (series, now) in duration_buckets(text) {
                let before = seen.get(&series).copied().unwrap_or(0);
                let (grew, keep) = growth.step(before, now);
                if grew > 0
                    && let Some(le) = crate::run::prometheus::label_value(&series, "le")
                {
                    *self.durations.entry(le.to_owned()).or_default() += grew;
                }
                seen.insert(series, keep);
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
                sent_from_us: Some(self.read_from_us),
            }));
        }
        requests
    }
}
