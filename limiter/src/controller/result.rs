//! What a reconcile returns: controller-runtime's `reconcile.Result` and error.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

/// Any error a reconciler reports.
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// controller-runtime's `reconcile.Result`: what to do with the item after a reconcile that did
/// not fail.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Action {
    /// Requeue through the rate limiter (`Result.Requeue`, deprecated in Go but still honoured).
    pub requeue: bool,
    /// Requeue after this long, not rate limited, after forgetting the item's backoff.
    pub requeue_after: Option<Duration>,
    /// Priority for the requeue (priority queue only); otherwise the item keeps the priority it
    /// was handed out with.
    pub priority: Option<i64>,
}

impl Action {
    /// Done: forget the item until the next event.
    #[must_use]
    pub fn done() -> Self {
        Action::default()
    }

    /// Requeue through the rate limiter.
    #[must_use]
    pub fn requeue() -> Self {
        Action {
            requeue: true,
            ..Action::default()
        }
    }

    /// Requeue after `d` (a zero duration means done, as in Go).
    #[must_use]
    pub fn requeue_after(d: Duration) -> Self {
        Action {
            requeue_after: (!d.is_zero()).then_some(d),
            ..Action::default()
        }
    }

    /// With a priority for the requeue.
    #[must_use]
    pub fn with_priority(mut self, priority: i64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Whether this is the zero `Result` (`Result.IsZero()`).
    #[must_use]
    pub fn is_zero(&self) -> bool {
        *self == Action::default()
    }
}

/// A failed reconcile. A terminal error is not retried (controller-runtime's `TerminalError`);
/// any other error is requeued through the rate limiter. An `Action` returned with an error is
/// ignored except for its priority, as controller-runtime does (it logs a warning).
#[derive(Debug)]
pub struct ReconcileError {
    source: BoxError,
    terminal: bool,
    ignored: Action,
}

impl ReconcileError {
    /// A retryable error.
    pub fn new(source: impl Into<BoxError>) -> Self {
        ReconcileError {
            source: source.into(),
            terminal: false,
            ignored: Action::default(),
        }
    }

    /// An error that must not be retried (`reconcile.TerminalError`).
    pub fn terminal(source: impl Into<BoxError>) -> Self {
        ReconcileError {
            source: source.into(),
            terminal: true,
            ignored: Action::default(),
        }
    }

    /// Attaches the `Result` returned alongside the error (only its priority is used).
    #[must_use]
    pub fn with_result(mut self, action: Action) -> Self {
        self.ignored = action;
        self
    }

    /// Whether the error is terminal.
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// The `Result` returned alongside the error.
    #[must_use]
    pub fn result(&self) -> Action {
        self.ignored
    }
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terminal {
            f.write_str("terminal reconcile error")
        } else {
            f.write_str("reconcile error")
        }
    }
}

impl StdError for ReconcileError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(self.source.as_ref())
    }
}

/// What a reconcile returns.
pub type ReconcileResult = Result<Action, ReconcileError>;

/// How controller-runtime classified a finished reconcile (`controller_runtime_reconcile_total`'s
/// `result` label, plus terminal errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// No error, no requeue: the item was forgotten.
    Success,
    /// An error: requeued through the rate limiter.
    Error,
    /// A terminal error: not requeued, and not forgotten.
    TerminalError,
    /// `Requeue: true`: requeued through the rate limiter.
    Requeue,
    /// `RequeueAfter`: forgotten, then requeued after the delay.
    RequeueAfter,
}

impl Outcome {
    /// The metric label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Error => "error",
            Outcome::TerminalError => "terminal_error",
            Outcome::Requeue => "requeue",
            Outcome::RequeueAfter => "requeue_after",
        }
    }
}
