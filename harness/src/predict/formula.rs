//! A prediction: the formula as text, its inputs, and the value. Reports print all three.

use serde::{Deserialize, Serialize};

/// How a predicted value is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Meaning {
    /// A hard upper bound: an observation above it is a bug (or an unpredicted mechanism).
    UpperBound,
    /// An expected value (mean, fluid or mean-field).
    Expected,
    /// A statistical tolerance: above it is an anomaly at level α.
    Tolerance,
    /// A lower bound that nothing can beat (physical drain limit).
    LowerBound,
    /// A yes/no condition (1 holds, 0 does not).
    Condition,
}

/// One named input of a formula.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Symbol as in docs/budget.md (R, B, W, L̄ …).
    pub name: String,
    /// Value.
    #[serde(with = "crate::float")]
    pub value: f64,
}

/// A predicted quantity with its derivation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// Stable key: `phase/quantity` (or `run/quantity`), for lookups and compare.
    pub id: String,
    /// What it is, in words.
    pub what: String,
    /// The phase it is about, if any.
    pub phase: Option<String>,
    /// The cloud account it is about, if any.
    pub account: Option<String>,
    /// The formula, in docs/budget.md's notation.
    pub formula: String,
    /// The inputs, in formula order.
    pub inputs: Vec<Input>,
    /// The predicted value (`f64::INFINITY` for "no bound").
    #[serde(with = "crate::float")]
    pub value: f64,
    /// Unit (`calls`, `requests`, `s`, `/s`, `resources`, …).
    pub unit: String,
    /// How to read the value.
    pub meaning: Meaning,
    /// docs/budget.md's tag and section: `[P] §2.1`.
    pub source: String,
    /// Anything a reader must know (the mechanism of an excess, an assumption).
    pub note: Option<String>,
    /// The checks a condition is about (an UNMODELED condition names the checks whose
    /// formulas it takes out of the model's cover).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

impl Prediction {
    /// A prediction with no inputs yet.
    pub fn new(id: impl Into<String>, what: impl Into<String>, value: f64, unit: &str) -> Self {
        Prediction {
            id: id.into(),
            what: what.into(),
            phase: None,
            account: None,
            formula: String::new(),
            inputs: Vec::new(),
            value,
            unit: unit.to_owned(),
            meaning: Meaning::Expected,
            source: String::new(),
            note: None,
            checks: Vec::new(),
        }
    }

    /// About these checks.
    #[must_use]
    pub fn checks(mut self, checks: &[&str]) -> Self {
        self.checks = checks.iter().map(|c| (*c).to_owned()).collect();
        self
    }

    /// With the formula text.
    #[must_use]
    pub fn formula(mut self, f: impl Into<String>) -> Self {
        self.formula = f.into();
        self
    }

    /// With one more input.
    #[must_use]
    pub fn input(mut self, name: &str, value: f64) -> Self {
        self.inputs.push(Input {
            name: name.to_owned(),
            value,
        });
        self
    }

    /// With a meaning.
    #[must_use]
    pub fn meaning(mut self, m: Meaning) -> Self {
        self.meaning = m;
        self
    }

    /// With its source in docs/budget.md.
    #[must_use]
    pub fn source(mut self, s: &str) -> Self {
        self.source = s.to_owned();
        self
    }

    /// With a note.
    #[must_use]
    pub fn note(mut self, n: impl Into<String>) -> Self {
        self.note = Some(n.into());
        self
    }

    /// About a phase.
    #[must_use]
    pub fn phase(mut self, p: Option<&str>) -> Self {
        self.phase = p.map(str::to_owned);
        self
    }

    /// About an account.
    #[must_use]
    pub fn account(mut self, a: Option<&str>) -> Self {
        self.account = a.map(str::to_owned);
        self
    }

    /// The value of an input by name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<f64> {
        self.inputs.iter().find(|i| i.name == name).map(|i| i.value)
    }

    /// The inputs as `R=10, W=10s`-style text.
    #[must_use]
    pub fn inputs_text(&self) -> String {
        self.inputs
            .iter()
            .map(|i| format!("{}={}", i.name, fmt_num(i.value)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A number as reports print it: integers without decimals, others with up to 3 significant
/// decimals, infinity as `∞`.
#[must_use]
pub fn fmt_num(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "∞".into() } else { "-∞".into() };
    }
    if v.is_nan() {
        return "n/a".into();
    }
    if (v - v.round()).abs() < 1e-9 && v.abs() < 1e15 {
        return format!("{}", v.round() as i64);
    }
    let s = if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_without_noise() {
        assert_eq!(fmt_num(200.0), "200");
        assert_eq!(fmt_num(16.650_000_1), "16.65");
        assert_eq!(fmt_num(0.05), "0.05");
        assert_eq!(fmt_num(f64::INFINITY), "∞");
        assert_eq!(fmt_num(1234.56), "1234.6");
    }

    #[test]
    fn inputs_are_listed_in_order() {
        let p = Prediction::new("x", "y", 1.0, "s")
            .input("R", 10.0)
            .input("W", 0.5);
        assert_eq!(p.inputs_text(), "R=10, W=0.5");
        assert_eq!(p.get("W"), Some(0.5));
    }
}
