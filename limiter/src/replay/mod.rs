//! The conformance replay: runs a script of the language in `specs/replay-language.md` on a
//! virtual clock (tokio paused time) and prints the transcript the real Go libraries printed
//! for it.
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
//! After every command the runner settles: it lets every task run until all are blocked,
//! without moving the clock. `advance D` sleeps on tokio time, so every timer inside the
//! window fires at its own instant. tokio's timers have a resolution of one millisecond;
//! sub-millisecond remainders of `advance` move the clock directly.

mod limiters;
mod out;
mod runner;
mod scripted;

use std::fmt;

/// Why a script stopped. The transcript up to that point is kept.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ReplayError {
    /// 1-based line of the command.
    pub line: usize,
    /// What went wrong.
    pub message: String,
    /// The transcript printed before the error.
    pub partial: String,
}

/// An error inside one command; the runner adds the line.
#[derive(Debug)]
pub(crate) struct ScriptError(String);

impl ScriptError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ScriptError(message.into())
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Runs `script` on a fresh single-threaded tokio runtime with paused time and returns the
/// transcript.
///
/// # Errors
/// A command that does not parse or cannot run (unknown names, a `get` that waits past its
/// limit); the error carries the line and the partial transcript.
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
