//! The commands that read a scenario without running it: `validate`, `predict`,
//! `provider-args` and `core-args`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use harness::scenario;
use harness::{predict, report, run};

use super::Outcome;
use super::stdout::{out, outln};

/// The scenario at `path` with `--set`s applied.
pub(super) fn load_with(
    path: &Path,
    sets: &[scenario::Set],
) -> Result<harness::scenario::Scenario> {
    Ok(scenario::load_with(path, sets)?)
}

pub(super) fn provider_args(path: &Path, sets: &[scenario::Set], json: bool) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    // Without a profile's family, this workspace's provider, whose flags name the settings.
    let dialect = s.profile.as_ref().and_then(|p| p.flags);
    let written = scenario::flags::write(
        dialect.unwrap_or(scenario::flags::Dialect::Loadtest),
        &s.settings,
    );
    let flags: Vec<String> = written
        .into_iter()
        .map(|(flag, value)| format!("--{flag}={value}"))
        .collect();
    if json {
        outln!("{}", serde_json::to_string(&flags)?)?;
    } else {
        for f in flags {
            outln!("{f}")?;
        }
    }
    Ok(Outcome::Pass)
}

/// Where `harness core-args --kubeconfig` finds core's Deployment: the kubeconfig, its
/// context, the Deployment and its container.
pub(super) type CoreCluster = (PathBuf, Option<String>, (String, String), Option<String>);

/// `harness core-args`: core's flags for the scenario's `core` section, or the check of
/// core's Deployment against them.
pub(super) fn core_args(
    path: &Path,
    sets: &[scenario::Set],
    json: bool,
    cluster: Option<CoreCluster>,
) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    let want = &s.composites.core;
    let Some((kubeconfig, context, (ns, name), container)) = cluster else {
        let flags = scenario::core_flags::args(want);
        if json {
            outln!("{}", serde_json::to_string(&flags)?)?;
        } else {
            for f in flags {
                outln!("{f}")?;
            }
        }
        return Ok(Outcome::Pass);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let note = runtime.block_on(run::target::cluster_core::read_and_check_core_deployment(
        &kubeconfig,
        context,
        (&ns, &name),
        container.as_deref(),
        want,
    ))?;
    outln!("{note}")?;
    Ok(Outcome::Pass)
}

pub(super) fn validate(path: &Path, sets: &[scenario::Set]) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    for w in &s.warnings {
        eprintln!("warning: {}: {}", s.place(w.pos), w.message);
    }
    let plan = predict::plan(&s);
    let xr_groups = &s.composites.groups;
    let xrs = if xr_groups.is_empty() {
        String::new()
    } else {
        format!(
            " and {} in {}",
            counted(xr_groups.iter().map(|g| u64::from(g.count)).sum(), "XR"),
            counted(xr_groups.len() as u64, "XR group")
        )
    };
    outln!(
        "{}: ok: scenario {} with {} in {}{xrs}, {}, {}; expected duration {}",
        s.file,
        s.name,
        counted(s.total_resources(), "resource"),
        counted(s.groups.len() as u64, "group"),
        counted(s.phases.len() as u64, "phase"),
        counted(s.assertions.len() as u64, "assertion"),
        report::human_duration(plan.expected_duration(&s).total)
    )?;
    Ok(Outcome::Pass)
}

/// `1 group`, `2 groups`.
fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

pub(super) fn predict_cmd(path: &Path, sets: &[scenario::Set], json: bool) -> Result<Outcome> {
    let s = load_with(path, sets)?;
    let plan = predict::plan(&s);
    if json {
        let all: Vec<_> = plan.all().collect();
        outln!("{}", serde_json::to_string_pretty(&all)?)?;
    } else {
        out!("{}", report::plan_listing(&s, &plan))?;
    }
    Ok(Outcome::Pass)
}
