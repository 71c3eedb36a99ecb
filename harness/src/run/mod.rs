//! `harness run`: a [`Target`] (the [`Embedded`] stack in this process, or a [`Cluster`]
//! through a kubeconfig), the phases of a scenario driven against it, and the observations
//! collected at the source.
//!
//! Layers point one way:
//! - [`run`] (this file): plan, start the target, check it serves the scenario's kinds
//!   ([`discovery`]), start the sources, drive the phases, finish the sources, observe,
//!   evaluate;
//! - [`target`]: where it runs ([`Target`], [`CloudControl`]);
//! - [`source`]: one file per measurement source, each started, told of each phase's
//!   moments if it measures then ([`source::PhaseHook`]: the audits), and finished;
//! - [`driver`]: the phases' writes and waits, one room per action, and its
//!   [`driver::Log`]; [`kill`] (the driver's): the kills of a kill phase, during the phase
//!   they interrupt;
//! - [`observe`]: observations from the log and the sources' reports;
//! - leaves: [`clock`] (one clock for the run), [`time`] (real or virtual time: the
//!   runtime, the paused clock), [`prometheus`], [`own`] (the harness's own
//!   requests), [`objects`], [`cloud`] (the scenario's cloud as mock-cloud's config),
//!   [`remote`], [`replicas`] (the API server's replicas), [`progress`], [`error`].
//!
//! Where to start: [`run`] with a validated [`Scenario`].

pub mod clock;
pub mod cloud;
pub mod core;
pub mod discovery;
pub mod driver;
pub mod error;
pub mod flow_schema;
mod handled;
pub mod objects;
pub mod observe;
pub mod own;
pub mod present;
pub mod progress;
pub mod prometheus;
pub mod remote;
pub mod replicas;
pub mod source;
pub mod target;
pub mod time;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use driver::kill;
pub use error::RunError;
pub use progress::Progress;
pub use source::memory::count_live_heap;
pub use target::any::{AnyTarget, On};
pub use target::cluster::{Cluster, ClusterOptions};
pub use target::embedded::Embedded;
pub use target::process::{Process, ProcessOptions};
pub use target::{CloudControl, Target};

use crate::predict;
use crate::result::{Observations, RunResult, Signal, StopCause, evaluate};
use crate::scenario::Scenario;
use driver::Driver;
use observe::{Reports, TargetFacts};
use source::Audits;
use source::cloud_journal::CloudJournal;
use source::watches::Watches;

/// The longest a cluster run waits, at its end, for the resources it deletes to be gone.
pub const CLEANUP_TIMEOUT: Duration = Duration::from_secs(600);

/// How a run ended.
#[derive(Debug)]
pub struct RunOutput {
    /// Verdicts, timelines, predictions.
    pub result: RunResult,
    /// The signal that interrupted the run (the result is then partial).
    pub interrupted: Option<Signal>,
}

/// The future of the next signal that interrupts a run, boxed: what [`run_on`]'s
/// `interrupt` gives.
pub type NextSignal = Pin<Box<dyn Future<Output = Signal> + Send>>;

/// [`run_on`]'s future, boxed.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<RunOutput, RunError>> + 'a>>;

/// Runs `scenario` on the target `on` names; see [`run`]. Not generic, so the run's code for
/// each target is compiled once, here, rather than again in each caller's crate for each
/// interrupt it passes (the `harness` binary's release build spent a minute on its copies).
///
/// # Errors
/// The future's: see [`run`].
pub fn run_on<'a>(
    scenario: &'a Scenario,
    on: On,
    progress: &'a Progress,
    mut interrupt: Box<dyn FnMut() -> NextSignal + Send>,
) -> RunFuture<'a> {
    // Boxed and behind a plain function: a caller polls it through the box, never
    // instantiating (or inlining) the run's code itself.
    Box::pin(async move {
        let interrupt = &mut interrupt;
        run::<AnyTarget, _>(scenario, on, progress, interrupt).await
    })
}

/// Runs `scenario` on the embedded stack; see [`run`].
///
/// # Errors
/// See [`run`].
pub async fn run_embedded(
    scenario: &Scenario,
    progress: &Progress,
    interrupt: impl Future<Output = Signal>,
) -> Result<RunOutput, RunError> {
    let mut interrupt = Some(interrupt);
    run::<Embedded, _>(scenario, (), progress, move || {
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

/// Runs `scenario` on target `T` until its phases are done or an `interrupt()` completes
/// with a signal (the first one stops the phases; in a cluster, a second one stops the
/// cleanup), then
/// evaluates every assertion. A target that [cleans up](Target::cleans_up) then has what
/// the run created deleted.
///
/// # Errors
/// See [`RunError`]; a phase that times out is not an error (its `until` is reported unmet
/// and the result is marked partial).
pub async fn run<T: Target, F: Future<Output = Signal>>(
    scenario: &Scenario,
    options: T::Options,
    progress: &Progress,
    mut interrupt: impl FnMut() -> F,
) -> Result<RunOutput, RunError> {
    time::check(scenario.time, T::virtual_time(&options))?;
    let plan = predict::plan(scenario);
    let mut target = T::start(scenario, options).await?;
    target.check_kinds(scenario).await?;
    let clock = target.clock();
    let sources = target.take_sources();
    let memory = source::memory::MemorySampler::start(sources.memory, clock);
    let cloud_journal = CloudJournal::start();
    let client = target.client();
    let seeded = objects::seed(
        &client,
        scenario,
        target.secret_namespace(),
        target.cloud_url(),
    )
    .await?;
    let mut kinds = objects::scenario_kinds(scenario);
    kinds.extend(core::xrs::xr_kinds(scenario));
    let watches = Watches::start(&client, &kinds, clock);
    let mut driver = Driver::new(scenario, client.clone(), clock);
    let mut audits = Audits::start(scenario, client.clone(), clock);
    let mut interrupted = None;
    let mut stopped = None;
    {
        let stop = interrupt();
        tokio::pin!(stop);
        let exit = target.provider_exit();
        tokio::pin!(exit);
        for (i, phase) in scenario.phases.iter().enumerate() {
            let step = driver.run_phase(i, phase, &mut target, &watches, progress, &mut audits);
            tokio::select! {
                end = step => {
                    if !end?.run_goes_on() {
                        progress.line(format_args!(
                            "phase {} did not reach its `until` within {:?}: stopping the run",
                            phase.name, phase.timeout
                        ));
                        break;
                    }
                }
                signal = &mut stop => {
                    interrupted = Some(signal);
                    stopped = Some(StopCause::Interrupted(signal));
                    driver.record_interrupted(phase);
                    progress.line(format_args!(
                        "interrupted ({}) during phase {}: writing the partial report",
                        signal.name(),
                        phase.name
                    ));
                    break;
                }
                exit = &mut exit => {
                    stopped = Some(StopCause::ProviderExited(exit.code));
                    driver.record_interrupted(phase);
                    progress.line(format_args!(
                        "phase {}: {}\nstopping the run",
                        phase.name, exit.message
                    ));
                    break;
                }
            }
        }
    }
    let memory = memory.finish().await;
    let core = {
        let seen = watches.lock().clone();
        target.finish_core(driver.xr_log(), &seen).await
    };
    target.stop_provider().await;
    let cloud = cloud_journal.finish(target.cloud()).await;
    let api = sources.api.finish().await;
    let seen = watches.lock().clone();
    let inventory = present::inventory(target.cloud()).await;
    let custom_resources = present::custom_resources(&client, scenario).await;
    let provider = match sources.provider {
        Some(p) => p.finish().await,
        None => source::ProviderReport::default(),
    };
    let facts = TargetFacts {
        info: target.info(),
        provider_starts: target.provider_starts(),
        notes: target.notes(),
        time: scenario.time,
        reconcile_cpu: scenario.simulated_reconcile_cpu(),
    };
    let obs = observe::observations(
        driver.log(),
        Reports {
            cloud,
            api,
            provider,
            seen,
            audits: audits.finish(),
        },
        facts,
        inventory,
        custom_resources,
        (&clock, clock.now()),
        stopped,
    );
    let obs = Observations { memory, ..obs };
    if target.cleans_up() {
        // XRs first: core deletes what they compose while the provider is still there.
        let xrs = driver.created_xrs();
        let target = &target;
        tokio::select! {
            () = async {
                if !xrs.is_empty() {
                    progress.line(format_args!(
                        "cleaning up: deleting {} XRs, then what the run created for Crossplane core",
                        xrs.len()
                    ));
                }
                let deadline = tokio::time::Instant::now() + CLEANUP_TIMEOUT;
                let left = target.clean_up_core(xrs, deadline).await;
                if !left.is_empty() {
                    progress.line(format_args!(
                        "cleaning up: XRs still there after {CLEANUP_TIMEOUT:?}: {}",
                        left.join(", ")
                    ));
                }
                driver.clean_up(&seeded, &watches, CLEANUP_TIMEOUT, progress).await;
            } => {}
            _ = interrupt() => {
                let left = driver.left_after_cleanup(&seeded, &watches);
                progress.line(format_args!("{}", cleanup_interrupted(&left)));
            }
        }
    } else {
        objects::delete_scene_objects(&client, scenario).await;
    }
    watches.finish().await;
    let mut result = evaluate(scenario, &plan, &obs);
    crate::result::core_verdict::judge(scenario, &plan, &mut result, core);
    Ok(RunOutput {
        result,
        interrupted,
    })
}

/// What a second Ctrl-C during the clean-up says: what stays in the cluster, the first
/// few by name.
#[must_use]
pub fn cleanup_interrupted(left: &[String]) -> String {
    const NAMED: usize = 10;
    if left.is_empty() {
        return "cleanup interrupted: nothing the run created is left".to_owned();
    }
    let mut names = left
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if left.len() > NAMED {
        names.push_str(&format!(" and {} more", left.len() - NAMED));
    }
    format!(
        "cleanup interrupted: {} objects the run created are left in the cluster: {names} (delete them with kubectl, or run again: objects that exist are used as they are)",
        left.len()
    )
}
