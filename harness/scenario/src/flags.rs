//! Provider command lines and the budget's settings: the flag names that crossplane-runtime
//! providers (provider-template's `cmd/provider/main.go`), upjet providers
//! (provider-upjet-aws's) and our own provider use, read into [`Settings`] and written back.
//!
//! # Semantics
//! A [`Dialect`] names a family of mains. Each has flags for some settings, a default for
//! each of them (the value when the flag is absent), and fixed values for the settings it
//! has no flag for:
//!
//! | dialect | flags read | fixed |
//! |---|---|---|
//! | `crossplane-runtime` | `--max-reconcile-rate` (10), `--poll` (1m), `--leader-election` (off) | model `crossplane`, no jitter, no annotation floor, one bucket, backoff 1s…60s, a client limiter per REST client |
//! | `upjet` | `--max-reconcile-rate` (10), `--poll` (10m), `--poll-jitter` (absolute; default 5 % of `--poll`), `--leader-election` (off) | model `crossplane`, no annotation floor, one bucket per scope, backoff 1s…60s, a client limiter per REST client |
//! | `loadtest` | every flag of `provider --help` that sets a budget input, and `--reconcile-requests` | — |
//!
//! Every client limiter has QPS 5R and burst 10R (crossplane-runtime's `LimitRESTConfig`).
//! The controller-runtime families have one per REST client ([`clients::per_rest_client`]:
//! the manager's, the event recorder's, and leader election's when `--leader-election` is
//! on); `loadtest` has one shared limiter, or two with `--event-client=separate`
//! ([`clients::of_event_client`]). Flags are read as Go's kingpin and Rust's clap accept
//! them: `--name=value`, `--name value`, and for booleans `--name`, `--no-name` or
//! `--name=true|false`. Flags that change no budget input (`--sync`, `--debug`,
//! `--kubeconfig`, …) and flags the dialect does not know are skipped.

use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::time::Duration;

use limiter::crossplane::{JitterSizing, RateLimitModel, Settings};
use limiter::go::GoDuration;

pub use super::clients::ClientLimits;
use super::clients::{self, ClientLimiter};

/// A family of provider mains, by the flags they take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// crossplane provider-template's main: `--max-reconcile-rate`, `--poll`, `--sync`,
    /// `--leader-election`.
    CrossplaneRuntime,
    /// provider-upjet-aws's mains: as crossplane-runtime with `--poll` 10m, `--poll-jitter`
    /// and one global bucket per scope.
    Upjet,
    /// This workspace's provider (`provider --help`).
    Loadtest,
    /// Crossplane core (`crossplane core start`, and the composer binary): its flags set
    /// a scenario's `core` section ([`super::core_flags`]), none of a provider's settings.
    CrossplaneCore,
}

impl Dialect {
    /// Its name in a profile.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::CrossplaneRuntime => "crossplane-runtime",
            Dialect::Upjet => "upjet",
            Dialect::Loadtest => "loadtest",
            Dialect::CrossplaneCore => "crossplane-core",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The settings a command line gives.
#[derive(Clone, Debug, PartialEq)]
pub struct FlagSettings {
    /// The rate-limit settings.
    pub settings: Settings,
    /// The API client's limits.
    pub client: ClientLimits,
    /// The client-side limiters of the provider's API requests, each with `client`'s
    /// limits.
    pub limiters: Vec<ClientLimiter>,
}

/// A flag's value that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{flag}={value:?}: {reason}")]
pub struct BadFlag {
    /// The flag, with its dashes.
    pub flag: String,
    /// Its value.
    pub value: String,
    /// What was expected.
    pub reason: String,
}

/// What a known flag sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sets {
    Rate,
    Model,
    Poll,
    JitterPercent,
    JitterSizing,
    /// An absolute jitter (upjet's `--poll-jitter`).
    JitterDuration,
    MinPoll,
    ScopedBuckets,
    BackoffBase,
    BackoffMax,
    ErrorRequeue,
    ObserveOnlyAbsent,
    /// Our provider's `--event-client`.
    EventClient,
    /// Our provider's `--reconcile-requests` (not a budget input: what a resync phase
    /// can expect).
    ReconcileRequests,
    /// A controller-runtime main's `--leader-election`: one more REST client, so one more
    /// client limiter.
    LeaderElection,
    /// Nothing the budget reads; `true` when it takes a value.
    Nothing(bool),
}

/// A dialect's flags: long name, short name, what it sets.
fn table(d: Dialect) -> &'static [(&'static str, Option<char>, Sets)] {
    use Sets::*;
    match d {
        Dialect::CrossplaneRuntime => &[
            ("max-reconcile-rate", None, Rate),
            ("poll", None, Poll),
            ("sync", Some('s'), Nothing(true)),
            ("leader-election", Some('l'), LeaderElection),
            ("debug", Some('d'), Nothing(false)),
        ],
        Dialect::Upjet => &[
            ("max-reconcile-rate", None, Rate),
            ("poll", None, Poll),
            ("poll-jitter", None, JitterDuration),
            ("sync", Some('s'), Nothing(true)),
            ("poll-state-metric", None, Nothing(true)),
            ("leader-election", Some('l'), LeaderElection),
            ("debug", Some('d'), Nothing(false)),
            ("provider-ttl", None, Nothing(true)),
            ("namespace", None, Nothing(true)),
            ("enable-external-secret-stores", None, Nothing(false)),
            ("enable-management-policies", None, Nothing(false)),
            ("terraform-version", None, Nothing(true)),
            ("terraform-provider-source", None, Nothing(true)),
            ("terraform-provider-version", None, Nothing(true)),
            ("terraform-native-provider-path", None, Nothing(true)),
        ],
        Dialect::Loadtest => &[
            ("max-reconcile-rate", None, Rate),
            ("rate-limit-model", None, Model),
            ("poll-interval", None, Poll),
            ("poll-jitter-percent", None, JitterPercent),
            ("poll-jitter-sizing", None, JitterSizing),
            ("min-poll-interval", None, MinPoll),
            ("scoped-buckets", None, ScopedBuckets),
            ("backoff-base", None, BackoffBase),
            ("backoff-max", None, BackoffMax),
            ("error-requeue", None, ErrorRequeue),
            ("observe-only-absent", None, ObserveOnlyAbsent),
            ("event-client", None, EventClient),
            ("reconcile-requests", None, ReconcileRequests),
            ("cloud-endpoint", None, Nothing(true)),
            ("cloud-timeout", None, Nothing(true)),
            ("kubeconfig", None, Nothing(true)),
            ("namespace", None, Nothing(true)),
            ("secret-namespace", None, Nothing(true)),
            ("metrics-addr", None, Nothing(true)),
            ("shutdown-timeout", None, Nothing(true)),
            ("aws-retry-mode", None, Nothing(true)),
            ("credential-cache", None, Nothing(true)),
        ],
        // Core's flags are read into its own settings (`core_flags`), not a provider's.
        Dialect::CrossplaneCore => &[],
    }
}

/// What a dialect's provider runs with when no flag is given.
#[must_use]
pub fn defaults(d: Dialect) -> Settings {
    let ten = NonZeroU32::new(10).expect("10 is not zero");
    match d {
        Dialect::Loadtest | Dialect::CrossplaneCore => Settings::default(),
        Dialect::CrossplaneRuntime => {
            let mut s = Settings::new(ten);
            s.model = RateLimitModel::Crossplane;
            s.poll_interval = Duration::from_secs(60);
            s.poll_jitter_percent = 0;
            s.poll_jitter_sizing = JitterSizing::PollInterval;
            s.min_poll_interval = Duration::ZERO;
            s.scoped_buckets = false;
            s
        }
        Dialect::Upjet => {
            let mut s = Settings::new(ten);
            s.model = RateLimitModel::Crossplane;
            s.poll_interval = Duration::from_secs(600);
            s.poll_jitter_percent = 5;
            s.poll_jitter_sizing = JitterSizing::PollInterval;
            s.min_poll_interval = Duration::ZERO;
            s.scoped_buckets = true;
            s
        }
    }
}

fn duration(flag: &str, value: &str) -> Result<Duration, BadFlag> {
    let bad = |reason: String| BadFlag {
        flag: format!("--{flag}"),
        value: value.to_owned(),
        reason,
    };
    match GoDuration::parse(value.trim()) {
        Ok(d) if d < GoDuration::ZERO => Err(bad("expected a duration ≥ 0".to_owned())),
        Ok(d) => Ok(d.to_std()),
        Err(e) => Err(bad(format!(
            "{e}, expected a Go duration such as 30s or 10m"
        ))),
    }
}

fn parsed<T: FromStr>(flag: &str, value: &str, expected: &str) -> Result<T, BadFlag>
where
    T::Err: fmt::Display,
{
    value.parse().map_err(|e: T::Err| BadFlag {
        flag: format!("--{flag}"),
        value: value.to_owned(),
        reason: format!("{e}, expected {expected}"),
    })
}

/// One flag occurrence on a command line: its table entry and its value (`None` for a
/// boolean given without one).
struct Occurrence {
    name: &'static str,
    sets: Sets,
    value: Option<String>,
}

/// The known flags of `args`, in order.
fn occurrences(d: Dialect, args: &[String]) -> Vec<Occurrence> {
    let flags = table(d);
    tokenize(
        args,
        |name| flags.iter().find(|f| f.0 == name).map(|f| (f.0, f.2)),
        |c| flags.iter().find(|f| f.1 == Some(c)).map(|f| f.0),
        |&(_, sets)| {
            matches!(
                sets,
                Sets::ScopedBuckets | Sets::LeaderElection | Sets::Nothing(false)
            )
        },
    )
    .into_iter()
    .map(|((name, sets), value, _)| Occurrence { name, sets, value })
    .collect()
}

/// The flags of `args` that `known` knows (by long name, without dashes), in order: each
/// with its value (`--f=v`, `--f v`; `--no-f` is `false`; a boolean given bare, or followed
/// by something other than `true`/`false`, has none) and its index in `args`. `short`
/// names the long flag a one-letter `-c` stands for; `boolean` says whether a flag takes
/// its value only when it is `true` or `false`. Unknown flags and other arguments are
/// passed over, as pflag's parse would pass them to their own flags.
pub(crate) fn tokenize<K: Copy>(
    args: &[String],
    known: impl Fn(&str) -> Option<K>,
    short: impl Fn(char) -> Option<&'static str>,
    boolean: impl Fn(&K) -> bool,
) -> Vec<(K, Option<String>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let index = i;
        let arg = &args[i];
        i += 1;
        let (name, inline) = if let Some(long) = arg.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            }
        } else if let Some(letter) = arg.strip_prefix('-')
            && let Some(c) = letter.chars().next()
            && letter.len() == c.len_utf8()
        {
            match short(c) {
                Some(long) => (long, None),
                None => continue,
            }
        } else {
            continue;
        };
        let (negated, flag) = match name.strip_prefix("no-").and_then(&known) {
            Some(flag) => (true, flag),
            None => match known(name) {
                Some(flag) => (false, flag),
                None => continue,
            },
        };
        let value = if negated {
            Some("false".to_owned())
        } else if inline.is_some() {
            inline
        } else if boolean(&flag) {
            match args.get(i).map(String::as_str) {
                Some(v @ ("true" | "false")) => {
                    i += 1;
                    Some(v.to_owned())
                }
                _ => None,
            }
        } else {
            let v = args.get(i).cloned();
            i += 1;
            v
        };
        out.push((flag, value, index));
    }
    out
}

/// The settings a provider of dialect `d` runs with when started with `args` (the program
/// name left out): each flag's last value, the dialect's default for an absent flag, its
/// fixed values for the rest.
///
/// # Errors
/// The first flag whose value does not parse or cannot run.
pub fn read(d: Dialect, args: &[String]) -> Result<FlagSettings, BadFlag> {
    let mut s = defaults(d);
    let mut jitter_duration = None;
    let mut leader_election = false;
    for o in occurrences(d, args) {
        let flag = o.name;
        let value = o.value.unwrap_or_else(|| match o.sets {
            Sets::ScopedBuckets | Sets::LeaderElection | Sets::Nothing(false) => "true".to_owned(),
            _ => String::new(),
        });
        let v = value.as_str();
        match o.sets {
            Sets::Rate => {
                let r: u32 = parsed(flag, v, "an integer ≥ 1")?;
                s.max_reconcile_rate = NonZeroU32::new(r).ok_or_else(|| BadFlag {
                    flag: format!("--{flag}"),
                    value: value.clone(),
                    reason: "expected an integer ≥ 1".to_owned(),
                })?;
            }
            Sets::Model => s.model = parsed(flag, v, "a rate-limit model")?,
            Sets::Poll => {
                let p = duration(flag, v)?;
                if p.is_zero() {
                    return Err(BadFlag {
                        flag: format!("--{flag}"),
                        value,
                        reason: "expected a poll interval > 0".to_owned(),
                    });
                }
                s.poll_interval = p;
            }
            Sets::JitterPercent => {
                let j: u32 = parsed(flag, v, "a whole percentage below 100")?;
                if j >= 100 {
                    return Err(BadFlag {
                        flag: format!("--{flag}"),
                        value,
                        reason: "expected a whole percentage below 100".to_owned(),
                    });
                }
                s.poll_jitter_percent = j;
            }
            Sets::JitterSizing => s.poll_jitter_sizing = parsed(flag, v, "a jitter sizing")?,
            Sets::JitterDuration => jitter_duration = Some((duration(flag, v)?, value.clone())),
            Sets::MinPoll => s.min_poll_interval = duration(flag, v)?,
            Sets::ScopedBuckets => s.scoped_buckets = parsed(flag, v, "true or false")?,
            Sets::BackoffBase => s.backoff_base = Some(duration(flag, v)?),
            Sets::BackoffMax => s.backoff_max = Some(duration(flag, v)?),
            Sets::ErrorRequeue => s.error_requeue = parsed(flag, v, "backoff or immediate")?,
            Sets::ObserveOnlyAbsent => {
                s.observe_only_absent = parsed(flag, v, "poll or backoff")?;
            }
            Sets::EventClient => s.event_client = parsed(flag, v, "shared or separate")?,
            Sets::ReconcileRequests => {
                s.reconcile_requests = parsed(flag, v, "honour or ignore")?;
            }
            Sets::LeaderElection => leader_election = parsed(flag, v, "true or false")?,
            Sets::Nothing(_) => {}
        }
    }
    if let Some((j, value)) = jitter_duration {
        s.poll_jitter_sizing = JitterSizing::PollInterval;
        s.poll_jitter_percent = whole_percent(j, s.poll_interval).ok_or_else(|| BadFlag {
            flag: "--poll-jitter".to_owned(),
            value,
            reason: format!(
                "expected a whole percentage below 100 of --poll ({}): the budget sizes jitter in percent",
                GoDuration::from_std(s.poll_interval)
            ),
        })?;
    }
    let client = ClientLimits::limit_rest_config(s.max_reconcile_rate);
    let limiters = match d {
        Dialect::Loadtest => clients::of_event_client(client, s.event_client),
        Dialect::CrossplaneRuntime | Dialect::Upjet | Dialect::CrossplaneCore => {
            clients::per_rest_client(client, leader_election)
        }
    };
    Ok(FlagSettings {
        settings: s,
        client,
        limiters,
    })
}

/// `j` as a whole percentage (below 100) of `poll`, if it is one.
fn whole_percent(j: Duration, poll: Duration) -> Option<u32> {
    let (j, p) = (j.as_nanos(), poll.as_nanos());
    (p > 0 && (j * 100) % p == 0 && j * 100 / p < 100).then(|| (j * 100 / p) as u32)
}

/// The flags of dialect `d` that give `s`, as (flag, value) pairs, in the dialect's order:
/// what to start its provider with. Settings the dialect has no flag for are left out.
#[must_use]
pub fn write(d: Dialect, s: &Settings) -> Vec<(&'static str, String)> {
    let go = |d| GoDuration::from_std(d).to_string();
    table(d)
        .iter()
        .filter_map(|&(name, _, sets)| {
            let v = match sets {
                Sets::Rate => s.max_reconcile_rate.to_string(),
                Sets::Model => s.model.to_string(),
                Sets::Poll => go(s.poll_interval),
                Sets::JitterPercent => s.poll_jitter_percent.to_string(),
                Sets::JitterSizing => s.poll_jitter_sizing.to_string(),
                Sets::JitterDuration => go(s.poll_interval * s.poll_jitter_percent / 100),
                Sets::MinPoll => go(s.min_poll_interval),
                Sets::ScopedBuckets => s.scoped_buckets.to_string(),
                Sets::BackoffBase => go(s.failure_backoff().base),
                Sets::BackoffMax => go(s.failure_backoff().max),
                Sets::ErrorRequeue => s.error_requeue.to_string(),
                Sets::ObserveOnlyAbsent => s.observe_only_absent.to_string(),
                Sets::EventClient => s.event_client.to_string(),
                Sets::ReconcileRequests => s.reconcile_requests.to_string(),
                // Not a setting: read from the command line only.
                Sets::LeaderElection | Sets::Nothing(_) => return None,
            };
            Some((name, v))
        })
        .collect()
}

/// One flag whose value differs between two command lines' settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Differ {
    /// The flag, without dashes.
    pub flag: &'static str,
    /// The value one side runs with.
    pub have: String,
    /// The value the other side wants.
    pub want: String,
}

/// The flags of dialect `d` on which `have` and `want` differ.
#[must_use]
pub fn differ(d: Dialect, have: &Settings, want: &Settings) -> Vec<Differ> {
    write(d, have)
        .into_iter()
        .zip(write(d, want))
        .filter(|((_, h), (_, w))| h != w)
        .map(|((flag, have), (_, want))| Differ { flag, have, want })
        .collect()
}

#[cfg(test)]
mod tests;
