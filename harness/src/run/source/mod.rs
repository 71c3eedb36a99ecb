//! Measurement sources, one file each. Every source is started when the run starts and
//! finished after its phases, and hands back a report:
//!
//! - [`cloud_journal`]: mock-cloud's journal (the cloud calls);
//! - [`api_journal`]: mock-apiserver's journal, in process or over HTTP (API requests);
//! - [`api_metrics`]: an API server's `/metrics` (API requests, when there is no journal);
//! - [`provider_metrics`]: the provider's own metrics (which ones: [`provider_readings`]);
//! - [`watches`]: the harness's watches of the managed resources;
//! - [`memory`]: the components' memory, sampled in the background;
//! - [`audits`]: the audit (cloud inventory against the managed resources) at the end of
//!   each phase, and the creates each kill interrupted, through the phase hooks ([`hook`])
//!   the driver calls.
//!
//! [`api`] chooses the API-request source; [`poll`] reads another process in the
//! background; [`report`] holds what the sources hand back.

pub mod api;
pub mod api_journal;
pub mod api_metrics;
pub mod audits;
pub mod cloud_journal;
pub mod hook;
mod intern;
pub mod memory;
pub mod poll;
pub mod provider_metrics;
pub mod provider_readings;
pub mod report;
pub mod watches;

pub use api::{ApiRequests, ApiSource};
pub use audits::{AuditReport, Audits};
pub use hook::PhaseHook;
pub use provider_metrics::ProviderMetricsSource;
pub use report::{ApiMeasure, ApiReport, CloudReport, ProviderReport};
