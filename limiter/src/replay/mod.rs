//! The conformance replay: runs a script (the language is in the crate's README, "The replay
//! language") on a [`VirtualClock`](crate::clock::VirtualClock) and prints the transcript the
//! real Go libraries printed for it.
//!
//! ```
//! let transcript = limiter::replay::run("limiter L 2 3\nreserve L\ntokens L\n").unwrap();
//! assert_eq!(
//!     transcript,
//!     "[t=0s] limiter L 2 3\n[t=0s] reserve L\n[t=0s]   => ok=true delay=0s [0ns]\n\
//!      [t=0s] tokens L\n[t=0s]   => 2\n"
//! );
//! ```
//!
//! # Semantics
//! The script runs the way Go's harness runs it in a `testing/synctest` bubble. Every limiter,
//! queue and controller of the script reads and sleeps on one virtual clock, so time is exact
//! to the nanosecond: `advance 1ns` moves the clock by 1 ns, and a wait of 133.333333 ms ends
//! at exactly that instant.
//! - After every command the runner settles: every task runs until all are blocked, without
//!   moving the clock (`synctest.Wait`).
//! - `advance D` sleeps `D` in the bubble: every timer within the window fires at its own
//!   instant, the tasks settling after each, and everything due by the end of the window
//!   (inclusive) has happened before the next command.
//! - The blocking commands (`get`, `waitn`, `stop`, and the controllers' shutdown at the end of
//!   the script) let time jump to the next timer whenever every task is blocked; `get` gives up
//!   after `getlimit` (default 1h).
//!
//! Arguments are read as Go's harness reads them: integers, floats and durations of any sign
//! (what Go does with a negative count or rate is what the transcript shows), `inf` as
//! `rate.Inf`. A line is an error only where Go's harness would reject it too: an unknown
//! command, a word that is not a number or a duration, a name never defined.

mod args;
mod breakers;
mod limiters;
mod out;
mod queues;
mod rate;
mod runner;
mod scripted;
mod world;

use crate::go::{GoDuration, ParseDurationError};

/// Why a script stopped: where, what, and the transcript up to that point.
#[derive(Debug, thiserror::Error)]
#[error("line {line}, column {column}")]
pub struct ReplayError {
    /// 1-based line of the command.
    pub line: usize,
    /// 1-based column (in characters) of the word at fault, or just past the end of the line
    /// when a word is missing.
    pub column: usize,
    /// What went wrong.
    #[source]
    pub error: CommandError,
    /// The transcript printed before the error.
    pub partial: String,
}

/// What is wrong with one command.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Not a command of the replay language.
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    /// A required word is missing.
    #[error("missing {0}")]
    Missing(&'static str),
    /// A word is not what the command takes there.
    #[error("expected {expected}, got {got:?}")]
    Expected {
        /// What the command takes.
        expected: &'static str,
        /// The word found.
        got: String,
    },
    /// A word is not a Go duration.
    #[error("expected a Go duration for {what}, got {got:?}")]
    Duration {
        /// What the duration is for.
        what: &'static str,
        /// The word found.
        got: String,
        /// Go's complaint.
        #[source]
        source: ParseDurationError,
    },
    /// A name that no earlier command defined.
    #[error("no {kind} named {name:?}")]
    NotDefined {
        /// Limiter, reservation, rate limiter, queue or controller.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// A command on a queue that does not have the operation.
    #[error("{command} needs {needs}")]
    WrongKind {
        /// The command.
        command: &'static str,
        /// The kind of queue it needs.
        needs: &'static str,
    },
    /// `get` waited longer than `getlimit`.
    #[error("get waited past its limit of {0}")]
    GetLimit(GoDuration),
    /// A blocking command can never return: every task is blocked and no timer is pending.
    #[error("{0} can never return: every task is blocked and no timer is pending")]
    Deadlock(&'static str),
}

/// Runs `script` on a fresh single-threaded tokio runtime (its tokio clock paused, which is how
/// the virtual clock learns that every task is blocked) and returns the transcript.
///
/// # Errors
/// A command that does not parse or cannot run (unknown names, a `get` that waits past its
/// limit); the error carries the line, the column and the partial transcript.
///
/// # Panics
/// If a tokio runtime cannot be built.
pub fn run(script: &str) -> Result<String, ReplayError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with time builds");
    rt.block_on(runner::run(script))
}
