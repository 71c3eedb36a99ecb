//! Results: what a run observed ([`Observations`], plain data the runner fills), and the
//! versioned [`RunResult`] that [`evaluate`] makes from it and every report reads.

mod audit_verdict;
mod calls_verdict;
pub mod core;
pub mod core_verdict;
mod echo;
pub mod error_paths;
mod evaluate;
mod info;
mod kills;
mod memory_verdict;
mod model;
mod observe;
pub mod per_reconcile;
mod phase_failure;
pub mod provider_check;
pub mod retry_after;
mod shared_str;
mod standard_metrics;
pub mod waiting;

pub use evaluate::evaluate;
pub use info::{scenario_info, workload};
pub use kills::{Kill, PhaseAudit};
pub use model::{
    ApiCount, ApiRequestCount, Concurrency, Dropped, LimitKind, Outcome, Peak, PhaseResult,
    ProviderCheck, RESULT_VERSION, RunInfo, RunResult, RunTarget, ScenarioInfo, ServerThrottling,
    SettingsInfo, Signal, StopCause, Stopped, TimeInfo, Timeline, Verdict,
};
pub use observe::{
    ApiRequest, CallAction, CloudCall, Observations, PhaseSpan, ProviderMetrics, ResourceTimes,
    object_key,
};
pub use phase_failure::PhaseFailure;
