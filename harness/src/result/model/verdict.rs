//! One assertion's verdict, its outcome and the kind of limit it applied.

use serde::{Deserialize, Serialize};

use crate::predict::Prediction;

/// How an assertion came out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// The observation is within the limit.
    #[default]
    Pass,
    /// The observation is past the limit.
    Fail,
    /// The observation is within the limit, but the phase it is about did not complete (or
    /// never ran), so it does not count as a pass.
    Incomplete,
    /// The check's formula does not cover the scenario (an interaction the model does not
    /// predict): the note gives the reason and the measured figure. Not a failure, unless
    /// the run is `--strict`.
    Unmodeled,
    /// What the check counts was not measured well enough to judge (API requests from a
    /// source that may miss some of the provider's or count other clients'): the note
    /// says why. Not a failure, unless the run is `--strict`.
    Unmeasured,
}

impl Outcome {
    /// `PASS`, `FAIL` or `INCOMPLETE`.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::Fail => "FAIL",
            Outcome::Incomplete => "INCOMPLETE",
            Outcome::Unmodeled => "UNMODELED",
            Outcome::Unmeasured => "UNMEASURED",
        }
    }
}

/// One assertion's outcome: formula, inputs, predicted, observed, margin, verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Assertion name.
    pub name: String,
    /// The check (`cloudCalls`, …).
    pub check: String,
    /// Phase, if restricted.
    pub phase: Option<String>,
    /// Formula of the prediction.
    pub formula: String,
    /// Inputs, as `R=10, W=10`.
    pub inputs: String,
    /// The predicted value (NaN when there is none).
    #[serde(with = "crate::float")]
    pub predicted: f64,
    /// The limit applied (the prediction, an explicit max/min, or the prediction plus
    /// tolerance).
    #[serde(with = "crate::float")]
    pub limit: f64,
    /// The observed value.
    #[serde(with = "crate::float")]
    pub observed: f64,
    /// Whether the limit is an upper (`≤`) or lower (`≥`) one.
    pub upper: bool,
    /// Headroom: limit − observed for an upper limit, observed − limit for a lower one.
    #[serde(with = "crate::float")]
    pub margin: f64,
    /// Passed.
    pub pass: bool,
    /// Pass, fail, or incomplete (within its limit, but its phase did not complete).
    #[serde(default)]
    pub outcome: Outcome,
    /// What a reader must know.
    pub note: Option<String>,
    /// W (s) of a windowed count of every cloud call (`cloudCalls`, `steadyRate` with no
    /// `account`): what the report's busiest-windows chart marks the limit on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_window_s: Option<f64>,
    /// What kind of limit `limit` is, from the tag of the formula behind it
    /// (docs/budget.md): a hard bound, a derived one, an approximation held to its stated
    /// tolerance, or a limit the scenario gave.
    #[serde(default)]
    pub kind: LimitKind,
}

impl Verdict {
    /// A verdict of `observed` against the upper `limit` (within it when `observed ≤
    /// limit`), named after assertion `name` and check `check`: a limit the scenario gave,
    /// no phase, formula, inputs, prediction (NaN) or note yet. A check fills in what it
    /// knows with struct update syntax.
    #[must_use]
    pub fn at_most(name: &str, check: &str, limit: f64, observed: f64) -> Verdict {
        Verdict {
            name: name.to_owned(),
            check: check.to_owned(),
            phase: None,
            formula: String::new(),
            inputs: String::new(),
            predicted: f64::NAN,
            limit,
            observed,
            upper: true,
            margin: limit - observed,
            pass: observed <= limit,
            outcome: Outcome::default(),
            note: None,
            calls_window_s: None,
            kind: LimitKind::Given,
        }
    }

    /// Adds `line` to the end of the note, after a `; ` when there is one already.
    pub fn append_note(&mut self, line: String) {
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}; {line}"),
            None => line,
        });
    }
}

/// What kind of limit a verdict applies, as docs/budget.md's tags say of the formula behind
/// it. `harness selfcheck` counts verdicts by it: a hard bound must never be exceeded, an
/// approximation is held to its stated tolerance.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum LimitKind {
    /// Tagged \[P\]: proved; a measurement past it is a bug in the provider or in the proof.
    Hard,
    /// Tagged \[D\] and neither \[P\] nor \[A\], an upper or lower bound: exact under the
    /// assumptions stated with it; past it, one of them did not hold.
    Derived,
    /// Tagged \[A\], or an expected value or statistical tolerance (a limit exceeded at a
    /// stated level α, or a prediction plus a stated tolerance).
    Approximation,
    /// The scenario's own limit (`max`, `min`, `maxDuration`, an audit's count): no formula.
    #[default]
    Given,
}

impl LimitKind {
    /// The kind of a limit computed from a prediction with this `source` tag
    /// (`[D][A][S] §3.4, §3.5`) and meaning.
    #[must_use]
    pub fn of(source: &str, meaning: crate::predict::Meaning) -> Self {
        use crate::predict::Meaning;
        if source.contains("[P]") {
            LimitKind::Hard
        } else if source.contains("[A]")
            || matches!(meaning, Meaning::Tolerance | Meaning::Expected)
        {
            LimitKind::Approximation
        } else if source.contains("[D]") {
            LimitKind::Derived
        } else {
            LimitKind::Given
        }
    }

    /// The kind of the limit of `prediction`.
    #[must_use]
    pub fn of_prediction(prediction: &Prediction) -> Self {
        Self::of(&prediction.source, prediction.meaning)
    }

    /// `hard`, `derived`, `approximation`, `given`.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            LimitKind::Hard => "hard",
            LimitKind::Derived => "derived",
            LimitKind::Approximation => "approximation",
            LimitKind::Given => "given",
        }
    }
}
