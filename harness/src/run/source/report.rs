//! What the measurement sources hand back when they finish, and how API requests were
//! measured. A leaf of `source/`.

use std::time::Duration;

use crate::result::{ApiCount, ApiRequest, CloudCall, ProviderMetrics, ServerThrottling};

/// How often a source that polls another process reads it (the API server's, unless
/// `--api-scrape-interval` says otherwise).
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(1);

/// The FlowSchema that sets the provider's requests apart in the API server's metrics.
pub const PROVIDER_FLOW_SCHEMA: &str = "loadtest-provider";

/// How API requests were measured, for the result's notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiMeasure {
    /// mock-apiserver's journal (in-process or over HTTP): exact.
    Journal,
    /// `apiserver_request_total` scraped every [`SCRAPE_INTERVAL`].
    Metrics,
    /// `apiserver_flowcontrol_dispatched_requests_total` of [`PROVIDER_FLOW_SCHEMA`],
    /// scraped every [`SCRAPE_INTERVAL`].
    FlowSchema,
    /// Neither could be read.
    None,
}

impl ApiMeasure {
    /// A sentence for the result, for a source read every `interval`.
    #[must_use]
    pub fn describe(self, interval: Duration) -> String {
        let every = format!("{:?}", interval);
        let text = match self {
            ApiMeasure::Journal => {
                "mock-apiserver's request journal: every request, exact times, the provider's told apart by its User-Agent"
            }
            ApiMeasure::Metrics => {
                "apiserver_request_total (every group, watches from apiserver_longrunning_requests as they start) minus the harness's own requests, scraped every INTERVAL (each request dated at the scrape that counted it, a window's count judged by the band that allows); it has no client label, so every other client's requests count as the provider's"
            }
            ApiMeasure::FlowSchema => {
                "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"loadtest-provider\"}: every request of the provider's ServiceAccount, scraped every INTERVAL (each request dated at the scrape that counted it, a window's count judged by the band that allows); verbs and resources from apiserver_request_total minus the harness's own requests"
            }
            ApiMeasure::None => {
                "not measured: the API server offers neither a mock journal nor /metrics to this kubeconfig"
            }
        };
        text.replace("INTERVAL", &every)
    }
}

/// The API requests of a run.
#[derive(Clone, Debug)]
pub struct ApiReport {
    /// Every request, sorted by time.
    pub requests: Vec<ApiRequest>,
    /// How they were measured.
    pub measure: ApiMeasure,
    /// Whether they are the provider's, all of them and only them.
    pub count: ApiCount,
    /// How often a source read over HTTP was read.
    pub interval: Duration,
    /// For a source that dates requests at its reads (metrics): the longest time from the
    /// start of one read to the end of the next.
    pub max_gap: Option<Duration>,
    /// For a source that dates requests at its reads: the longest request the server
    /// answered (its `apiserver_request_duration_seconds`' bucket), by which a request
    /// may have been sent before the read it was answered after
    /// ([`ApiRequest::sent_from_us`]).
    pub longest_request: Option<Duration>,
    /// How the server's priority and fairness held the provider back (the FlowSchema
    /// source).
    pub throttling: Option<ServerThrottling>,
    /// Requests the journal dropped before they were read.
    pub dropped: u64,
    /// What a reader must know (failed reads).
    pub notes: Vec<String>,
}

/// The cloud calls of a run.
#[derive(Clone, Debug, Default)]
pub struct CloudReport {
    /// Every call, on the run's clock, sorted by time.
    pub calls: Vec<CloudCall>,
    /// Entries the journal dropped.
    pub dropped: u64,
    /// The journal could not be read: the calls are missing.
    pub failed: bool,
    /// How far the calls' times may be off: the uncertainty of the cloud's epoch.
    pub epoch_uncertainty: std::time::Duration,
}

/// The provider's own counters.
#[derive(Clone, Debug, Default)]
pub struct ProviderReport {
    /// The counters, when they could be read.
    pub metrics: Option<ProviderMetrics>,
    /// What a reader must know (failed scrapes).
    pub notes: Vec<String>,
}
