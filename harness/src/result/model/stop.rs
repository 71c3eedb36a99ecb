//! Where and why a run stopped early.

use serde::{Deserialize, Serialize};

/// A signal that stopped a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    /// SIGINT (Ctrl-C): exit 130.
    Sigint,
    /// SIGTERM (what CI sends to cancel a job): exit 143.
    Sigterm,
}

impl Signal {
    /// `SIGINT` or `SIGTERM`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Signal::Sigint => "SIGINT",
            Signal::Sigterm => "SIGTERM",
        }
    }
}

/// Why a run stopped before its last phase completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopCause {
    /// A signal.
    Interrupted(Signal),
    /// The phase did not reach its `until` within its timeout.
    TimedOut,
    /// The provider exited by itself (the process target), with this exit code (none: a
    /// signal ended it).
    ProviderExited(Option<i32>),
}

/// Where and why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stopped {
    /// The phase that was running.
    pub phase: String,
    /// Why.
    pub cause: StopCause,
    /// A phase that timed out: the resources it was still waiting for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<crate::result::waiting::Waiting>,
}

impl Stopped {
    /// `interrupted (SIGTERM) during phase create`, `phase create timed out`, `the provider
    /// exited with code 2 during phase create`.
    #[must_use]
    pub fn headline(&self) -> String {
        match self.cause {
            StopCause::Interrupted(s) => {
                format!("interrupted ({}) during phase {}", s.name(), self.phase)
            }
            StopCause::TimedOut => format!("stopped: phase {} timed out", self.phase),
            StopCause::ProviderExited(Some(code)) => format!(
                "stopped: the provider exited with code {code} during phase {}",
                self.phase
            ),
            StopCause::ProviderExited(None) => format!(
                "stopped: a signal ended the provider during phase {}",
                self.phase
            ),
        }
    }
}
