//! The scenario file's `sweep` section: the axes, SLOs, budgets and cost figure a
//! `harness sweep` of it uses when the command line does not give them, in the command
//! line's own syntax.

pub use crate::scenario::raw::sweep::RawSweep;

use super::constraint::{Budget, Constraint, Slo};
use super::figure::Figure;
use super::grid::{Axis, Grid};

/// A problem of a scenario's `sweep` section.
#[derive(Debug, thiserror::Error)]
#[error("{file}: sweep.{key}: {message}")]
pub struct SpecError {
    file: String,
    key: String,
    message: String,
}

/// The section as the sweep uses it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec {
    /// Its axes.
    pub grid: Grid,
    /// Its SLOs.
    pub slo: Vec<Constraint>,
    /// Its budgets.
    pub budget: Vec<Constraint>,
    /// Its cost figure.
    pub cost: Option<Figure>,
}

/// The `sweep` section of scenario `text` (of `file`), empty when it has none. The
/// scenario's own checks are the scenario parser's: this reads the one section.
///
/// # Errors
/// A [`SpecError`] naming the entry and what was expected.
pub fn read(text: &str, file: &str) -> Result<Spec, SpecError> {
    let fail = |key: String, message: String| SpecError {
        file: file.to_owned(),
        key,
        message,
    };
    let raw = crate::scenario::raw::sweep::section(text)
        .map_err(|e| fail(String::new(), e))?
        .unwrap_or_default();
    let axes = raw
        .vary
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.parse::<Axis>()
                .map_err(|e| fail(format!("vary[{i}]"), e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let grid = Grid::new(axes).map_err(|e| fail("vary".into(), e.to_string()))?;
    let tag = |mut c: Constraint| {
        c.from = format!("{file} sweep section");
        c
    };
    let slo = raw
        .slo
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.parse::<Slo>()
                .map(|Slo(c)| tag(c))
                .map_err(|e| fail(format!("slo[{i}]"), e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let budget = raw
        .budget
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.parse::<Budget>()
                .map(|Budget(c)| tag(c))
                .map_err(|e| fail(format!("budget[{i}]"), e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let cost = raw
        .cost
        .as_deref()
        .map(str::parse::<Figure>)
        .transpose()
        .map_err(|e| fail("cost".into(), e.to_string()))?;
    Ok(Spec {
        grid,
        slo,
        budget,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "apiVersion: harness/v1\nname: t\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";

    #[test]
    fn the_section_reads_as_the_flags_do_and_the_scenario_parser_accepts_it() {
        let text = format!(
            "{HEAD}sweep:\n  vary: [\"provider.maxReconcileRate=5,10\"]\n  slo: [\"timeToReady.p99<=5m\"]\n  budget: [\"cloudCalls.10s<=400\"]\n"
        );
        let spec = read(&text, "t.yaml").unwrap();
        assert_eq!(spec.grid.len(), 2);
        assert_eq!(spec.slo[0].to_string(), "timeToReady.p99<=5m");
        assert_eq!(spec.budget[0].from, "t.yaml sweep section");
        assert!(crate::scenario::parse(&text, "t.yaml").is_ok());
        assert_eq!(read(HEAD, "t.yaml").unwrap(), Spec::default());
    }

    #[test]
    fn a_bad_entry_is_named_with_what_was_expected() {
        let text = format!("{HEAD}sweep:\n  vary: [\"seed=1\", \"seed\"]\n");
        let e = read(&text, "t.yaml").unwrap_err().to_string();
        assert!(
            e.starts_with("t.yaml: sweep.vary[1]: --vary \"seed\""),
            "{e}"
        );
        let text = format!("{HEAD}sweep:\n  budget: [\"timeToReady.p99<=5m\"]\n");
        let e = read(&text, "t.yaml").unwrap_err().to_string();
        assert!(
            e.contains("sweep.budget[0]") && e.contains("give it with --slo"),
            "{e}"
        );
    }
}
