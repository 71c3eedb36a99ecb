//! Progress: a bar per phase on a terminal, plain lines otherwise.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// Where progress goes.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    bars: bool,
    quiet: bool,
}

impl Progress {
    /// Bars when standard error is a terminal, plain lines otherwise.
    #[must_use]
    pub fn auto() -> Self {
        Progress {
            bars: std::io::stderr().is_terminal(),
            quiet: false,
        }
    }

    /// Nothing at all (tests).
    #[must_use]
    pub fn quiet() -> Self {
        Progress {
            bars: false,
            quiet: true,
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
            started: Instant::now(),
            last_line: std::sync::Mutex::new(Instant::now()),
            done: std::sync::atomic::AtomicUsize::new(0),
            total: std::sync::atomic::AtomicUsize::new(total),
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
    started: Instant,
    last_line: std::sync::Mutex<Instant>,
    done: std::sync::atomic::AtomicUsize,
    total: std::sync::atomic::AtomicUsize,
}

impl PhaseBar {
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
                if last.elapsed() >= PLAIN_EVERY {
                    *last = Instant::now();
                    let total = self.total.load(std::sync::atomic::Ordering::Relaxed);
                    eprintln!(
                        "{}: {done}/{total} after {:.0}s",
                        self.label,
                        self.started.elapsed().as_secs_f64()
                    );
                }
            }
            None => {}
        }
    }

    pub(crate) fn finish(&self, completed: bool) {
        let verdict = if completed { "done" } else { "timed out" };
        let (done, total) = (
            self.done.load(std::sync::atomic::Ordering::Relaxed),
            self.total.load(std::sync::atomic::Ordering::Relaxed),
        );
        match &self.bar {
            Some(b) => b.finish_with_message(verdict),
            None if !self.quiet => eprintln!(
                "{}: {verdict}, {done}/{total} in {:.1}s",
                self.label,
                self.started.elapsed().as_secs_f64()
            ),
            None => {}
        }
    }
}
