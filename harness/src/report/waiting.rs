//! The lines every report prints when a phase timed out: the resources it was still waiting
//! for, with their last conditions (the first few, and how many more).

use crate::result::RunResult;

/// What the phase that stopped the run was still waiting for, one line each; none when no
/// phase timed out.
#[must_use]
pub fn waiting_lines(r: &RunResult) -> Vec<String> {
    r.stopped
        .as_ref()
        .and_then(|s| Some(s.waiting.as_ref()?.lines(&s.phase)))
        .unwrap_or_default()
}
