//! The `replay` target: the limiter's replay language (`limiter::replay`, the language of
//! the conformance scripts), parsed and run on a virtual clock.
//!
//! Input: a script. Scripts that could run for long are skipped rather than run (the
//! language has counts and waits in virtual time): more than [`MAX_LINES`] commands, a
//! number above [`MAX_NUMBER`], more than [`MAX_WORKERS`] workers, or a duration beyond
//! [`MAX_DURATION`].
//!
//! Asserts: no panic; a script that runs echoes every command; an error names a line and
//! a column of the script (or just past the line's end) and says what is wrong.

use std::time::Duration;

use limiter::go::GoDuration;

/// The most commands a script may have.
pub const MAX_LINES: usize = 64;
/// The largest whole number a script may write (counts, bursts, priorities).
pub const MAX_NUMBER: u64 = 10_000;
/// The most workers a controller may have.
pub const MAX_WORKERS: u64 = 64;
/// The longest duration a script may write (advance, getlimit, requeue delays).
pub const MAX_DURATION: Duration = Duration::from_secs(3_600);

/// Runs one input.
///
/// # Panics
/// When the replay language breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(script) = std::str::from_utf8(data) else {
        return;
    };
    if !bounded(script) {
        return;
    }
    match limiter::replay::run(script) {
        Ok(transcript) => {
            let commands = script
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .count();
            assert!(
                transcript.lines().count() >= commands,
                "a command was not echoed:\n{transcript}"
            );
        }
        Err(e) => {
            let line = script
                .lines()
                .nth(e.line.wrapping_sub(1))
                .unwrap_or_else(|| panic!("line {} is not in the script", e.line));
            assert!(
                (1..=line.chars().count() + 1).contains(&e.column),
                "column {} is not in line {}: {line:?}",
                e.column,
                e.line
            );
            assert!(
                !e.error.to_string().trim().is_empty(),
                "an error without a message"
            );
        }
    }
}

/// Whether `script` is within the bounds: [`MAX_LINES`] commands, and every part of every
/// word (split at `=`, `:`, `@`) that is a whole number or a duration within [`MAX_NUMBER`]
/// and [`MAX_DURATION`], and at most [`MAX_WORKERS`] workers per controller.
#[must_use]
pub fn bounded(script: &str) -> bool {
    let commands: Vec<&str> = script
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    commands.len() <= MAX_LINES
        && commands
            .iter()
            .flat_map(|l| l.split_whitespace())
            .all(word_bounded)
}

fn word_bounded(word: &str) -> bool {
    if let Some(n) = word.strip_prefix("workers=") {
        return n.parse::<u64>().is_ok_and(|n| n <= MAX_WORKERS);
    }
    word.split(['=', ':', '@']).all(part_bounded)
}

fn part_bounded(part: &str) -> bool {
    if let Ok(n) = part.parse::<i128>() {
        return n.unsigned_abs() <= u128::from(MAX_NUMBER);
    }
    match GoDuration::parse(part) {
        Ok(d) => d.as_nanos().unsigned_abs() <= MAX_DURATION.as_nanos() as u64,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_waits_big_counts_and_long_scripts_are_out_of_bounds() {
        assert!(bounded("limiter L 2 3\nadvance 30m\nwhenx R a 10\n"));
        assert!(!bounded("advance 2h\n"));
        assert!(!bounded("outcome C a after:100h\n"));
        assert!(!bounded("whenx R a 1000000\n"));
        assert!(!bounded("controller C workers=100\n"));
        assert!(!bounded("whenx R a 10001\n"));
        assert!(bounded(
            "limiter L inf 3\nlimiter M 1e9 10\ncontroller C workers=8\n"
        ));
        assert!(!bounded(&"settle\n".repeat(MAX_LINES + 1)));
        assert!(bounded(&format!(
            "{}# a comment\n",
            "settle\n".repeat(MAX_LINES)
        )));
    }
}
