//! Reading `/metrics` of the API server's replicas, and how a counter's growth between two
//! reads is taken ([`Growth`]).

use std::sync::Arc;

use crate::run::error::ApiReadError;
use crate::run::prometheus::counter_increase;
use crate::run::replicas::Replicas;

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
    pub(super) targets: Vec<(Arc<str>, kube::Client)>,
    pub(super) growth: Growth,
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
    get_text(client, "/metrics").await
}

/// The text the API server answers a GET of `path` with.
///
/// # Errors
/// It cannot be read.
pub async fn get_text(client: &kube::Client, path: &str) -> Result<String, ApiReadError> {
    let request = http::Request::get(path)
        .body(Vec::new())
        .map_err(|e| ApiReadError::Request(kube::Error::HttpError(e)))?;
    client
        .request_text(request)
        .await
        .map_err(ApiReadError::Request)
}
