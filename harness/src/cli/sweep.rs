//! `harness sweep`: the grid's points run as child processes of this binary, each
//! `harness sweep … --point I` (the mode an Indexed Job's pod runs), then sweep.json,
//! sweep.txt and sweep.html from their results.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use harness::scenario;
use harness::sweep::{self, Axis, Budget, Figure, Slo, Sweep};

use super::Outcome;
use super::execute::{execute, init_tracing, write};
use super::stdout::{out, outln};
use super::sweep_job::{self, RemoteArgs};
use super::target::ClusterArgs;

/// The options of `harness sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The scenario file; its `sweep` section gives axes, SLOs, budgets and the cost the
    /// command line does not.
    scenario: PathBuf,
    /// An axis: a path `--set` accepts and its values, comma-separated
    /// (provider.maxReconcileRate=5,10,20,50,100; provider.pollInterval=1m,10m;
    /// provider.scopedBuckets=false,true; resources.NAME.count=100,1000). Repeatable: the
    /// points are the product of the axes, the first varying slowest. One of the same path
    /// as the file's `sweep.vary` replaces it.
    #[arg(long = "vary", value_name = "PATH=V1,V2,…")]
    vary: Vec<Axis>,
    /// Override a value of the scenario for every point, as for `run` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    sets: Vec<scenario::Set>,
    /// An SLO on a benefit the chosen point must meet, measured: timeToReady.p99<=5m
    /// (figures: timeToReady.p50/p90/p99, pollPeriod, driftDetection, drainTime; times as
    /// Go durations). Repeatable; replaces the file's `sweep.slo` [default: the file's,
    /// else the fixed limits of the scenario's timeToReady assertions].
    #[arg(long, value_name = "FIGURE<=LIMIT")]
    slo: Vec<Slo>,
    /// A budget on a cost the chosen point must keep, measured: cloudCalls.10s<=400
    /// (figures: cloudCalls.W, apiRequests.W, steadyCalls.perHour, throttles). Repeatable;
    /// replaces the file's `sweep.budget` [default: the file's, else the explicit `max`es
    /// of the scenario's run-wide cloudCalls and throttles assertions].
    #[arg(long, value_name = "FIGURE<=LIMIT")]
    budget: Vec<Budget>,
    /// The cost the chosen point is the cheapest by [default: the first budget's figure,
    /// else cloudCalls.10s].
    #[arg(long, value_name = "FIGURE")]
    cost: Option<Figure>,
    /// Where to write sweep.json, sweep.txt, sweep.html and points/NNN/ (each point's
    /// result.json, reports and log.txt) [default: out/SCENARIO-NAME-sweep].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Points run at once, each a process of its own [default: the machine's cores]; with
    /// --kubernetes-job, the Job's parallelism [default: every point].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Wall time one point may take: past it the point is ended and reported failed, the
    /// others run on; with --kubernetes-job, each pod's activeDeadlineSeconds [default: no
    /// limit].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Keep the scenario's time. Without it, the points of a scenario on the embedded
    /// stack run in virtual time (`run --virtual-time`).
    #[arg(long)]
    real_time: bool,
    /// Run only point INDEX of the grid (0-based) into OUT/points/NNN, as the sweep runs
    /// each of its points; exit as `run` does. An Indexed Job's pod has its completion
    /// index in JOB_COMPLETION_INDEX, which this reads when the flag is not given.
    #[arg(long, value_name = "INDEX", env = "JOB_COMPLETION_INDEX")]
    point: Option<usize>,
    /// Run nothing: read the points' results already in --out (points/NNN/result.json),
    /// or first download them from --results s3://…, and write the sweep's reports from
    /// them.
    #[arg(long)]
    collect: bool,
    #[command(flatten)]
    remote: RemoteArgs,
}

/// Runs `harness sweep`.
pub(super) fn sweep_cmd(a: SweepArgs) -> Result<Outcome> {
    init_tracing();
    let options = sweep::Options {
        vary: a.vary.clone(),
        sets: a.sets.clone(),
        slo: a.slo.iter().map(|Slo(c)| c.clone()).collect(),
        budget: a.budget.iter().map(|Budget(c)| c.clone()).collect(),
        cost: a.cost,
        real_time: a.real_time,
    };
    let sw = Sweep::prepare(&a.scenario, options)?;
    if a.remote.kubernetes_job {
        sweep_job::kubernetes_job(
            &sw,
            &a.remote,
            definition_args(&a)
                .into_iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect(),
            a.jobs,
            a.timeout,
            a.out.as_deref(),
        )?;
        return Ok(Outcome::Pass);
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-sweep", sw.name)));
    match (a.point, a.collect) {
        (Some(_), true) => anyhow::bail!(
            "--collect runs no point, and --point (or JOB_COMPLETION_INDEX) asks for one: give one of them"
        ),
        (Some(index), false) => return point(&sw, index, &out, &a.remote),
        (None, false) if a.remote.results.is_some() => anyhow::bail!(
            "--results is where points run apart leave their results: give it with --point (or JOB_COMPLETION_INDEX), --collect or --kubernetes-job"
        ),
        (None, _) => {}
    }
    let missing = match (&a.remote.results, a.collect) {
        (Some(url), true) => sweep_job::download(&a.remote, url, sw.grid.len(), &out)?,
        _ => Default::default(),
    };
    let mut wall_s = None;
    if !a.collect {
        let exe =
            std::env::current_exe().context("cannot find the harness binary to run the points")?;
        let labels: Vec<String> = (0..sw.grid.len())
            .map(|i| sweep::grid::label(&sw.point_sets(i)))
            .collect();
        let jobs = a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
        std::fs::create_dir_all(&out)
            .with_context(|| format!("cannot create {}", out.display()))?;
        let started = Instant::now();
        let args = |i: usize| point_args(&a, i, &out);
        sweep::runner::run_points(
            &exe,
            &args,
            &out,
            &labels,
            jobs,
            a.timeout.map(Duration::from_secs),
        )
        .with_context(|| format!("cannot run the points in {}", out.display()))?;
        wall_s = Some(started.elapsed().as_secs_f64());
    }
    let r = sw.collect_with(&out, wall_s, &missing)?;
    let text = sweep::text::render(&r);
    write(&out, "sweep.json", serde_json::to_string_pretty(&r)?)?;
    write(&out, "sweep.txt", text.clone())?;
    write(&out, "sweep.html", sweep::html::render(&r))?;
    out!("{text}")?;
    outln!("reports: {}", out.join("sweep.html").display())?;
    Ok(
        if r.selection.cheapest.is_some() && r.selection.failed.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail
        },
    )
}

/// The arguments of point `index`'s process: this sweep's definition and `--point`.
fn point_args(a: &SweepArgs, index: usize, out: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["sweep".into(), a.scenario.clone().into()];
    args.extend(definition_args(a));
    args.extend([
        "--point".into(),
        index.to_string().into(),
        "--out".into(),
        out.as_os_str().to_owned(),
    ]);
    args
}

/// The sweep's definition, as flags: `--vary`, `--set`, `--slo`, `--budget`, `--cost`,
/// `--real-time`.
fn definition_args(a: &SweepArgs) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    for v in &a.vary {
        args.extend(["--vary".into(), v.to_string().into()]);
    }
    for s in &a.sets {
        args.extend(["--set".into(), s.to_string().into()]);
    }
    for Slo(c) in &a.slo {
        args.extend(["--slo".into(), c.to_string().into()]);
    }
    for Budget(c) in &a.budget {
        args.extend(["--budget".into(), c.to_string().into()]);
    }
    if let Some(f) = a.cost {
        args.extend(["--cost".into(), f.to_string().into()]);
    }
    if a.real_time {
        args.push("--real-time".into());
    }
    args
}

/// Runs point `index` of `sw` into `out/points/NNN` as `run` would; with `--results`,
/// uploads its files there.
fn point(sw: &Sweep, index: usize, out: &Path, remote: &RemoteArgs) -> Result<Outcome> {
    let s = sw.scenario(index)?;
    let target = ClusterArgs::default().target(&s, sw.virtual_time, false)?;
    let dir = out.join(sweep::model::point_dir(index));
    let (r, interrupted) = execute(&s, target, &dir, false)?;
    out!("{}", harness::report::assertion_table(&r))?;
    outln!("reports: {}", dir.display())?;
    if let Some(url) = &remote.results {
        sweep_job::upload(remote, url, index, out)?;
    }
    Ok(match interrupted {
        Some(signal) => Outcome::Interrupted(signal),
        None if r.passed() => Outcome::Pass,
        None => Outcome::Fail,
    })
}
