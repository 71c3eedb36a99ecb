//! Background commands that are started again when they end: the port-forwards (they end
//! when their pod goes away, as in a restart phase) and the log followers. Each runs in a
//! thread of its own; stopping one, or dropping it, ends its command and waits for it, so
//! nothing is left running.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::env::Interrupt;

/// How often a running command and the stop request are looked at.
pub const POLL: Duration = Duration::from_millis(50);

/// When a command that ended is started again, and when it is given up.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// The wait before starting it again; after a short run the next wait is twice as
    /// long, up to `max_delay`.
    pub delay: Duration,
    pub max_delay: Duration,
    /// A run at least this long was a working one: the wait and the count of short runs
    /// start over.
    pub healthy_after: Duration,
    /// Given up after this many short runs in a row (`None`: never).
    pub max_short_runs: Option<u32>,
}

/// Builds the command for each start, given when the previous run ended.
pub type Make = Box<dyn FnMut(Option<SystemTime>) -> Command + Send>;

/// A command started again whenever it ends, until stopped or given up.
pub struct Supervised {
    name: String,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    starts: AtomicU32,
    gave_up: Mutex<Option<String>>,
}

impl Supervised {
    /// Starts `make`'s command in the background, its stdout appended to `out` and its
    /// stderr to `err` (with a line for each restart); it is not started again once
    /// `interrupt` has a signal.
    pub fn start(
        name: &str,
        policy: Policy,
        out: PathBuf,
        err: PathBuf,
        interrupt: Interrupt,
        make: Make,
    ) -> Supervised {
        let shared = Arc::new(Shared::default());
        let thread = {
            let (name, shared) = (name.to_owned(), shared.clone());
            std::thread::spawn(move || {
                let why = supervise(&name, policy, &out, &err, &interrupt, &shared, make);
                if let Some(why) = why {
                    note(&err, &format!("cargo xtask kind: {why}; not started again"));
                    *shared.gave_up.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                }
            })
        };
        Supervised {
            name: name.to_owned(),
            shared,
            thread: Some(thread),
        }
    }

    /// Why the command was given up, if it was.
    pub fn gave_up(&self) -> Option<String> {
        self.shared
            .gave_up
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How many times the command was started.
    #[cfg(test)]
    pub fn starts(&self) -> u32 {
        self.shared.starts.load(Ordering::SeqCst)
    }

    /// Ends the command and waits for it and for the thread.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            eprintln!("cargo xtask kind: the thread of {} panicked", self.name);
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: runs the command until stopped or interrupted (`None`) or given up (why).
fn supervise(
    name: &str,
    policy: Policy,
    out: &Path,
    err: &Path,
    interrupt: &Interrupt,
    shared: &Shared,
    mut make: Make,
) -> Option<String> {
    let halted = || shared.stop.load(Ordering::SeqCst) || interrupt.signal().is_some();
    let (mut short_runs, mut delay, mut last_end) = (0, policy.delay, None);
    while !halted() {
        let started = Instant::now();
        let ended = match append(out).and_then(|o| Ok((o, append(err)?))) {
            Err(e) => return Some(format!("{name}: cannot open its log: {e}")),
            Ok((o, e)) => match make(last_end)
                .stdin(Stdio::null())
                .stdout(o)
                .stderr(e)
                .spawn()
            {
                Err(e) => format!("could not start ({e})"),
                Ok(mut child) => {
                    shared.starts.fetch_add(1, Ordering::SeqCst);
                    loop {
                        match child.try_wait() {
                            Ok(Some(status)) => break format!("ended ({status})"),
                            Ok(None) if halted() => {
                                let _ = child.kill();
                                let _ = child.wait();
                                return None;
                            }
                            Ok(None) => std::thread::sleep(POLL),
                            Err(e) => {
                                let _ = child.kill();
                                let _ = child.wait();
                                break format!("could not be waited for ({e})");
                            }
                        }
                    }
                }
            },
        };
        last_end = Some(SystemTime::now());
        let ran = started.elapsed();
        if ran >= policy.healthy_after {
            (short_runs, delay) = (0, policy.delay);
        } else {
            short_runs += 1;
        }
        if policy.max_short_runs.is_some_and(|max| short_runs >= max) {
            return Some(format!(
                "{name} {ended}, {short_runs} times in a row within {} of starting",
                seconds(policy.healthy_after)
            ));
        }
        note(
            err,
            &format!(
                "cargo xtask kind: {name} {ended} after {}; started again in {}",
                seconds(ran),
                seconds(delay)
            ),
        );
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if halted() {
                return None;
            }
            std::thread::sleep(POLL.min(until - Instant::now()));
        }
        if short_runs > 0 {
            delay = (delay * 2).min(policy.max_delay);
        }
    }
    None
}

fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Appends `line` to the log `path` (a log that cannot be written loses the line).
fn note(path: &Path, line: &str) {
    if let Ok(mut f) = append(path) {
        let _ = writeln!(f, "{line}");
    }
}

/// `1.5 s`.
fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// `t` in UTC to the second, as `kubectl logs --since-time` takes it: `2026-01-31T23:59:07Z`.
pub fn utc_seconds(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let (days, of_day) = ((secs / 86_400) as i64, secs % 86_400);
    // Days to a civil date (H. Hinnant's algorithm), from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::WorkDir;

    fn fast(max_short_runs: Option<u32>) -> Policy {
        Policy {
            delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            healthy_after: Duration::from_secs(5),
            max_short_runs,
        }
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]);
        c
    }

    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(POLL);
        }
    }

    #[test]
    fn utc_dates_are_civil_dates() {
        let at = |s| utc_seconds(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(at(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn a_command_that_keeps_ending_is_given_up_after_its_short_runs() {
        let dir = WorkDir::create("xtask-supervise").unwrap();
        let log = dir.0.join("forward.log");
        let mut s = Supervised::start(
            "the port-forward",
            fast(Some(3)),
            log.clone(),
            log.clone(),
            Interrupt::default(),
            Box::new(|_| sh("echo refused; exit 1")),
        );
        wait_for("the give-up", || s.gave_up().is_some());
        assert_eq!(s.starts(), 3);
        let why = s.gave_up().unwrap();
        assert_eq!(
            why,
            "the port-forward ended (exit status: 1), 3 times in a row within 5.0 s of starting"
        );
        s.stop();
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.matches("refused\n").count(), 3, "{text}");
        assert_eq!(text.matches("started again in").count(), 2, "{text}");
        assert!(
            text.ends_with(&format!("{why}; not started again\n")),
            "{text}"
        );
    }

    #[test]
    fn a_command_is_started_again_with_the_time_its_run_ended_and_killed_on_stop() {
        let dir = WorkDir::create("xtask-supervise").unwrap();
        let (out, err) = (dir.0.join("app.log"), dir.0.join("app.errors.log"));
        let pid_file = dir.0.join("pid");
        let ends = Arc::new(Mutex::new(Vec::new()));
        let (seen, pid) = (ends.clone(), pid_file.clone());
        let mut s = Supervised::start(
            "the follower",
            fast(None),
            out.clone(),
            err.clone(),
            Interrupt::default(),
            Box::new(move |last_end| {
                let mut seen = seen.lock().unwrap();
                seen.push(last_end);
                if seen.len() < 3 {
                    sh("echo line; exit 0")
                } else {
                    // The third run stays up: its pid, then sleep in its place.
                    sh(&format!("echo $$ > {}; exec sleep 30", pid.display()))
                }
            }),
        );
        wait_for("the third start", || pid_file.exists() && s.starts() == 3);
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
        assert!(proc.exists());
        s.stop();
        assert!(!proc.exists(), "the command outlived stop()");
        assert_eq!(s.gave_up(), None);
        let ends = ends.lock().unwrap();
        assert_eq!(ends.len(), 3);
        assert!(ends[0].is_none() && ends[1].is_some() && ends[2] > ends[1]);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "line\nline\n");
        let notes = std::fs::read_to_string(&err).unwrap();
        assert_eq!(
            notes.matches("the follower ended (exit status: 0)").count(),
            2
        );
    }

    #[test]
    fn an_interrupt_ends_the_command_and_nothing_is_started_again() {
        let dir = WorkDir::create("xtask-supervise").unwrap();
        let log = dir.0.join("forward.log");
        let interrupt = Interrupt::default();
        let mut s = Supervised::start(
            "the port-forward",
            fast(Some(3)),
            log.clone(),
            log,
            interrupt.clone(),
            Box::new(|_| sh("exec sleep 30")),
        );
        wait_for("the start", || s.starts() == 1);
        interrupt.raise(super::super::env::INT);
        // The thread ends by itself, before stop() is asked.
        wait_for("the thread's end", || {
            s.thread.as_ref().is_some_and(|t| t.is_finished())
        });
        s.stop();
        assert_eq!((s.starts(), s.gave_up()), (1, None));
    }
}
