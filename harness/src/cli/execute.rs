//! `harness run`: the run of a scenario on its target, and the reports it writes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use harness::result::{RunResult, Signal};
use harness::scenario::{self, TimeMode};
use harness::{predict, report, run};

use super::Outcome;
use super::git;
use super::inspect::load_with;
use super::signals;
use super::stdout::{out, outln};
use super::target::{ClusterArgs, Where};

/// Installs the tracing subscriber for a run (`RUST_LOG`, default `warn`).
pub(super) fn init_tracing() {
    serve::log::init("warn");
}

pub(super) fn run_cmd(
    path: &Path,
    out: Option<PathBuf>,
    sets: &[scenario::Set],
    (virtual_time, process, strict): (bool, bool, bool),
    cluster: ClusterArgs,
) -> Result<Outcome> {
    init_tracing();
    let mut s = load_with(path, sets)?;
    if virtual_time {
        s.time = TimeMode::Virtual;
    }
    let target = cluster.target(&s, virtual_time, process)?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(&s.name));
    let (r, interrupted) = execute(&s, target, &out, strict)?;
    out!("{}", report::assertion_table(&r))?;
    outln!("reports: {}", out.display())?;
    Ok(match interrupted {
        Some(signal) => Outcome::Interrupted(signal),
        None if r.passed() => Outcome::Pass,
        None => Outcome::Fail,
    })
}

/// Runs `s` on `target` and writes result.json, junit.xml and report.html into `out`; the
/// result, and the signal that interrupted the run if one did.
pub(super) fn execute(
    s: &harness::scenario::Scenario,
    target: Where,
    out: &Path,
    strict: bool,
) -> Result<(RunResult, Option<Signal>)> {
    warn_if_used(out);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let progress = run::Progress::auto().virtual_time(s.time == TimeMode::Virtual);
    let on = match &target {
        Where::Embedded if s.time == TimeMode::Virtual => {
            "the embedded stack in virtual time".to_owned()
        }
        Where::Embedded => "the embedded stack".to_owned(),
        Where::Process(None) => {
            "the process target (the profile's provider on loopback)".to_owned()
        }
        Where::Process(Some(_)) => {
            "the process target (the profile's provider and Crossplane core on loopback)".to_owned()
        }
        Where::Cluster(c) => format!("the cluster of {}", c.kubeconfig.display()),
    };
    let plan = predict::plan(s);
    // The checkout as the run starts: a long run outlives commits made beside it.
    let commit = git::commit();
    progress.line(format_args!(
        "running {} ({}, {} phases, about {}) on {on}; reports go to {}",
        s.name,
        harness::report::what_it_creates(s),
        s.phases.len(),
        report::human_duration(plan.expected_duration(s).total),
        out.display()
    ));
    let output = run_on(s, target, out, &progress, signals::next)?;
    let mut r = output.result;
    if strict {
        r.make_strict();
    }
    r.run.commit = commit;
    write(out, "result.json", r.to_json()?)?;
    write_reports(out, &r)?;
    Ok((r, output.interrupted))
}

/// Runs `s` on `target` on a runtime of its own (virtual time on a paused clock) until its
/// phases are done or an `interrupt()` completes: the run path of `run`, which `selfcheck`
/// shares. `out` is where the process target writes the provider's logs.
pub(super) fn run_on<F: Future<Output = Signal> + Send + 'static>(
    s: &harness::scenario::Scenario,
    target: Where,
    out: &Path,
    progress: &run::Progress,
    mut interrupt: impl FnMut() -> F + Send + 'static,
) -> Result<run::RunOutput> {
    let on = match target {
        Where::Embedded => run::On::Embedded,
        Where::Process(core) => run::On::Process(run::ProcessOptions {
            out: out.to_path_buf(),
            core: core.map(|c| *c),
        }),
        Where::Cluster(options) => run::On::Cluster(options),
    };
    let interrupt = Box::new(move || Box::pin(interrupt()) as run::NextSignal);
    let runtime = run::time::runtime(s.time).context("cannot start the async runtime")?;
    let output = runtime.block_on(run::run_on(s, on, progress, interrupt))?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    Ok(output)
}

pub(super) fn write(dir: &Path, name: &str, text: String) -> Result<()> {
    let p = dir.join(name);
    std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
}

/// Writes junit.xml and report.html of `r` into `dir`.
pub(super) fn write_reports(dir: &Path, r: &RunResult) -> Result<()> {
    write(dir, "junit.xml", report::junit(r))?;
    write(dir, "report.html", report::html(r))
}

/// Warns when `out` holds the result of an earlier run, which this run replaces.
fn warn_if_used(out: &Path) {
    let earlier = out.join("result.json");
    let Ok(text) = std::fs::read_to_string(&earlier) else {
        return;
    };
    let when = RunResult::from_json(&text)
        .ok()
        .and_then(|r| r.run.started_at)
        .map_or_else(String::new, |t| format!(" (started {t})"));
    eprintln!(
        "warning: {} holds an earlier run's reports{when}; this run replaces them (--out DIR writes elsewhere)",
        out.display()
    );
}
