//! Where a run's API-server requests are counted, chosen once at the start.
//!
//! - Embedded: mock-apiserver's journal in this process: every request, its time, verb and
//!   `User-Agent` (the harness's own requests carry
//!   [`harness_user_agent`](crate::run::own::harness_user_agent), the provider's are told
//!   apart by [`ProviderAgent`]).
//! - Cluster, when the server is a mock-apiserver: its journal over HTTP, read every
//!   second; as exact as embedded.
//! - Cluster, any other API server: its `/metrics` (see [`super::api_metrics`]): the
//!   FlowSchema's series when they are there, else `apiserver_request_total`.
//!
//! In a cluster every replica of the API server ([`Replicas`]) is read and summed, the
//! journal and `/metrics` alike.

use std::time::Duration;

use super::api_journal::{self, InProcess};
use super::api_metrics::{FlowSchema, RequestTotals, Scraper};
use super::poll::{Poller, Reader};
use super::report::{ApiMeasure, ApiReport};
use crate::result::ApiCount;
use crate::run::clock::RunClock;
use crate::run::error::ApiReadError;
use crate::run::error::RunError;
use crate::run::own::{OwnRequests, ProviderAgent};
use crate::run::replicas::Replicas;

/// Where a cluster run should read API requests from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ApiSource {
    /// The mock journal if the server has one, else the FlowSchema's series if they are
    /// there, else `apiserver_request_total`. Every source reads each replica the
    /// `kubernetes` EndpointSlices list, when it reaches them all, and sums them.
    #[default]
    Auto,
    /// mock-apiserver's journal (`/mock/v1/requests`): every request, exact times, the
    /// provider's told apart by its User-Agent; the run stops if there is none.
    Journal,
    /// `apiserver_flowcontrol_*` of the FlowSchema loadtest-provider in the server's
    /// `/metrics`: every request of the provider's ServiceAccount; the run stops if the
    /// series are not there.
    #[value(name = "flowschema")]
    FlowSchema,
    /// `apiserver_request_total` in the server's `/metrics`: every client's requests but
    /// the harness's; the run stops if it cannot be read.
    Metrics,
}

/// Each replica's journal; none when several replicas are reachable only through one
/// address (whose journal would be whichever replica's answered).
async fn journals(
    replicas: &Replicas,
    clock: RunClock,
    agent: &ProviderAgent,
) -> Result<Vec<api_journal::Http>, ApiReadError> {
    if replicas.balanced {
        return Err(ApiReadError::ReplicasUnreachable(replicas.listed.len()));
    }
    let mut out = Vec::new();
    for (_, client) in &replicas.targets {
        out.push(api_journal::Http::probe(client.clone(), clock, agent.clone()).await?);
    }
    Ok(out)
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
    /// allows) on each of `replicas`, and starts reading it. Requests before this call are
    /// not counted.
    ///
    /// # Errors
    /// The source `choice` names cannot be read.
    pub async fn probe(
        replicas: &Replicas,
        clock: RunClock,
        (own, agent): (OwnRequests, ProviderAgent),
        (choice, interval): (ApiSource, Duration),
    ) -> Result<ApiRequests, RunError> {
        let seen = (replicas.note(), replicas.partial());
        let baseline = tokio::time::Instant::now();
        if !matches!(choice, ApiSource::Metrics | ApiSource::FlowSchema) {
            match journals(replicas, clock, &agent).await {
                Ok(journals) => {
                    return Ok(Self::polled(
                        Reader::Journal(journals),
                        interval,
                        seen,
                        baseline,
                    ));
                }
                Err(e) if choice == ApiSource::Journal => return Err(RunError::NoApiJournal(e)),
                Err(_) => {}
            }
        }
        let scraper = Scraper::new(replicas);
        let baseline_us = clock.now().0;
        match scraper.scrape().await {
            Ok(first) => {
                let flow_schema = if choice == ApiSource::Metrics {
                    None
                } else {
                    FlowSchema::start(scraper.clone(), clock, own.clone(), &first)
                };
                let flow_schema = flow_schema.map(|mut f| {
                    f.first_read_from(baseline_us);
                    f
                });
                match flow_schema {
                    Some(f) => Ok(Self::polled(
                        Reader::FlowSchema(Box::new(f)),
                        interval,
                        seen,
                        baseline,
                    )),
                    None if choice == ApiSource::FlowSchema => Err(RunError::NoFlowSchema),
                    None => Ok(Self::polled(
                        Reader::Metrics(Box::new({
                            let mut totals = RequestTotals::start(scraper, clock, own, &first);
                            totals.first_read_from(baseline_us);
                            totals
                        })),
                        interval,
                        seen,
                        baseline,
                    )),
                }
            }
            Err(e) if matches!(choice, ApiSource::Metrics | ApiSource::FlowSchema) => {
                Err(RunError::NoApiMetrics(e))
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the API server's /metrics: API requests are not measured");
                Ok(ApiRequests::None)
            }
        }
    }

    fn polled(
        reader: Reader,
        interval: Duration,
        replicas: (Option<String>, bool),
        baseline: tokio::time::Instant,
    ) -> ApiRequests {
        ApiRequests::Polled(Poller::start(reader, interval, replicas, baseline))
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
                count: ApiCount::Unknown,
                interval: Duration::ZERO,
                max_gap: None,
                longest_request: None,
                throttling: None,
                dropped: 0,
                notes: Vec::new(),
            },
        }
    }
}
