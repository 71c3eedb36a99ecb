//! Crossplane core as a child process beside the provider, for a scenario with XR groups.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::Process;
use super::child::{Running, exited, spawn};
use crate::run::core::process as core_process;
use crate::run::error::RunError;
use crate::run::own::ProviderAgent;
use crate::run::remote::Remote;
use crate::scenario::Scenario;
use crate::scenario::core_flags;
use crate::scenario::profile::core::CoreProfile;
use crate::scenario::profile::{ProcessCommand, Rendered};

/// Crossplane core, run as a child process beside the provider.
pub(super) struct CoreProcess {
    pub(super) profile: CoreProfile,
    pub(super) command: ProcessCommand,
    /// The scenario's core settings as core's flags, appended to its command.
    pub(super) settings: Vec<String>,
    /// The loopback port `{{metricsPort}}` stands for in core's command (0: not used).
    pub(super) metrics_port: u16,
    /// Core's metrics: where they are read from, and the URL as the user reads it.
    pub(super) metrics: Option<(Remote, String, String)>,
    /// The running core; shared with [`Target::provider_exit`]'s future.
    pub(super) child: Arc<Mutex<Option<Running>>>,
    /// The managed kinds its XRs compose, as the watches name them.
    pub(super) composed: Vec<String>,
}

/// Core's process from its profile, with the scenario's settings as its flags.
pub(super) fn core_process_of(s: &Scenario, profile: CoreProfile) -> Result<CoreProcess, RunError> {
    let command = profile.process.clone().ok_or_else(|| {
        RunError::CoreSetup(format!(
            "the core profile {} has no `command`, which the process target starts core from",
            profile.file
        ))
    })?;
    if let Some(why) = core_process::unsupported(s) {
        return Err(RunError::CoreSetup(why));
    }
    if !ProviderAgent::of(s).exact() {
        return Err(RunError::CoreSetup(
            "the provider's profile states no userAgent, so core's requests would count as the provider's: give the provider profile's `userAgent`".to_owned(),
        ));
    }
    Ok(CoreProcess {
        settings: core_flags::args(&s.composites.core),
        command,
        profile,
        metrics_port: 0,
        metrics: None,
        child: Arc::new(Mutex::new(None)),
        composed: crate::run::objects::composed_kinds(s)
            .into_iter()
            .map(|k| k.name)
            .collect(),
    })
}

impl Process {
    /// Installs what core reads at its start, starts core with the scenario's settings,
    /// and waits until it has applied its XR CRDs (and answers at its `metricsUrl`).
    pub(super) async fn start_core(&self, s: &Scenario) -> Result<(), RunError> {
        let Some(core) = &self.core else {
            return Ok(());
        };
        core_process::install(&self.client, s, core.command.crds.is_empty()).await?;
        let kubeconfig = self.kubeconfig.display().to_string();
        let with = Rendered {
            kubeconfig: &kubeconfig,
            cloud_url: &self.cloud_url,
            metrics_port: core.metrics_port,
        };
        let render = |t: &str| ProcessCommand::render(t, with);
        let running = spawn(
            "core",
            1,
            (&core.command, &core.settings),
            render,
            &self.logs,
        )?;
        let slot = Arc::clone(&core.child);
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(running);
        let deadline = Instant::now() + core_process::CORE_START_TIMEOUT;
        let still_running = || match exited(&slot) {
            Some(exit) => Err(RunError::CoreSetup(exit.message)),
            None => Ok(()),
        };
        core_process::wait_for_xr_crds(&self.client, s, deadline, still_running).await?;
        if let Some((remote, path, url)) = &core.metrics {
            while let Err(e) = remote.get_text(path).await {
                still_running()?;
                if Instant::now() >= deadline {
                    return Err(RunError::CoreSetup(format!(
                        "core did not answer at its metricsUrl {url} within {:?}: {e}",
                        core_process::CORE_START_TIMEOUT
                    )));
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Ok(())
    }
}
