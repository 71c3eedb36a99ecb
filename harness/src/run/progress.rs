//! Progress: a bar per phase on a terminal, plain lines otherwise.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// Where progress goes.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    bars: bool,
    quiet: bool,
    virtual_time: bool,
}

impl Progress {
    /// Bars when standard error is a terminal, plain lines otherwise.
    #[must_use]
    pub fn auto() -> Self {
        Progress {
            bars: std::io::stderr().is_terminal(),
            quiet: false,
            virtual_time: false,
        }
    }

    /// Phases report the time that passed in them on the run's clock, and, in virtual
    /// time, the wall time they took beside it.
    #[must_use]
    pub fn virtual_time(mut self, on: bool) -> Self {
        self.virtual_time = on;
        self
    }

    /// Nothing at all (tests).
    #[must_use]
    pub fn quiet() -> Self {
        Progress {
            bars: false,
            quiet: true,
            virtual_time: false,
        }
    }

    /// A line on standard error.
    pub fn line(&self, text: std::fmt::Arguments<'_>) {
        if !self.quiet {
            eprintln!("{text}");
        }
    }

    /// Progress of one phase over `total` resources.
    pub(crate) fn phase(&self, index: usize, name: &str, action: &str, total: usize) -> PhaseBar {
        let label = format!("phase {} {name} ({action})", index + 1);
        let bar = if self.bars {
            let b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template(
                    "{prefix:.bold} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_prefix(label.clone());
            Some(b)
        } else {
            self.line(format_args!("{label}: started"));
            None
        };
        PhaseBar {
            bar,
            label,
            quiet: self.quiet,
            virtual_time: self.virtual_time,
            started: Instant::now(),
            run_started: tokio::time::Instant::now(),
            last_line: std::sync::Mutex::new(Instant::now()),
            done: std::sync::atomic::AtomicUsize::new(0),
            total: std::sync::atomic::AtomicUsize::new(total),
            every: PLAIN_EVERY,
            note: std::sync::Mutex::default(),
        }
    }
}

/// How often a phase without a bar (no terminal, e.g. in CI) prints where it stands.
const PLAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// One phase's progress.
pub(crate) struct PhaseBar {
    bar: Option<ProgressBar>,
    label: String,
    quiet: bool,
    virtual_time: bool,
    started: Instant,
    run_started: tokio::time::Instant,
    last_line: std::sync::Mutex<Instant>,
    done: std::sync::atomic::AtomicUsize,
    total: std::sync::atomic::AtomicUsize,
    /// How often it prints a line without a bar.
    every: std::time::Duration,
    /// What it says beside the count (an estimate of the time left).
    note: std::sync::Mutex<String>,
}

impl PhaseBar {
    /// Prints a line every `every` without a bar (instead of every 30 s).
    pub(crate) fn plain_every(mut self, every: std::time::Duration) -> Self {
        self.every = every;
        self
    }

    /// Says `text` beside the count (an estimate of the time left).
    pub(crate) fn note(&self, text: &str) {
        if let Some(b) = &self.bar {
            b.set_message(text.to_owned());
        }
        text.clone_into(&mut self.note.lock().unwrap_or_else(|e| e.into_inner()));
    }

    pub(crate) fn set_total(&self, total: usize) {
        self.total
            .store(total, std::sync::atomic::Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
        }
    }

    pub(crate) fn set(&self, done: usize) {
        self.done.store(done, std::sync::atomic::Ordering::Relaxed);
        match &self.bar {
            Some(b) => b.set_position(done as u64),
            None if !self.quiet => {
                let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
                if last.elapsed() >= self.every {
                    *last = Instant::now();
                    let total = self.total.load(std::sync::atomic::Ordering::Relaxed);
                    let note = self.note.lock().unwrap_or_else(|e| e.into_inner());
                    let note = if note.is_empty() {
                        String::new()
                    } else {
                        format!(", {note}")
                    };
                    if total == 0 {
                        eprintln!("{}: at {}{note}", self.label, self.took());
                    } else {
                        eprintln!("{}: {done}/{total} after {}{note}", self.label, self.took());
                    }
                }
            }
            None => {}
        }
    }

    /// "12.5s", or in virtual time "3h05m in 2.1s of wall time".
    fn took(&self) -> String {
        let wall = self.started.elapsed().as_secs_f64();
        if self.virtual_time {
            format!(
                "{} ({wall:.1}s of wall time)",
                crate::report::human_duration(self.run_started.elapsed())
            )
        } else {
            format!("{wall:.1}s")
        }
    }

    pub(crate) fn finish(&self, completed: bool) {
        self.finish_as(if completed { "done" } else { "timed out" });
    }

    /// Ends the bar with `verdict` ("done", "timed out", or a phase's failure).
    pub(crate) fn finish_as(&self, verdict: &'static str) {
        let (done, total) = (
            self.done.load(std::sync::atomic::Ordering::Relaxed),
            self.total.load(std::sync::atomic::Ordering::Relaxed),
        );
        match &self.bar {
            Some(b) => b.finish_with_message(verdict),
            // A phase that counts nothing (a hold) says only how long it took.
            None if !self.quiet && total == 0 => {
                eprintln!("{}: {verdict} in {}", self.label, self.took());
            }
            None if !self.quiet => eprintln!(
                "{}: {verdict}, {done}/{total} in {}",
                self.label,
                self.took()
            ),
            None => {}
        }
    }
}
