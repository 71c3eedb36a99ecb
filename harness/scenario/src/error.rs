//! Scenario errors: every one names the file, the line and column, and what was expected.

use std::fmt;

use super::set::Set;

/// A place in a scenario: a 1-based line and column in the file, or a `--set`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// 0 for the file, `n` for the `n`-th `--set` (then line and column are those of its
    /// value).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub source: u32,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Pos {
    /// From a serde-saphyr location.
    #[must_use]
    pub fn of(loc: &serde_saphyr::Location) -> Pos {
        Pos {
            line: u32::try_from(loc.line()).unwrap_or(u32::MAX),
            column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
            source: loc.source_id(),
        }
    }

    /// Where it is, for a reader: `FILE:LINE:COLUMN`, or `--set PATH`.
    #[must_use]
    pub fn place(self, file: &str, sets: &[Set]) -> String {
        match self.source.checked_sub(1) {
            None => format!("{file}:{}:{}", self.line, self.column),
            Some(i) => match sets.get(i as usize) {
                Some(set) => format!("--set {}", set.path),
                None => format!("--set #{}", i + 1),
            },
        }
    }
}

/// One thing wrong in a scenario, at a place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where.
    pub pos: Pos,
    /// What is wrong and what was expected, lowercase.
    pub message: String,
}

impl Problem {
    /// A problem at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> Problem {
        Problem {
            pos,
            message: message.into(),
        }
    }
}

/// A scenario that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read {what} {file}")]
    Read {
        /// What the file is: `scenario`, `profile`, `calibration file`.
        what: &'static str,
        /// The path as given.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The YAML does not parse into the scenario format (first stage), or its values do not
    /// make a scenario (second stage). Problems are listed in file order.
    #[error("{}", Listing { file, sets, problems })]
    Invalid {
        /// The path as given.
        file: String,
        /// The `--set`s applied to it (problems may be placed at one).
        sets: Vec<Set>,
        /// What is wrong, at least one.
        problems: Vec<Problem>,
    },
}

impl ScenarioError {
    /// The problems of an [`ScenarioError::Invalid`] error (empty for a read error).
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        match self {
            ScenarioError::Read { .. } => &[],
            ScenarioError::Invalid { problems, .. } => problems,
        }
    }
}

struct Listing<'a> {
    file: &'a str,
    sets: &'a [Set],
    problems: &'a [Problem],
}

impl fmt::Display for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{}: ", p.pos.place(self.file, self.sets))?;
            write_one_line(f, &p.message)?;
        }
        Ok(())
    }
}

/// Writes `message` so that every line of the listing that does not start with a space
/// starts with a place: control characters that a scenario's own text brought into the
/// message (a line break inside a quoted value, a tab) are written escaped (`\n`, `\t`).
/// A line break followed by a space stays: that is a continuation line.
fn write_one_line(f: &mut fmt::Formatter<'_>, message: &str) -> fmt::Result {
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' && chars.peek() == Some(&' ') {
            f.write_str("\n")?;
        } else if c.is_control() {
            write!(f, "{}", c.escape_default())?;
        } else {
            write!(f, "{c}")?;
        }
    }
    Ok(())
}

/// A first-stage (serde-saphyr) error in `text` as a problem: its location, and its message
/// without the location suffix serde-saphyr appends. A value of the wrong type names its
/// field and what was expected ("count: expected a whole number ≥ 1, got 1.5") instead of
/// the type serde wanted ("invalid u32").
#[must_use]
pub fn from_yaml_in(err: &serde_saphyr::Error, text: &str) -> Problem {
    let mut p = from_yaml(err);
    let (key, value) = key_and_value(text, p.pos);
    if let Some(m) = type_message(&p.message, key, value) {
        p.message = m;
    }
    p
}

/// "count: expected a whole number ≥ 1, got 1.5" for serde's "invalid u32" on the value
/// `value` of field `key`; None for a message that is not about a value's type.
#[must_use]
pub fn type_message(message: &str, key: Option<&str>, value: Option<&str>) -> Option<String> {
    let expected = expectation(message)?;
    let at_least = match key {
        Some("count" | "maxReconcileRate") => " ≥ 1",
        _ if expected == "a whole number" => " ≥ 0",
        _ => "",
    };
    let got = value.map(|v| format!(", got {v}")).unwrap_or_default();
    Some(match key {
        Some(k) => format!("{k}: expected {expected}{at_least}{got}"),
        None => format!("expected {expected}{at_least}{got}"),
    })
}

/// What a serde type message asks for, in words.
fn expectation(message: &str) -> Option<&'static str> {
    match message.trim() {
        "invalid u8" | "invalid u16" | "invalid u32" | "invalid u64" | "invalid usize" => {
            Some("a whole number")
        }
        "invalid i32" | "invalid i64" => Some("a whole number"),
        "invalid f32" | "invalid f64" => Some("a number"),
        "invalid bool" | "invalid boolean" => Some("true or false"),
        _ => None,
    }
}

/// The key whose value starts at `pos` in `text`, and the value's text: `count` and `1.5`
/// for `{name: b, count: 1.5}` or `count: 1.5`.
fn key_and_value(text: &str, pos: Pos) -> (Option<&str>, Option<&str>) {
    let Some(line) = text.lines().nth(pos.line.saturating_sub(1) as usize) else {
        return (None, None);
    };
    let split = line
        .char_indices()
        .nth(pos.column.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i);
    let (before, after) = line.split_at(split);
    let value = after
        .split([',', '}', ']', '#'])
        .next()
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let key = before.trim_end().strip_suffix(':').and_then(|k| {
        // The key starts after the last character that cannot be in one; that character may
        // be several bytes long.
        let start = k
            .char_indices()
            .rev()
            .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        Some(&k[start..]).filter(|k| !k.is_empty())
    });
    (key, value)
}

/// A first-stage (serde-saphyr) error as a problem: its location and its message without the
/// location suffix serde-saphyr appends.
#[must_use]
pub fn from_yaml(err: &serde_saphyr::Error) -> Problem {
    let pos = err.location().map(|l| Pos::of(&l)).unwrap_or(Pos {
        line: 1,
        column: 1,
        source: 0,
    });
    let text = err.without_snippet().to_string();
    let suffix = format!(" at line {}, column {}", pos.line, pos.column);
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    Problem::new(pos, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_after_a_multibyte_character_is_cut_on_a_character_boundary() {
        // Found by the scenario property test: the byte after a three-byte character such as '€' is not a
        // character boundary.
        let text = "  - {check: timeToReady, &$`\u{20ac}phase: x}";
        let through_colon = text.find("phase:").unwrap() + "phase:".len();
        let column = u32::try_from(text[..through_colon].chars().count()).unwrap() + 1;
        let (key, _) = key_and_value(
            text,
            Pos {
                line: 1,
                column,
                source: 0,
            },
        );
        assert_eq!(key, Some("phase"));
    }

    #[test]
    fn a_line_break_or_tab_from_the_scenario_is_escaped_and_a_continuation_line_is_kept() {
        let err = ScenarioError::Invalid {
            file: "s.yaml".into(),
            sets: Vec::new(),
            problems: vec![
                Problem::new(
                    Pos {
                        line: 2,
                        column: 3,
                        source: 0,
                    },
                    "unknown kind a\nb\tc, expected one of x\n  y",
                ),
                Problem::new(
                    Pos {
                        line: 4,
                        column: 1,
                        source: 0,
                    },
                    "second",
                ),
            ],
        };
        assert_eq!(
            err.to_string(),
            "s.yaml:2:3: unknown kind a\\nb\\tc, expected one of x\n  y\ns.yaml:4:1: second"
        );
    }
}
