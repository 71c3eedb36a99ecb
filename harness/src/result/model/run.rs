//! What ran, where, and how its API requests were counted.

use serde::{Deserialize, Serialize};

use crate::predict::fmt_num;
use crate::scenario::TimeMode;

/// Where a run happened.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum RunTarget {
    /// The embedded stack, in the harness's process.
    #[default]
    Embedded,
    /// A cluster reached through a kubeconfig.
    Cluster {
        /// The kubeconfig file.
        kubeconfig: String,
        /// mock-cloud's URL.
        cloud_url: String,
        /// The provider's Deployment, `namespace/name`.
        provider_deployment: String,
    },
    /// mock-apiserver and mock-cloud on loopback, the provider a child process.
    Process {
        /// The provider's command line, placeholders unrendered.
        command: String,
        /// mock-cloud's URL.
        cloud_url: String,
        /// The directory of the provider's logs.
        logs: String,
    },
}

/// How time passed in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeInfo {
    /// `real`, or `virtual`: the embedded stack on tokio's paused clock, where the run's
    /// duration is virtual time.
    pub mode: TimeMode,
    /// The wall time the run took, s (from the target's start to the observations; a
    /// wall-time field, which differs between two runs that are otherwise the same).
    pub wall_s: f64,
    /// In virtual time: the CPU time per reconcile the provider slept
    /// (`prediction.reconcileCpu`), ms.
    #[serde(default)]
    pub reconcile_cpu_simulated_ms: Option<f64>,
    /// The CPU time per reconcile the provider measured (`provider_reconcile_cpu_seconds`:
    /// wall time spent polling a reconcile, the in-process API server's and cloud's
    /// handling of its requests included), ms: what a real run gives
    /// `prediction.reconcileCpu` for virtual runs. A wall-time field.
    #[serde(default)]
    pub reconcile_cpu_measured_ms: Option<f64>,
}

/// Journal entries lost because a journal was full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// The API server's request journal.
    pub api: u64,
    /// The cloud's call journal.
    pub cloud: u64,
}

/// Whether the measured API requests are the provider's, all of them and only them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApiCount {
    /// Every request of the provider and no other client's.
    #[default]
    Exact,
    /// Every request of the provider, and maybe other clients' too (the source cannot tell
    /// them apart): a count within its bound is the provider's within it, one past it is
    /// UNMEASURED.
    MayIncludeOthers,
    /// Only the provider's, and maybe not all of them: a count past its bound fails, one
    /// within it is UNMEASURED.
    MayMissSome,
    /// Neither all of the provider's nor only its (or nothing measured): UNMEASURED.
    Unknown,
}

impl ApiCount {
    /// The count of a source that may both miss some of the provider's requests and
    /// count others'.
    #[must_use]
    pub fn and(self, other: ApiCount) -> ApiCount {
        use ApiCount::{Exact, MayIncludeOthers, MayMissSome, Unknown};
        match (self, other) {
            (Exact, x) | (x, Exact) => x,
            (MayIncludeOthers, MayIncludeOthers) => MayIncludeOthers,
            (MayMissSome, MayMissSome) => MayMissSome,
            _ => Unknown,
        }
    }
}

/// How the API server's priority and fairness held the provider's requests back over the
/// run, from the FlowSchema's `apiserver_flowcontrol_*` series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerThrottling {
    /// The priority level the FlowSchema puts them in.
    pub priority_level: String,
    /// Requests rejected with 429 (`apiserver_flowcontrol_rejected_requests_total`).
    pub rejected: u64,
    /// Requests that waited in a queue more than 5 ms before they ran or were rejected
    /// (`apiserver_flowcontrol_request_wait_duration_seconds`, above its `0.005` bucket).
    pub queued: u64,
    /// The time all its requests waited, seconds (its sum).
    pub queued_s: f64,
}

impl ServerThrottling {
    /// Whether the server held any request back.
    #[must_use]
    pub fn held_back(&self) -> bool {
        self.rejected > 0 || self.queued > 0
    }
}

/// The provider's API requests of one verb and resource over the run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ApiRequestCount {
    /// The verb (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
    /// `deletecollection`, `discovery`).
    pub verb: String,
    /// `PLURAL[.GROUP][/SUBRESOURCE]`, the path of a discovery request, or `unknown` where
    /// the source does not say.
    pub resource: String,
    /// How many.
    pub count: u64,
}

/// What ran and how it was measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The harness's version.
    pub harness: String,
    /// Where the run happened.
    pub target: RunTarget,
    /// How API-server requests were measured, in words.
    pub api_requests_measured_by: String,
    /// Whether that count is the provider's, all of it and only it.
    #[serde(default)]
    pub api_count: ApiCount,
    /// For API requests dated at each read of the server's metrics: the longest time
    /// from the start of one read to the end of the next, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_read_gap_s: Option<f64>,
    /// For API requests dated at each read of the server's metrics: the longest request
    /// the server answered, seconds (the upper bound of the smallest bucket of its
    /// `apiserver_request_duration_seconds` that holds all). A request dated at a read was
    /// sent no earlier than the start of the read before less this; the `apiRequests`
    /// check judges the band that puts around a window's count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_longest_request_s: Option<f64>,
    /// How the server's priority and fairness held the provider back, where the
    /// FlowSchema's series say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_server_throttling: Option<ServerThrottling>,
    /// Journal entries dropped; any drop makes the result partial.
    pub dropped: Dropped,
    /// How many times the provider was started or rolled.
    pub provider_starts: u32,
    /// Notes on how the run was measured.
    pub notes: Vec<String>,
    /// Real or virtual time, and the wall time the run took.
    #[serde(default)]
    pub time: TimeInfo,
    /// When the run started (RFC 3339, UTC; a wall-time field).
    #[serde(default)]
    pub started_at: Option<String>,
    /// The git commit of the working directory the harness ran in (`+dirty` when it had
    /// uncommitted changes), if it is a git checkout.
    #[serde(default)]
    pub commit: Option<String>,
    /// The cargo features the harness was built with ([`crate::BUILD_FEATURES`]); none in
    /// a default build.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

impl RunInfo {
    /// `features: aws`: the features the harness was built with, if any.
    #[must_use]
    pub fn features_label(&self) -> Option<String> {
        (!self.features.is_empty()).then(|| format!("features: {}", self.features.join(", ")))
    }

    /// The harness's version and, after it, the features it was built with, if any.
    #[must_use]
    pub fn build(&self) -> String {
        match self.features_label() {
            None => self.harness.clone(),
            Some(features) => format!("{} ({features})", self.harness),
        }
    }

    /// The facts as labelled rows, for reports.
    #[must_use]
    pub fn rows(&self) -> Vec<(String, String)> {
        let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".to_owned());
        let mut rows = vec![
            ("harness".to_owned(), self.build()),
            ("started at".to_owned(), unknown(&self.started_at)),
            (
                "time".to_owned(),
                match self.time.mode {
                    TimeMode::Real => "real".to_owned(),
                    TimeMode::Virtual => format!(
                        "virtual (tokio's paused clock); {} s of wall time",
                        fmt_num(self.time.wall_s)
                    ),
                },
            ),
            ("commit".to_owned(), unknown(&self.commit)),
        ];
        match &self.target {
            RunTarget::Embedded => rows.push(("target".to_owned(), "embedded".to_owned())),
            RunTarget::Cluster {
                kubeconfig,
                cloud_url,
                provider_deployment,
            } => rows.extend([
                ("target".to_owned(), "cluster".to_owned()),
                ("kubeconfig".to_owned(), kubeconfig.clone()),
                ("cloud url".to_owned(), cloud_url.clone()),
                (
                    "provider deployment".to_owned(),
                    provider_deployment.clone(),
                ),
            ]),
            RunTarget::Process {
                command,
                cloud_url,
                logs,
            } => rows.extend([
                ("target".to_owned(), "process".to_owned()),
                ("provider command".to_owned(), command.clone()),
                ("cloud url".to_owned(), cloud_url.clone()),
                ("provider logs".to_owned(), logs.clone()),
            ]),
        }
        rows.push((
            "api requests measured by".to_owned(),
            self.api_requests_measured_by.clone(),
        ));
        rows.push((
            "api requests counted".to_owned(),
            match self.api_count {
                ApiCount::Exact => "the provider's, all of them and only them",
                ApiCount::MayIncludeOthers => {
                    "the provider's and maybe other clients' (a count past its bound is UNMEASURED)"
                }
                ApiCount::MayMissSome => {
                    "the provider's, maybe not all of them (a count within its bound is UNMEASURED)"
                }
                ApiCount::Unknown => "not the provider's alone nor all of them (UNMEASURED)",
            }
            .to_owned(),
        ));
        if let Some(th) = &self.api_server_throttling {
            rows.push((
                "api server throttling".to_owned(),
                format!(
                    "{} requests rejected with 429, {} queued more than 5 ms, {} s of waiting in all, at priority level {}",
                    th.rejected,
                    th.queued,
                    fmt_num(th.queued_s),
                    th.priority_level
                ),
            ));
        }
        if let Some(gap) = self.api_read_gap_s {
            rows.push((
                "api requests' longest gap between reads".to_owned(),
                format!("{} s", fmt_num(gap)),
            ));
        }
        if let (Some(gap), Some(longest)) = (self.api_read_gap_s, self.api_longest_request_s) {
            rows.push((
                "api requests dated at most this long after they were sent".to_owned(),
                format!(
                    "{} s (the longest gap between reads plus the longest request, {} s: a window's count is judged by the band the dates allow)",
                    fmt_num(gap + longest),
                    fmt_num(longest)
                ),
            ));
        }
        rows.push((
            "journal entries dropped (api, cloud)".to_owned(),
            format!("{}, {}", self.dropped.api, self.dropped.cloud),
        ));
        rows.push((
            "provider starts".to_owned(),
            self.provider_starts.to_string(),
        ));
        for (i, note) in self.notes.iter().enumerate() {
            rows.push((format!("note {}", i + 1), note.clone()));
        }
        rows
    }
}
