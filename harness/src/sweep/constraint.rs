//! `--slo 'timeToReady.p99<=5m'` and `--budget 'cloudCalls.10s<=400'`: a figure, a
//! comparison and a limit, which a point's measured figure meets or not.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::figure::{Figure, Side};
use crate::predict::fmt_num;

/// How a figure is compared with its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// `<=`
    #[serde(rename = "<=")]
    AtMost,
    /// `<`
    #[serde(rename = "<")]
    Below,
    /// `>=`
    #[serde(rename = ">=")]
    AtLeast,
    /// `>`
    #[serde(rename = ">")]
    Above,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::AtMost => "<=",
            Op::Below => "<",
            Op::AtLeast => ">=",
            Op::Above => ">",
        }
    }

    /// Whether `v` meets the limit.
    #[must_use]
    pub fn holds(self, v: f64, limit: f64) -> bool {
        match self {
            Op::AtMost => v <= limit,
            Op::Below => v < limit,
            Op::AtLeast => v >= limit,
            Op::Above => v > limit,
        }
    }
}

/// A constraint on one figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    /// The figure.
    pub figure: Figure,
    /// The comparison.
    pub op: Op,
    /// The limit, in the figure's unit (seconds for times).
    pub limit: f64,
    /// Where it came from: `--slo`, `--budget`, the scenario's `sweep` section, or an
    /// assertion's name.
    pub from: String,
}

/// A constraint that could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{given:?}: {problem}, expected FIGURE<=LIMIT such as {example}")]
pub struct ConstraintSyntaxError {
    given: String,
    problem: String,
    example: &'static str,
}

impl Constraint {
    /// Reads `FIGURE OP LIMIT` (`OP` one of `<=`, `<`, `>=`, `>`), the limit a number, or
    /// a Go duration for a time; `example` is what the error shows.
    ///
    /// # Errors
    /// [`ConstraintSyntaxError`] saying what was wrong and what was expected.
    pub fn parse(s: &str, example: &'static str) -> Result<Constraint, ConstraintSyntaxError> {
        let fail = |problem: String| ConstraintSyntaxError {
            given: s.to_owned(),
            problem,
            example,
        };
        let (at, op) = ["<=", ">=", "<", ">"]
            .iter()
            .find_map(|op| s.find(op).map(|at| (at, *op)))
            .ok_or_else(|| fail("no comparison (<=, <, >=, >)".into()))?;
        let op = match op {
            "<=" => Op::AtMost,
            ">=" => Op::AtLeast,
            "<" => Op::Below,
            _ => Op::Above,
        };
        let figure: Figure = s[..at].trim().parse().map_err(|e| fail(format!("{e}")))?;
        let text = s[at + op.text().len()..].trim();
        let limit = if figure.unit() == "s" {
            limiter::go::GoDuration::parse(text)
                .map(|d| d.to_std().as_secs_f64())
                .map_err(|_| {
                    fail(format!(
                        "{figure} is a time, and {text:?} is no duration such as 5m or 90s"
                    ))
                })?
        } else {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    fail(format!(
                        "{figure} counts {}, and {text:?} is no number",
                        figure.unit()
                    ))
                })?
        };
        Ok(Constraint {
            figure,
            op,
            limit,
            from: String::new(),
        })
    }

    /// Whether it is an SLO (on a benefit) or a budget (on a cost).
    #[must_use]
    pub fn side(&self) -> Side {
        self.figure.side()
    }

    /// Whether `measured` meets it; a figure that was not measured does not.
    #[must_use]
    pub fn holds(&self, measured: Option<f64>) -> bool {
        measured.is_some_and(|v| self.op.holds(v, self.limit))
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = if self.figure.unit() == "s" {
            super::figure::seconds(self.limit)
        } else {
            fmt_num(self.limit)
        };
        write!(f, "{}{}{limit}", self.figure, self.op.text())
    }
}

/// `--slo`: a constraint on a benefit.
#[derive(Clone, Debug, PartialEq)]
pub struct Slo(pub Constraint);

/// `--budget`: a constraint on a cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget(pub Constraint);

impl FromStr for Slo {
    type Err = ConstraintSyntaxError;

    fn from_str(s: &str) -> Result<Slo, ConstraintSyntaxError> {
        const EX: &str = "timeToReady.p99<=5m";
        let c = Constraint::parse(s, EX)?;
        if c.side() != Side::Benefit {
            return Err(ConstraintSyntaxError {
                given: s.to_owned(),
                problem: format!("{} is a cost: give it with --budget", c.figure),
                example: EX,
            });
        }
        Ok(Slo(Constraint {
            from: "--slo".into(),
            ..c
        }))
    }
}

impl FromStr for Budget {
    type Err = ConstraintSyntaxError;

    fn from_str(s: &str) -> Result<Budget, ConstraintSyntaxError> {
        const EX: &str = "cloudCalls.10s<=400";
        let c = Constraint::parse(s, EX)?;
        if c.side() != Side::Cost {
            return Err(ConstraintSyntaxError {
                given: s.to_owned(),
                problem: format!("{} is a benefit: give it with --slo", c.figure),
                example: EX,
            });
        }
        Ok(Budget(Constraint {
            from: "--budget".into(),
            ..c
        }))
    }
}

/// The constraints a scenario's own assertions set, for a sweep given none: a
/// `cloudCalls` assertion's explicit `max` over the whole run (a budget), a `throttles`
/// assertion's `max` (a budget), and a `timeToReady` assertion's fixed limit on the first
/// create phase at p50, p90 or p99 (an SLO).
#[must_use]
pub fn from_assertions(s: &crate::scenario::Scenario) -> Vec<Constraint> {
    use crate::scenario::{Action, Check, TtrLimit};
    let create = s
        .phases
        .iter()
        .position(|p| matches!(p.action, Action::Create { .. }));
    let mut out = Vec::new();
    for a in s.assertions.iter().filter(|a| a.account.is_none()) {
        let (figure, limit) = match (&a.check, a.phase) {
            (
                Check::CloudCalls {
                    window,
                    max: Some(max),
                },
                None,
            ) => (
                Figure::CloudCalls {
                    window_s: window.as_secs_f64(),
                },
                *max,
            ),
            (Check::Throttles { max }, None) => (Figure::Throttles, *max as f64),
            (
                Check::TimeToReady {
                    quantile,
                    limit: TtrLimit::Fixed(d),
                },
                phase,
            ) if [0.5, 0.9, 0.99].contains(quantile) && (phase.is_none() || phase == create) => (
                Figure::TimeToReady {
                    quantile: *quantile,
                },
                d.as_secs_f64(),
            ),
            _ => continue,
        };
        out.push(Constraint {
            figure,
            op: Op::AtMost,
            limit,
            from: format!("assertion {}", a.name),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_slo_reads_a_duration_and_a_budget_a_number() {
        let Slo(slo) = "timeToReady.p99 <= 5m".parse().unwrap();
        assert_eq!(slo.figure, Figure::TimeToReady { quantile: 0.99 });
        assert_eq!((slo.op, slo.limit), (Op::AtMost, 300.0));
        assert_eq!(slo.to_string(), "timeToReady.p99<=5m");
        let Budget(b) = "cloudCalls.10s<400".parse().unwrap();
        assert_eq!(
            (b.figure, b.op, b.limit),
            (Figure::CloudCalls { window_s: 10.0 }, Op::Below, 400.0)
        );
        assert!(b.holds(Some(399.0)));
        assert!(!b.holds(Some(400.0)));
        assert!(
            !b.holds(None),
            "what was not measured does not meet a limit"
        );
    }

    #[test]
    fn a_bad_constraint_says_what_was_expected() {
        for (given, problem) in [
            ("timeToReady.p99=5m", "no comparison"),
            ("timeToReady.p95<=5m", "unknown figure"),
            ("timeToReady.p99<=5", "no duration"),
            ("cloudCalls.10s<=5m", "is no number"),
        ] {
            let e = match given.parse::<Slo>() {
                Err(e) => e.to_string(),
                Ok(_) => given.parse::<Budget>().unwrap_err().to_string(),
            };
            assert!(e.contains(problem), "{given}: {e}");
            assert!(e.contains("expected FIGURE<=LIMIT"), "{e}");
        }
        let e = "cloudCalls.10s<=400"
            .parse::<Slo>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is a cost: give it with --budget"), "{e}");
        let e = "drainTime<=5m".parse::<Budget>().unwrap_err().to_string();
        assert!(e.contains("is a benefit: give it with --slo"), "{e}");
    }

    #[test]
    fn a_scenarios_explicit_limits_become_its_slos_and_budgets() {
        let yaml = "apiVersion: harness/v1\nname: t\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 1m}\nassertions:\n  - {check: cloudCalls, window: 10s, max: 400}\n  - {check: cloudCalls, window: 1s}\n  - {check: timeToReady, phase: create, quantile: 0.99, maxDuration: 5m}\n  - {check: throttles}\n";
        let s = crate::scenario::parse(yaml, "t.yaml").unwrap();
        let texts: Vec<String> = from_assertions(&s)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            texts,
            ["cloudCalls.10s<=400", "timeToReady.p99<=5m", "throttles<=0"]
        );
    }
}
