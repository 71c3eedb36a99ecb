//! Where a run's API-server requests are counted, chosen once at the start.
//!
//! - Embedded: mock-apiserver's journal in this process: every request, its time, verb and
//!   `User-Agent` (the harness's own requests carry
//!   [`HARNESS_USER_AGENT`](crate::run::own::HARNESS_USER_AGENT)).
//! - Cluster, when the server is a mock-apiserver: its journal over HTTP, read every
//!   second; as exact as embedded.
//! - Cluster, any other API server: its `/metrics` (see [`super::api_metrics`]).

use super::api_journal::{self, InProcess};
use super::api_metrics::{FlowSchema, RequestTotals, scrape};
use super::poll::{Poller, Reader};
use super::report::{ApiMeasure, ApiReport};
use crate::run::clock::RunClock;
use crate::run::error::RunError;
use crate::run::own::OwnRequests;

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

/// The API-request source of a run.
pub enum ApiRequests {
    /// An in-process mock-apiserver's journal.
    InProcess(InProcess),
    /// A source read over HTTP in the background.
    Polled(Poller),
    /// Nothing could be read.
    None,
}

impl ApiRequests {
    /// Finds what the cluster's server offers (a mock journal, else `/metrics`, as `choice`
    /// allows) and starts reading it. Requests before this call are not counted.
    ///
    /// # Errors
    /// The source `choice` names cannot be read.
    pub async fn probe(
        client: &kube::Client,
        clock: RunClock,
        own: OwnRequests,
        choice: ApiSource,
    ) -> Result<ApiRequests, RunError> {
        if choice != ApiSource::Metrics {
            match api_journal::Http::probe(client.clone(), clock).await {
                Ok(journal) => return Ok(Self::polled(Reader::Journal(journal))),
                Err(e) if choice == ApiSource::Journal => return Err(RunError::NoApiJournal(e)),
                Err(_) => {}
            }
        }
        match scrape(client).await {
            Ok(text) => Ok(Self::polled(
                match FlowSchema::start(client.clone(), clock, &text) {
                    Some(f) => Reader::FlowSchema(f),
                    None => {
                        Reader::Metrics(RequestTotals::start(client.clone(), clock, own, &text))
                    }
                },
            )),
            Err(e) if choice == ApiSource::Metrics => Err(RunError::NoApiMetrics(e)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the API server's /metrics: API requests are not measured");
                Ok(ApiRequests::None)
            }
        }
    }

    fn polled(reader: Reader) -> ApiRequests {
        ApiRequests::Polled(Poller::start(reader))
    }

    /// How the requests are measured.
    #[must_use]
    pub fn measure(&self) -> ApiMeasure {
        match self {
            ApiRequests::InProcess(_) => ApiMeasure::Journal,
            ApiRequests::Polled(p) => p.measure(),
            ApiRequests::None => ApiMeasure::None,
        }
    }

    /// Stops reading and hands back every request.
    pub async fn finish(self) -> ApiReport {
        match self {
            ApiRequests::InProcess(j) => j.finish(),
            ApiRequests::Polled(p) => p.finish().await,
            ApiRequests::None => ApiReport {
                requests: Vec::new(),
                measure: ApiMeasure::None,
                dropped: 0,
                notes: Vec::new(),
            },
        }
    }
}
