//! Results: what a run observed ([`Observations`], plain data the runner fills), and the
//! versioned [`RunResult`] that [`evaluate`] makes from it and every report reads.

mod echo;
mod evaluate;
pub mod float;
mod model;
mod observe;

pub use evaluate::evaluate;
pub use model::{
    Dropped, Peak, PhaseResult, ProviderCheck, RESULT_VERSION, RunInfo, RunResult, RunTarget,
    ScenarioInfo, SettingsInfo, Timeline, Verdict,
};
pub use observe::{
    ApiRequest, CallAction, CloudCall, Observations, PhaseSpan, ProviderMetrics, ResourceTimes,
};
