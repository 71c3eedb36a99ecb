//! `harness run`: the embedded stack (mock-apiserver, mock-cloud and the provider, in this
//! process), the phases of a scenario driven against it, and the observations collected at the
//! source: cloud calls from mock-cloud's journal, API requests from mock-apiserver's journal,
//! resource milestones from the harness's own watches.
//!
//! Where to start: [`run_embedded`] with a validated [`Scenario`]; it returns the
//! [`RunResult`] that every report reads.

mod collect;
mod objects;
mod overrides;
mod phases;
mod progress;
mod stack;
mod tracker;

use std::future::Future;
use std::time::Duration;

pub use overrides::{OverrideError, apply_overrides};
pub use progress::Progress;
pub use stack::{EmbeddedStack, HARNESS_USER_AGENT};

use crate::predict;
use crate::result::{RunResult, evaluate};
use crate::scenario::Scenario;

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The mock cloud rejected the scenario's cloud section.
    #[error("the mock cloud rejected the scenario's cloud settings")]
    Cloud(#[source] mock_cloud::ConfigError),
    /// The provider's CRDs could not be produced or loaded.
    #[error("cannot load the provider's CustomResourceDefinitions")]
    Crds(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A Kubernetes request needed to set the run up failed.
    #[error("cannot {what}")]
    Kube {
        /// What the harness was doing.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The provider's settings cannot run.
    #[error("the provider cannot run with these settings")]
    Provider(#[source] provider::ProviderError),
}

/// How a run ended.
#[derive(Debug)]
pub struct RunOutput {
    /// Verdicts, timelines, predictions.
    pub result: RunResult,
    /// The run was interrupted (Ctrl-C): the result is partial.
    pub interrupted: bool,
}

/// How long the provider gets to finish in-flight reconciles when it stops.
pub const PROVIDER_STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `scenario` against the embedded stack until its phases are done or `interrupt`
/// completes, then evaluates every assertion.
///
/// # Errors
/// See [`RunError`]; a phase that times out is not an error (its `until` is reported unmet
/// and the result is marked partial).
pub async fn run_embedded(
    scenario: &Scenario,
    progress: &Progress,
    interrupt: impl Future<Output = ()>,
) -> Result<RunOutput, RunError> {
    let plan = predict::plan(scenario);
    let mut stack = EmbeddedStack::start(scenario).await?;
    let mut driver = phases::Driver::new(scenario, &stack).await?;
    tokio::pin!(interrupt);
    let mut interrupted = false;
    for (i, phase) in scenario.phases.iter().enumerate() {
        let step = driver.run_phase(i, phase, &mut stack, progress);
        tokio::select! {
            span = step => {
                let span = span?;
                let timed_out = !span.completed;
                driver.record(span);
                if timed_out {
                    progress.line(format_args!(
                        "phase {} did not reach its `until` within {:?}: stopping the run",
                        phase.name, phase.timeout
                    ));
                    break;
                }
            }
            () = &mut interrupt => {
                interrupted = true;
                driver.record_interrupted(i, phase);
                progress.line(format_args!("interrupted during phase {}: stopping", phase.name));
                break;
            }
        }
    }
    stack.stop_provider().await;
    let obs = collect::observations(scenario, &stack, &driver, interrupted).await;
    driver.shut_down().await;
    Ok(RunOutput {
        result: evaluate(scenario, &plan, &obs),
        interrupted,
    })
}
