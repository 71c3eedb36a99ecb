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
    #[error("cannot read scenario {file}")]
    Read {
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
            write!(f, "{}: {}", p.pos.place(self.file, self.sets), p.message)?;
        }
        Ok(())
    }
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
