//! The commands that read a result.json: `compare` and `report`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use harness::result::{RESULT_VERSION, RunResult};
use harness::{compare, report};

use super::Outcome;
use super::execute::write_reports;
use super::stdout::out;

fn read_result(path: &Path) -> Result<RunResult> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read result {}", path.display()))?;
    let r = RunResult::from_json(&text)
        .with_context(|| format!("{} is not a harness result", path.display()))?;
    if r.version != RESULT_VERSION {
        bail!(
            "{} has result version {}, this harness reads version {RESULT_VERSION}",
            path.display(),
            r.version
        );
    }
    Ok(r)
}

pub(super) fn compare_cmd(old: &Path, new: &Path, pct: f64) -> Result<Outcome> {
    if pct.is_nan() || pct < 0.0 {
        bail!("--max-regression must be a percentage ≥ 0, got {pct}");
    }
    let c = compare::compare(&read_result(old)?, &read_result(new)?, pct);
    out!("{}", compare::render(&c))?;
    Ok(if !c.comparable() {
        Outcome::NotComparable
    } else if c.regressions().next().is_some() {
        Outcome::Fail
    } else {
        Outcome::Pass
    })
}

pub(super) fn report_cmd(path: &Path, out: &Path) -> Result<Outcome> {
    let r = read_result(path)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    write_reports(out, &r)?;
    out!("{}", report::assertion_table(&r))?;
    Ok(if r.passed() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}
