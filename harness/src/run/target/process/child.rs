//! The child processes of the process target: their starts, logs and exits, and the
//! loopback ports they are given.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;

use tokio::net::TcpListener;
use tokio::process::{Child, Command};
use tokio::time::Instant;

use super::super::ProviderExit;
use crate::run::error::RunError;
use crate::scenario::profile::ProcessCommand;

/// How many lines of the log of a provider that exited by itself the run shows.
const LOG_TAIL: usize = 5;

/// A start of the provider (or of core).
pub(super) struct Running {
    /// `provider` or `core`.
    pub(super) what: &'static str,
    pub(super) child: Child,
    /// Which start (1 for the first).
    pub(super) n: u32,
    pub(super) log: PathBuf,
    pub(super) started: Instant,
}

impl Running {
    /// What to tell the user about its exit with `status`.
    pub(super) fn exit(&self, status: std::process::ExitStatus) -> ProviderExit {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(LOG_TAIL)..].join("\n  ");
        let ends = if tail.is_empty() {
            "is empty".to_owned()
        } else {
            format!("ends:\n  {tail}")
        };
        ProviderExit {
            code: status.code(),
            message: format!(
                "the {} (start {}) exited by itself with {status} after {:.1}s; {} {ends}",
                self.what,
                self.n,
                self.started.elapsed().as_secs_f64(),
                self.log.display()
            ),
        }
    }
}

pub(super) fn io_error(what: String) -> impl FnOnce(std::io::Error) -> RunError {
    move |source| RunError::Process { what, source }
}

pub(super) async fn bind() -> Result<(TcpListener, String), RunError> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(io_error("bind a loopback port".to_owned()))?;
    let addr = listener
        .local_addr()
        .map_err(io_error("read a loopback port".to_owned()))?;
    Ok((listener, format!("http://{addr}")))
}

/// A loopback port free now, for the provider to listen on (another process could take
/// it before the provider does: then the provider's start fails, and its log says why).
pub(super) async fn free_port() -> Result<u16, RunError> {
    let (listener, _) = bind().await?;
    let port = listener
        .local_addr()
        .map_err(io_error("read a loopback port".to_owned()))?
        .port();
    Ok(port)
}

/// Starts `command` (its placeholders rendered by `render`, `extra` appended) as start `n`
/// of `what`; its output goes to `WHAT-N.log` in `logs`.
pub(super) fn spawn(
    what: &'static str,
    n: u32,
    (command, extra): (&ProcessCommand, &[String]),
    render: impl Fn(&str) -> String,
    logs: &Path,
) -> Result<Running, RunError> {
    let log = logs.join(format!("{what}-{n}.log"));
    let out = std::fs::File::create(&log).map_err(io_error(format!("create {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(io_error(format!("open {}", log.display())))?;
    let mut cmd = Command::new(&command.program);
    cmd.args(command.args.iter().map(|a| render(a)))
        .args(extra)
        .envs(command.env.iter().map(|(k, v)| (k, render(v))))
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    let child = cmd.spawn().map_err(io_error(format!(
        "start the {what} {}",
        command.program.display()
    )))?;
    tracing::info!(pid = child.id(), log = %log.display(), "started the {what}");
    Ok(Running {
        what,
        child,
        n,
        log,
        started: Instant::now(),
    })
}

/// The exit of the process in `slot`, if it has exited.
pub(super) fn exited(slot: &Mutex<Option<Running>>) -> Option<ProviderExit> {
    let mut running = slot.lock().unwrap_or_else(|e| e.into_inner());
    let r = running.as_mut()?;
    match r.child.try_wait() {
        Ok(Some(status)) => Some(r.exit(status)),
        _ => None,
    }
}

/// Sends SIGTERM to `child` and waits for it until `deadline`, then kills it.
pub(super) async fn terminate(mut child: Child, deadline: Instant) {
    if let Some(pid) = child.id() {
        // std and tokio send only SIGKILL; kill(1) sends SIGTERM without unsafe code.
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .await;
    }
    match tokio::time::timeout_at(deadline, child.wait()).await {
        Ok(Ok(status)) => tracing::info!(%status, "the provider exited"),
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot wait for the provider"),
        Err(_) => {
            tracing::warn!("the provider did not exit after SIGTERM in time: killing it");
            let _ = child.kill().await;
        }
    }
}
