//! The [`Checker`] that collects problems, and its helpers for the value types every section
//! shares: durations, DNS names, numbers in a range, names that must be unique or known.

use std::collections::BTreeSet;
use std::time::Duration;

use limiter::go::GoDuration;
use serde_saphyr::Spanned;

use super::pos;
use crate::error::{Pos, Problem};
use crate::template::check_json;

#[derive(Default)]
pub(super) struct Checker {
    pub(super) problems: Vec<Problem>,
    pub(super) warnings: Vec<Problem>,
}

impl Checker {
    pub(super) fn err(&mut self, at: Pos, message: impl Into<String>) {
        self.problems.push(Problem::new(at, message));
    }

    pub(super) fn duration(&mut self, s: &Spanned<String>, what: &str) -> Option<Duration> {
        match GoDuration::parse(s.value.trim()) {
            Ok(d) if d < GoDuration::ZERO => {
                self.err(
                    pos(s),
                    format!("{what} {:?} is negative, expected a duration ≥ 0", s.value),
                );
                None
            }
            Ok(d) => Some(d.to_std()),
            Err(e) => {
                self.err(
                    pos(s),
                    format!("{what}: {e}, expected a Go duration such as 500ms, 10s, 1m or 1h30m"),
                );
                None
            }
        }
    }

    pub(super) fn positive_duration(
        &mut self,
        s: &Spanned<String>,
        what: &str,
    ) -> Option<Duration> {
        let d = self.duration(s, what)?;
        if d.is_zero() {
            self.err(pos(s), format!("{what} is zero, expected a duration > 0"));
            return None;
        }
        Some(d)
    }

    pub(super) fn opt_duration(
        &mut self,
        s: Option<&Spanned<String>>,
        what: &str,
        default: Duration,
    ) -> Duration {
        s.and_then(|s| self.positive_duration(s, what))
            .unwrap_or(default)
    }

    /// Records a name already in `seen` as defined twice; adds it to `seen` otherwise.
    pub(super) fn unique(&mut self, seen: &mut BTreeSet<String>, s: &Spanned<String>, what: &str) {
        if !seen.insert(s.value.clone()) {
            self.err(
                pos(s),
                format!(
                    "{what} {:?} is defined twice, expected unique names",
                    s.value
                ),
            );
        }
    }

    /// Records a reference to a name that is not among `known`.
    pub(super) fn unknown<'a>(
        &mut self,
        s: &Spanned<String>,
        what: &str,
        known: impl IntoIterator<Item = &'a str>,
    ) {
        let known: Vec<_> = known.into_iter().collect();
        self.err(
            pos(s),
            format!(
                "unknown {what} {:?}, expected one of {}",
                s.value,
                known.join(", ")
            ),
        );
    }

    /// A `spec` object, checked for templates that do not parse.
    pub(super) fn spec(&mut self, s: &Spanned<serde_json::Value>) -> serde_json::Value {
        if let Err(e) = check_json(&s.value) {
            self.err(pos(s), format!("spec: {e}"));
        }
        s.value.clone()
    }

    pub(super) fn name(&mut self, s: &Spanned<String>, what: &str) {
        let ok = !s.value.is_empty()
            && s.value.len() <= 63
            && s.value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !s.value.starts_with('-')
            && !s.value.ends_with('-');
        if !ok {
            self.err(
                pos(s),
                format!("{what} {:?} is not a DNS label, expected 1-63 of a-z, 0-9 and `-`, not starting or ending with `-`", s.value),
            );
        }
    }

    pub(super) fn range(
        &mut self,
        s: &Spanned<f64>,
        what: &str,
        lo: f64,
        lo_open: bool,
        hi: f64,
    ) -> Option<f64> {
        let v = s.value;
        let ok = v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi;
        if ok {
            Some(v)
        } else {
            let open = if lo_open { "(" } else { "[" };
            let hi_s = if hi.is_infinite() {
                "∞)".to_owned()
            } else {
                format!("{hi}]")
            };
            self.err(
                pos(s),
                format!("{what} {v} is out of range, expected a number in {open}{lo}, {hi_s}"),
            );
            None
        }
    }
}
