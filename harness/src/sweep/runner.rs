//! Running a sweep's points: each a child process of the harness binary (`harness sweep
//! FILE … --point I --out DIR`, the mode an Indexed Job's pod runs too), `jobs` at once,
//! its output in its directory's `log.txt`, progress on standard error. A point that fails
//! or hangs past the timeout is ended and reported; the others run on.

use std::ffi::OsString;
use std::fs::File;
use std::io::{IsTerminal as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::model::point_dir;

/// The file in a point's directory that holds its standard output and error.
pub const LOG: &str = "log.txt";

/// How a point's process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// The point.
    pub index: usize,
    /// Its exit code, `None` when a signal ended it or it could not start.
    pub code: Option<i32>,
    /// What happened, in words.
    pub summary: String,
    /// Its wall time.
    pub wall: Duration,
}

/// What a `harness` exit code says of a point's run (the codes of `harness --help`).
fn summary(code: Option<i32>) -> String {
    match code {
        Some(0) => "passed".into(),
        Some(1) => "ran; an assertion or a phase failed".into(),
        Some(2) => "could not run (see its log.txt)".into(),
        Some(130 | 143) => "interrupted; its result is partial".into(),
        Some(c) => format!("exit status {c} (see its log.txt)"),
        None => "ended by a signal".into(),
    }
}

/// Reports progress: a bar on a terminal, a line a point otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: Mutex<usize>,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {pos}/{len} points {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress {
            bar,
            total,
            done: Mutex::new(0),
        }
    }

    fn line(&self, text: String) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    fn finished(&self, label: &str, f: &Finished) {
        let done = {
            let mut d = self
                .done
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *d += 1;
            *d
        };
        self.line(format!(
            "point {} ({label}) {} in {:.1}s [{done}/{}]",
            f.index,
            f.summary,
            f.wall.as_secs_f64(),
            self.total
        ));
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}

/// Runs points `0..labels.len()` as `exe args(i)`, `jobs` at once, each with its output in
/// `out/points/NNN/log.txt`, ended after `timeout` when one is given; how each ended, in
/// index order.
///
/// # Errors
/// A point's directory or log that cannot be created.
pub fn run_points(
    exe: &Path,
    args: &(dyn Fn(usize) -> Vec<OsString> + Sync),
    out: &Path,
    labels: &[String],
    jobs: usize,
    timeout: Option<Duration>,
) -> std::io::Result<Vec<Finished>> {
    let progress = Progress::new(labels.len());
    progress.line(format!(
        "sweep: {} points, {} at once; each point's output in {}/points/NNN/{LOG}",
        labels.len(),
        jobs.max(1).min(labels.len().max(1)),
        out.display()
    ));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Finished>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<std::io::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(labels.len()) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= labels.len() {
                        return;
                    }
                    match run_one(
                        exe,
                        &args(index),
                        &out.join(point_dir(index)),
                        index,
                        timeout,
                    ) {
                        Ok(f) => {
                            progress.finished(&labels[index], &f);
                            results
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .push(f);
                        }
                        Err(e) => {
                            *failure
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e);
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(bar) = &progress.bar {
        bar.finish_and_clear();
    }
    if let Some(e) = failure
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
    {
        return Err(e);
    }
    let mut results = results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|f| f.index);
    Ok(results)
}

/// Runs one point in `dir`, its output in `dir/log.txt`, with a last line saying how it
/// ended.
fn run_one(
    exe: &Path,
    args: &[OsString],
    dir: &Path,
    index: usize,
    timeout: Option<Duration>,
) -> std::io::Result<Finished> {
    std::fs::create_dir_all(dir)?;
    let mut log = File::create(dir.join(LOG))?;
    let started = Instant::now();
    let child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            let summary = format!("could not start {}: {e}", exe.display());
            writeln!(log, "harness sweep: {summary}")?;
            return Ok(Finished {
                index,
                code: None,
                summary,
                wall: started.elapsed(),
            });
        }
    };
    let (code, timed_out) = loop {
        if let Some(status) = child.try_wait()? {
            break (status.code(), false);
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            // SIGKILL: a run past its timeout is stuck, and its partial report is not
            // worth waiting for.
            let _ = child.kill();
            let _ = child.wait();
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let wall = started.elapsed();
    let summary = if timed_out {
        format!(
            "ended after the sweep's --timeout of {}s",
            timeout.map_or(0, |t| t.as_secs())
        )
    } else {
        summary(code)
    };
    writeln!(
        log,
        "harness sweep: point {index} {summary} after {:.1}s",
        wall.as_secs_f64()
    )?;
    Ok(Finished {
        index,
        code,
        summary,
        wall,
    })
}
