//! `harness run`: a stack (embedded: mock-apiserver, mock-cloud and the provider in this
//! process; or a cluster: a kubeconfig, the provider deployed there, mock-cloud at a URL), the
//! phases of a scenario driven against it, and the observations collected at the source:
//! cloud calls from mock-cloud's journal, API requests from the API server (see [`api`] for
//! what each mode reads), resource milestones from the harness's own watches.
//!
//! Where to start: [`run`] with a validated [`Scenario`] and a [`Target`]; it returns the
//! [`RunResult`] that every report reads.

pub mod api;
mod cloud;
pub mod cluster;
mod collect;
mod objects;
mod overrides;
mod phases;
mod progress;
mod remote;
mod stack;
mod tracker;

use std::future::Future;
use std::time::Duration;

pub use api::HARNESS_USER_AGENT;
pub use cloud::{cloud_config_document, faults_document};
pub use cluster::ClusterOptions;
pub use overrides::{OverrideError, apply_overrides};
pub use progress::Progress;
pub use stack::Stack;

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
    /// A cluster run cannot reach or use what it needs.
    #[error("{0}")]
    Setup(String),
}

/// Where a run happens.
#[derive(Clone, Debug)]
pub enum Target {
    /// The embedded stack, in this process.
    Embedded,
    /// A cluster.
    Cluster(ClusterOptions),
}

/// The longest a cluster run waits, at its end, for the resources it deletes to be gone.
pub const CLEANUP_TIMEOUT: Duration = Duration::from_secs(600);

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

/// Runs `scenario` against the embedded stack; see [`run`].
///
/// # Errors
/// See [`run`].
pub async fn run_embedded(
    scenario: &Scenario,
    progress: &Progress,
    interrupt: impl Future<Output = ()>,
) -> Result<RunOutput, RunError> {
    let mut interrupt = Some(interrupt);
    run(scenario, &Target::Embedded, progress, move || {
        let next = interrupt.take();
        async move {
            match next {
                Some(f) => f.await,
                None => std::future::pending().await,
            }
        }
    })
    .await
}

/// Runs `scenario` against `target` until its phases are done or an `interrupt()` completes
/// (the first one stops the phases; in a cluster, a second one stops the cleanup), then
/// evaluates every assertion. A cluster run then deletes what it created, unless
/// [`ClusterOptions::keep`].
///
/// # Errors
/// See [`RunError`]; a phase that times out is not an error (its `until` is reported unmet
/// and the result is marked partial).
pub async fn run<F: Future<Output = ()>>(
    scenario: &Scenario,
    target: &Target,
    progress: &Progress,
    mut interrupt: impl FnMut() -> F,
) -> Result<RunOutput, RunError> {
    let plan = predict::plan(scenario);
    let mut stack = match target {
        Target::Embedded => Stack::embedded(scenario).await?,
        Target::Cluster(options) => Stack::cluster(scenario, options).await?,
    };
    let mut driver = phases::Driver::new(scenario, &stack).await?;
    let mut interrupted = false;
    {
        let stop = interrupt();
        tokio::pin!(stop);
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
                () = &mut stop => {
                    interrupted = true;
                    driver.record_interrupted(i, phase);
                    progress.line(format_args!("interrupted during phase {}: stopping", phase.name));
                    break;
                }
            }
        }
    }
    stack.stop_provider().await;
    let obs = collect::observations(scenario, &mut stack, &driver, interrupted).await;
    if stack.cleans_up() {
        tokio::select! {
            _ = driver.clean_up(CLEANUP_TIMEOUT, progress) => {}
            () = interrupt() => progress.line(format_args!("cleanup interrupted: what is left stays")),
        }
    }
    driver.shut_down().await;
    Ok(RunOutput {
        result: evaluate(scenario, &plan, &obs),
        interrupted,
    })
}
