//! Scenario errors: every one names the file, the line and column, and what was expected.

use std::fmt;

/// A place in a scenario file (1-based line and column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl Pos {
    /// From a serde-saphyr location.
    #[must_use]
    pub fn of(loc: &serde_saphyr::Location) -> Pos {
        Pos {
            line: loc.line() as u32,
            column: loc.column() as u32,
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
    #[error("{}", Listing { file, problems })]
    Invalid {
        /// The path as given.
        file: String,
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
    problems: &'a [Problem],
}

impl fmt::Display for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, p.pos.line, p.pos.column, p.message
            )?;
        }
        Ok(())
    }
}

/// A first-stage (serde-saphyr) error as a problem: its location and its message without the
/// location suffix serde-saphyr appends.
#[must_use]
pub fn from_yaml(err: &serde_saphyr::Error) -> Problem {
    let pos = err
        .location()
        .map(|l| Pos::of(&l))
        .unwrap_or(Pos { line: 1, column: 1 });
    let text = err.without_snippet().to_string();
    let suffix = format!(" at line {}, column {}", pos.line, pos.column);
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    Problem::new(pos, message)
}
