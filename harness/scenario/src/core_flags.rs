//! Crossplane core's command line (`crossplane core start`, `cmd/crossplane/core/core.go`,
//! and the composer binary, which takes the same names): the flags that set a scenario's
//! `core` section, read into [`CoreSettings`] and written back. The family is
//! `crossplane-core` ([`Dialect::CrossplaneCore`](super::flags::Dialect)).
//!
//! # Semantics
//! | flag | default | sets |
//! |---|---|---|
//! | `--max-reconcile-rate` (alias `--max-concurrent-reconciles`) | 100 | workers per XR controller |
//! | `--poll-interval` | 1m | `pollInterval` |
//! | `--min-poll-interval` | 1s | `minPollInterval` |
//! | `--sync-interval` | 1h | `syncInterval` |
//! | `--enable-realtime-compositions` | true | `realtime` |
//! | `--circuit-breaker-burst` | 100 | `circuitBreakerBurst` |
//! | `--circuit-breaker-refill-rate` | 1 | `circuitBreakerRefillRate` |
//! | `--circuit-breaker-cooldown` | 5m | `circuitBreakerCooldown` |
//! | `--circuit-breaker-mode` | `released` | the composer's only (crossplane/crossplane PR #7725's eager close); core has no such flag |
//!
//! Flags are read as kong (core's parser) and clap (the composer's) accept them:
//! `--name=value`, `--name value`, and for the boolean `--name`, `--no-name` or
//! `--name=true|false`. Positional words (`core`, `start`) and flags that set nothing the
//! budget reads (`--kubeconfig`, `--debug`, `--webhook-enabled`, …) are skipped.
//! [`write()`] leaves `--circuit-breaker-mode` out when it is `released`, so the flags it
//! writes start an unmodified core too.

use std::time::Duration;

use limiter::crossplane::circuit::Mode;
use limiter::go::GoDuration;

use super::composite::CoreSettings;
use super::flags::{BadFlag, Differ};

/// What a flag of core's sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sets {
    Workers,
    Poll,
    MinPoll,
    Sync,
    Realtime,
    Burst,
    Refill,
    Cooldown,
    Mode,
}

/// Core's flags that set a scenario's `core` section: name, what it sets.
const TABLE: &[(&str, Sets)] = &[
    ("max-reconcile-rate", Sets::Workers),
    ("max-concurrent-reconciles", Sets::Workers),
    ("poll-interval", Sets::Poll),
    ("min-poll-interval", Sets::MinPoll),
    ("sync-interval", Sets::Sync),
    ("enable-realtime-compositions", Sets::Realtime),
    ("circuit-breaker-burst", Sets::Burst),
    ("circuit-breaker-refill-rate", Sets::Refill),
    ("circuit-breaker-cooldown", Sets::Cooldown),
    ("circuit-breaker-mode", Sets::Mode),
];

/// One of core's setting flags on a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreFlag {
    /// Its name, without dashes, as written.
    pub name: &'static str,
    /// Its value (`None`: the boolean given bare).
    pub value: Option<String>,
    /// Its index in the arguments.
    pub index: usize,
}

/// The setting flags of `args`, in order.
#[must_use]
pub fn occurrences(args: &[String]) -> Vec<CoreFlag> {
    super::flags::tokenize(
        args,
        |name| TABLE.iter().find(|f| f.0 == name).copied(),
        |_| None,
        |&(_, sets)| sets == Sets::Realtime,
    )
    .into_iter()
    .map(|((name, _), value, index)| CoreFlag { name, value, index })
    .collect()
}

fn bad(flag: &str, value: &str, reason: &str) -> BadFlag {
    BadFlag {
        flag: format!("--{flag}"),
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

fn duration(flag: &str, value: &str) -> Result<Duration, BadFlag> {
    match GoDuration::parse(value.trim()) {
        Ok(d) if d.as_nanos() > 0 => Ok(d.to_std()),
        Ok(_) => Err(bad(flag, value, "expected a duration above 0")),
        Err(e) => Err(bad(
            flag,
            value,
            &format!("{e}, expected a Go duration such as 30s or 1m"),
        )),
    }
}

fn rate(flag: &str, value: &str) -> Result<f64, BadFlag> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(bad(flag, value, "expected a number above 0")),
    }
}

/// The core settings a core started with `args` (the program and its subcommand words
/// may be among them) runs with: each flag's last value, core's default for an absent one.
///
/// # Errors
/// The first flag whose value does not parse or cannot run.
pub fn read(args: &[String]) -> Result<CoreSettings, BadFlag> {
    let mut s = CoreSettings::default();
    for o in occurrences(args) {
        let flag = o.name;
        let value = o.value.unwrap_or_else(|| "true".to_owned());
        let v = value.as_str();
        match TABLE.iter().find(|f| f.0 == flag).map(|f| f.1) {
            Some(Sets::Workers) => {
                s.max_reconcile_rate = match v.trim().parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(bad(flag, v, "expected a whole number above 0")),
                };
            }
            Some(Sets::Poll) => s.poll_interval = duration(flag, v)?,
            Some(Sets::MinPoll) => s.min_poll_interval = duration(flag, v)?,
            Some(Sets::Sync) => s.sync_interval = duration(flag, v)?,
            Some(Sets::Realtime) => {
                s.realtime = v
                    .parse()
                    .map_err(|_| bad(flag, v, "expected true or false"))?;
            }
            Some(Sets::Burst) => s.breaker.burst = rate(flag, v)?,
            Some(Sets::Refill) => s.breaker.refill_per_second = rate(flag, v)?,
            Some(Sets::Cooldown) => {
                s.breaker.cooldown = GoDuration::from_std(duration(flag, v)?);
            }
            Some(Sets::Mode) => {
                s.breaker.mode = match v {
                    "released" => Mode::default(),
                    "eager" => Mode::EagerClose,
                    _ => return Err(bad(flag, v, "expected released or eager")),
                };
            }
            None => {}
        }
    }
    Ok(s)
}

/// The flags that start core with `s`, as (flag, value) pairs in the table's order (one
/// name per setting; `--circuit-breaker-mode` only when it is `eager`).
#[must_use]
pub fn write(s: &CoreSettings) -> Vec<(&'static str, String)> {
    let go = |d: Duration| GoDuration::from_std(d).to_string();
    let mut out = vec![
        ("max-reconcile-rate", s.max_reconcile_rate.to_string()),
        ("poll-interval", go(s.poll_interval)),
        ("min-poll-interval", go(s.min_poll_interval)),
        ("sync-interval", go(s.sync_interval)),
        ("enable-realtime-compositions", s.realtime.to_string()),
        ("circuit-breaker-burst", s.breaker.burst.to_string()),
        (
            "circuit-breaker-refill-rate",
            s.breaker.refill_per_second.to_string(),
        ),
        ("circuit-breaker-cooldown", s.breaker.cooldown.to_string()),
    ];
    if s.breaker.mode == Mode::EagerClose {
        out.push(("circuit-breaker-mode", "eager".to_owned()));
    }
    out
}

/// [`write()`] as command-line arguments, `--flag=value` each.
#[must_use]
pub fn args(s: &CoreSettings) -> Vec<String> {
    write(s)
        .into_iter()
        .map(|(f, v)| format!("--{f}={v}"))
        .collect()
}

/// The flags on which a core running with `have` differs from `want` (the mode compared
/// even when one side leaves it out).
#[must_use]
pub fn differ(have: &CoreSettings, want: &CoreSettings) -> Vec<Differ> {
    let with_mode = |s: &CoreSettings| {
        let mut w = write(s);
        if s.breaker.mode != Mode::EagerClose {
            w.push(("circuit-breaker-mode", "released".to_owned()));
        }
        w
    };
    with_mode(have)
        .into_iter()
        .zip(with_mode(want))
        .filter(|((_, h), (_, w))| h != w)
        .map(|((flag, have), (_, want))| Differ { flag, have, want })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn no_flags_are_cores_defaults() {
        assert_eq!(
            read(&args_of(&["crossplane", "core", "start"])).unwrap(),
            CoreSettings::default()
        );
    }

    #[test]
    fn flags_are_read_as_kong_and_clap_read_them() {
        let s = read(&args_of(&[
            "core",
            "start",
            "--max-concurrent-reconciles",
            "7",
            "--poll-interval=30s",
            "--no-enable-realtime-compositions",
            "--circuit-breaker-burst=50",
            "--circuit-breaker-cooldown",
            "90s",
            "--debug",
            "--circuit-breaker-mode=eager",
        ]))
        .unwrap();
        assert_eq!(s.max_reconcile_rate, 7);
        assert_eq!(s.poll_interval, Duration::from_secs(30));
        assert!(!s.realtime);
        assert!((s.breaker.burst - 50.0).abs() < f64::EPSILON);
        assert_eq!(s.breaker.cooldown.to_std(), Duration::from_secs(90));
        assert_eq!(s.breaker.mode, Mode::EagerClose);
        let on = read(&args_of(&["--enable-realtime-compositions", "false"])).unwrap();
        assert!(!on.realtime, "a boolean takes a following true or false");
    }

    #[test]
    fn written_flags_read_back_to_the_same_settings_and_leave_the_released_mode_out() {
        let mut s = CoreSettings {
            max_reconcile_rate: 3,
            poll_interval: Duration::from_secs(20),
            realtime: false,
            ..CoreSettings::default()
        };
        s.breaker.refill_per_second = 0.5;
        let line = args(&s);
        assert!(!line.iter().any(|a| a.contains("mode")), "{line:?}");
        let back = read(&line).unwrap();
        assert_eq!(back, s);
        assert!(differ(&back, &s).is_empty());
        s.breaker.mode = Mode::EagerClose;
        let d = differ(&back, &s);
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].flag, d[0].have.as_str(), d[0].want.as_str()),
            ("circuit-breaker-mode", "released", "eager")
        );
    }

    #[test]
    fn a_bad_value_names_its_flag_and_what_was_expected() {
        for (arg, reason) in [
            ("--max-reconcile-rate=0", "expected a whole number above 0"),
            ("--poll-interval=60", "expected a Go duration"),
            ("--sync-interval=0s", "expected a duration above 0"),
            (
                "--circuit-breaker-refill-rate=-1",
                "expected a number above 0",
            ),
            ("--circuit-breaker-mode=fast", "expected released or eager"),
            (
                "--enable-realtime-compositions=yes",
                "expected true or false",
            ),
        ] {
            let e = read(&args_of(&[arg])).unwrap_err().to_string();
            assert!(e.contains(reason), "{arg}: {e}");
            assert!(e.starts_with(arg.split('=').next().unwrap()), "{arg}: {e}");
        }
    }
}
