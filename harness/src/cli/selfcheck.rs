//! `harness selfcheck`: draws scenarios from the generator, runs each on the embedded stack
//! in virtual time through the `run` command's path, and tallies every verdict by check and
//! kind of limit (`harness::selfcheck`).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness::result::{RunResult, Signal};
use harness::scenario::generate::{Shape, generate};
use harness::scenario::{self, TimeMode};
use harness::selfcheck::{Checked, Ran, Table, render, tally};
use indicatif::{ProgressBar, ProgressStyle};

use super::Outcome;
use super::execute::{run_on, write, write_reports};
use super::stdout::{out, outln};
use super::target::Where;

/// How the table is printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A table for people.
    #[default]
    Text,
    /// The table as JSON (what --out's selfcheck.json holds).
    Json,
}

/// What `harness selfcheck` was asked.
#[derive(Debug)]
pub struct SelfcheckArgs {
    /// Scenarios to draw.
    pub count: u64,
    /// The first scenario's seed.
    pub seed: u64,
    /// Where to keep the scenarios that failed and the table.
    pub out: PathBuf,
    /// Scenarios run at once.
    pub jobs: usize,
    /// Wall-time limit per scenario.
    pub timeout: Duration,
    /// Text or JSON.
    pub format: Format,
}

/// How long a run stopped at its limit may take to stop before it is left behind.
const GRACE: Duration = Duration::from_secs(60);

pub fn selfcheck_cmd(a: SelfcheckArgs) -> Result<Outcome> {
    if a.count == 0 {
        bail!("-n/--count must be at least 1");
    }
    if a.jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    if a.timeout.is_zero() {
        bail!("--timeout must be at least 1 second");
    }
    init_tracing();
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    eprintln!(
        "selfcheck: {} scenarios from seed {} (the generator's runnable shape: at most 300 resources a group, P up to 10m, holds up to 30m), each on the embedded stack in virtual time, {} at a time, at most {} s of wall time each; failing scenarios go to {}",
        a.count,
        a.seed,
        a.jobs,
        a.timeout.as_secs(),
        a.out.display()
    );
    let started = Instant::now();
    let bar = progress_bar(a.count);
    let next = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel::<(Checked, Option<RunResult>)>();
    let mut workers = Vec::new();
    for _ in 0..a.jobs.min(a.count as usize) {
        let (next, tx) = (Arc::clone(&next), tx.clone());
        let (count, seed, timeout) = (a.count, a.seed, a.timeout);
        workers.push(std::thread::spawn(move || {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                if tx.send(check_one(seed + i, timeout)).is_err() {
                    break;
                }
            }
        }));
    }
    drop(tx);
    let mut checked = Vec::new();
    let mut kept = Vec::new();
    let (mut hard, mut failed) = (0usize, 0usize);
    let mut last_line = Instant::now();
    for (c, result) in rx {
        hard += c.hard_violations().count();
        failed += usize::from(c.keep());
        if c.keep() {
            kept.push(keep(&a.out, &c, result.as_ref())?);
        }
        checked.push(c);
        bar.inc(1);
        bar.set_message(format!(
            "{hard} hard bounds exceeded, {failed} scenarios kept"
        ));
        if bar.is_hidden() && (last_line.elapsed() >= Duration::from_secs(30)) {
            last_line = Instant::now();
            let done = checked.len() as f64;
            let elapsed = started.elapsed().as_secs_f64();
            eprintln!(
                "selfcheck: {}/{} scenarios after {} s, about {} s left; {hard} hard bounds exceeded, {failed} scenarios kept",
                checked.len(),
                a.count,
                elapsed.round(),
                (elapsed / done * (a.count as f64 - done)).round()
            );
        }
    }
    bar.finish_and_clear();
    for w in workers {
        // A worker whose run was left behind has returned; one still in a run is not
        // joined (it is never waited for).
        if w.is_finished() {
            let _ = w.join();
        }
    }
    let table = tally(a.seed, &checked);
    let wall = started.elapsed().as_secs_f64();
    let json = serde_json::to_string_pretty(&Report {
        command: command_line(&a),
        wall_s: wall,
        table: &table,
    })?;
    write(&a.out, "selfcheck.json", json.clone())?;
    match a.format {
        Format::Json => outln!("{json}")?,
        Format::Text => {
            out!("{}", render(&table))?;
            outln!(
                "\n{} scenarios in {} s of wall time; the table is in {}",
                table.runs.drawn,
                wall.round(),
                a.out.join("selfcheck.json").display()
            )?;
            if !kept.is_empty() {
                outln!(
                    "kept {} scenarios in {} (YAML, and result.json with its reports); run one again with: harness run {}",
                    kept.len(),
                    a.out.display(),
                    kept[0].display()
                )?;
            }
        }
    }
    Ok(if table.clean() {
        Outcome::Pass
    } else {
        Outcome::Fail
    })
}

/// What selfcheck.json holds.
#[derive(serde::Serialize)]
struct Report<'a> {
    /// The command that made it, to run it again.
    command: String,
    /// Wall time of the whole selfcheck, s.
    wall_s: f64,
    #[serde(flatten)]
    table: &'a Table,
}

fn command_line(a: &SelfcheckArgs) -> String {
    format!(
        "harness selfcheck -n {} --seed {} --jobs {} --timeout {}",
        a.count,
        a.seed,
        a.jobs,
        a.timeout.as_secs()
    )
}

/// Scenarios done of `count`, with the time left, on a terminal; hidden otherwise (plain
/// lines every 30 s then).
fn progress_bar(count: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(count);
    bar.set_style(
        ProgressStyle::with_template(
            "selfcheck [{elapsed_precise}] {bar:30} {pos}/{len} scenarios, ETA {eta} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// Warnings of the runs would bury the progress: errors only, unless `RUST_LOG` says more.
fn init_tracing() {
    serve::log::init("error");
}

/// Writes the scenario of `c` as `seed-N.yaml` into `out`, and its result with reports into
/// `seed-N/`; the YAML's path.
fn keep(out: &Path, c: &Checked, result: Option<&RunResult>) -> Result<PathBuf> {
    let yaml = out.join(format!("seed-{}.yaml", c.seed));
    std::fs::write(&yaml, generate(c.seed, &Shape::runnable()))
        .with_context(|| format!("cannot write {}", yaml.display()))?;
    if let Some(r) = result {
        let dir = out.join(format!("seed-{}", c.seed));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        write(&dir, "result.json", r.to_json()?)?;
        write_reports(&dir, r)?;
    }
    Ok(yaml)
}

/// Draws, runs and evaluates the scenario of `seed`, in at most `timeout` of wall time (and
/// a grace to stop).
fn check_one(seed: u64, timeout: Duration) -> (Checked, Option<RunResult>) {
    let started = Instant::now();
    let text = generate(seed, &Shape::runnable());
    let s = match scenario::parse(&text, &format!("seed-{seed}.yaml")) {
        Ok(s) => s,
        Err(e) => {
            let ran = Ran::Error {
                message: format!("the generator wrote an invalid scenario: {e}"),
            };
            return (Checked::without_verdicts(seed, ran, 0.0), None);
        }
    };
    let (done_tx, done_rx) = mpsc::channel();
    // The run on a thread of its own, so that one which does not stop can be left behind.
    std::thread::spawn(move || {
        let _ = done_tx.send(run_with_deadline(&s, timeout));
    });
    let wall = || started.elapsed().as_secs_f64();
    match done_rx.recv_timeout(timeout + GRACE) {
        Ok(Ok((mut r, timed_out))) => {
            let limit = timed_out.then_some(timeout.as_secs_f64());
            if timed_out {
                r.run.notes.push(format!(
                    "harness selfcheck stopped the run at its wall-time limit of {} s per scenario, as an interrupt",
                    timeout.as_secs()
                ));
            }
            (Checked::from_result(seed, &r, wall(), limit), Some(r))
        }
        Ok(Err(e)) => {
            let message = e
                .chain()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(": ");
            (
                Checked::without_verdicts(seed, Ran::Error { message }, wall()),
                None,
            )
        }
        Err(_) => {
            let ran = Ran::TimedOut {
                limit_s: timeout.as_secs_f64(),
                abandoned: true,
            };
            (Checked::without_verdicts(seed, ran, wall()), None)
        }
    }
}

/// Runs `s` on the embedded stack through `run`'s path, interrupted when `timeout` of wall
/// time has passed; the result, and whether the limit stopped it.
fn run_with_deadline(s: &scenario::Scenario, timeout: Duration) -> Result<(RunResult, bool)> {
    debug_assert_eq!(s.time, TimeMode::Virtual);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (finished_tx, finished_rx) = mpsc::channel::<()>();
    // A wall clock beside the paused one: it fires unless the run finishes first (which
    // drops `finished_tx`).
    std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = finished_rx.recv_timeout(timeout) {
            let _ = stop_tx.send(true);
        }
    });
    let interrupt = move || {
        let mut stop = stop_rx.clone();
        async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
            Signal::Sigterm
        }
    };
    let output = run_on(
        s,
        Where::Embedded,
        Path::new("."),
        &harness::run::Progress::quiet(),
        interrupt,
    )?;
    drop(finished_tx);
    let timed_out = output.interrupted.is_some();
    Ok((output.result, timed_out))
}
