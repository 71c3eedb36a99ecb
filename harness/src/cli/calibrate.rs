//! `harness calibrate`: runs a scenario's calibration sample and writes the calibration file.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use harness::calibrate::{CalibrationMeta, SampleOptions, calibration_yaml, sample, summary};
use harness::scenario::{self, TimeMode};

use super::Outcome;
use super::execute::{execute, init_tracing, write};
use super::stdout::outln;
use super::target::{ClusterArgs, Where};

/// The options of `harness calibrate`.
pub struct CalibrateArgs {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The output directory.
    pub out: Option<PathBuf>,
    /// `--set`s.
    pub sets: Vec<scenario::Set>,
    /// How to sample.
    pub sample: SampleOptions,
    /// `--virtual-time`.
    pub virtual_time: bool,
    /// `--process`.
    pub process: bool,
    /// Where a cluster run finds its cluster.
    pub cluster: ClusterArgs,
}

/// Runs the calibration: the sample, the file, the summary.
pub fn calibrate_cmd(a: CalibrateArgs) -> Result<Outcome> {
    init_tracing();
    if a.sample.per_group == 0 || a.sample.polls == 0 {
        bail!("--sample and --polls must be at least 1");
    }
    if !(a.sample.rate.is_finite() && a.sample.rate > 0.0) {
        bail!(
            "--rate must be a number of resources per second > 0, got {}",
            a.sample.rate
        );
    }
    let mut s = scenario::load_for_calibration(&a.scenario, &a.sets)?;
    if a.virtual_time {
        s.time = TimeMode::Virtual;
    }
    let target = a.cluster.target(&s, a.virtual_time, a.process)?;
    let target_name = match &target {
        Where::Embedded => "embedded",
        Where::Process(_) => "process",
        Where::Cluster(_) => "cluster",
    };
    let c = sample(&s, a.sample);
    let out = a
        .out
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-calibration", c.name)));
    let (r, interrupted) = execute(&c, target, &out, false)?;
    // A sample that stopped early measured some paths on some resources only: no file.
    if let Some(stopped) = &r.stopped {
        eprintln!(
            "the calibration sample did not finish ({}): no calibration written",
            stopped.headline()
        );
        if let Some(waiting) = &stopped.waiting {
            for line in waiting.lines(&stopped.phase) {
                eprintln!("  {line}");
            }
        }
        eprintln!(
            "reports: {} (result.json has the sample's calls as far as it went)",
            out.display()
        );
        return Ok(match interrupted {
            Some(signal) => Outcome::Interrupted(signal),
            None => Outcome::Fail,
        });
    }
    let Some(per) = r.calls_per_reconcile.as_ref() else {
        bail!(
            "no calls per reconcile could be measured: calibration dates the provider's status writes in mock-apiserver's request journal, and {} ({}) offers none; calibrate against mock-apiserver (the embedded stack, --process, or a cluster whose API server is a mock-apiserver)",
            out.join("result.json").display(),
            r.run.api_requests_measured_by
        );
    };
    let meta = CalibrationMeta {
        scenario: s.file.clone(),
        target: target_name.to_owned(),
        sample: a.sample.per_group,
        polls: a.sample.polls,
        taken_at: r.run.started_at.clone().unwrap_or_default(),
    };
    let file = out.join("calibration.yaml");
    write(&out, "calibration.yaml", calibration_yaml(&c, per, &meta))?;
    for line in summary(per) {
        outln!("{line}")?;
    }
    outln!(
        "{} calls attributed to reconciles, {} in reconciles still open at the end, {} to none",
        per.attributed,
        per.open,
        per.unattributed
    )?;
    outln!(
        "calibration: {} (name it in the profile: `calibration: {}`)",
        file.display(),
        relative_hint(&file)
    )?;
    outln!("reports: {}", out.display())?;
    Ok(match interrupted {
        Some(signal) => Outcome::Interrupted(signal),
        None if r.partial => Outcome::Fail,
        None => Outcome::Pass,
    })
}

/// The file's name, as a profile beside it would name it.
fn relative_hint(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
