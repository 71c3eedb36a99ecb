//! The `profile` section (or the file it names): settings written out or read from the
//! provider's command line, its kinds, its `process` command.

use std::path::Path;

use limiter::crossplane::Settings;
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::clients::{self, ClientLimiter};
use crate::error::{Pos, Problem};
use crate::flags::{self, ClientLimits, Dialect, FlagSettings};
use crate::kinds::ApiKind;
use crate::profile::raw::{RawProfile, RawProfileSettings, ScopeName};
use crate::profile::{ProcessCommand, Profile, metrics_url_problem};
use crate::settings::RateSection as _;

/// Validates a profile. `at` is where a missing setting is reported (the section, or the
/// start of the profile's file); `dir` is the directory its relative paths start from.
///
/// # Errors
/// Every problem found, in file order.
pub(crate) fn profile(
    raw: &RawProfile,
    at: Pos,
    dir: &Path,
    file: Option<String>,
) -> Result<Profile, Vec<Problem>> {
    let mut c = Checker::default();
    if let Some(f) = &raw.file {
        c.err(
            pos(f),
            "a profile file cannot name another profile file, expected the profile's own fields",
        );
    }
    let command = raw.command.as_ref().and_then(|cmd| {
        if cmd.value.is_empty() || cmd.value[0].trim().is_empty() {
            c.err(
                pos(cmd),
                "command is empty, expected the provider's program and its arguments",
            );
            return None;
        }
        Some(cmd)
    });
    let from_flags = raw.flags.as_ref().and_then(|d| {
        if d.value == Dialect::CrossplaneCore {
            c.err(
                pos(d),
                "crossplane-core is Crossplane core's family, not a provider's, expected crossplane-runtime, upjet or loadtest (a core profile is given to `harness run --core-profile FILE`)",
            );
            return None;
        }
        let (args, place): (&[String], Pos) = match (&raw.args, command) {
            (Some(a), _) => (&a.value, pos(a)),
            (None, Some(cmd)) => (&cmd.value[1..], pos(cmd)),
            (None, None) => {
                c.err(
                    pos(d),
                    "flags needs the provider's command line, expected `args` or `command`",
                );
                return None;
            }
        };
        match flags::read(d.value, args) {
            Ok(fs) => Some((d.value, fs, place)),
            Err(e) => {
                c.err(place, format!("{e} (read as {} flags)", d.value));
                None
            }
        }
    });
    if raw.args.is_some()
        && raw.flags.is_none()
        && let Some(a) = &raw.args
    {
        c.err(
            pos(a),
            "args without flags cannot be read, expected `flags: crossplane-runtime`, `upjet` or `loadtest`",
        );
    }
    let has_flags = raw.flags.is_some();
    let (settings, client) = settings(&mut c, &raw.settings, from_flags.as_ref(), has_flags, at);
    let client_limiters = client_limiters(&mut c, &raw.settings, from_flags.as_ref(), client);
    let kinds = raw
        .kinds
        .iter()
        .filter_map(|k| {
            let av = &k.api_version.value;
            let (group, version) = av.rsplit_once('/').unwrap_or(("", av.as_str()));
            if version.is_empty() || av.matches('/').count() > 1 {
                c.err(
                    pos(&k.api_version),
                    format!("apiVersion {av:?} is not GROUP/VERSION, expected such as s3.aws.upbound.io/v1beta1"),
                );
                return None;
            }
            if k.kind.value.is_empty() {
                c.err(pos(&k.kind), "kind is empty, expected a kind such as Bucket");
                return None;
            }
            let plural = k
                .plural
                .as_ref()
                .map_or_else(|| format!("{}s", k.kind.value.to_lowercase()), |p| p.value.clone());
            Some(ApiKind {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: k.kind.value.clone(),
                plural,
                namespaced: k.scope.value == ScopeName::Namespaced,
                aws: false,
            })
        })
        .collect();
    let process = command.map(|cmd| ProcessCommand::of(&cmd.value, raw, dir));
    if let Some(u) = &raw.metrics_url {
        if let Some(problem) = metrics_url_problem(&u.value) {
            c.err(pos(u), problem);
        } else if process.is_none() {
            c.err(
                pos(u),
                "metricsUrl is for the process target, expected a `command` beside it (a cluster run takes --provider-metrics-url)",
            );
        }
    }
    if process.is_none()
        && let Some(f) = raw.crds.first()
    {
        c.err(
            pos(f),
            "crds are for the process target, expected a `command` beside them",
        );
    }
    if let Some(ua) = &raw.user_agent
        && (ua.value.trim().is_empty() || ua.value.chars().any(char::is_control))
    {
        c.err(
            pos(ua),
            format!(
                "userAgent {:?} is not the start of a User-Agent header, expected such as provider-aws-s3/",
                ua.value
            ),
        );
    }
    let Checker { mut problems, .. } = c;
    if !problems.is_empty() {
        problems.sort_by_key(|p| (p.pos.line, p.pos.column));
        return Err(problems);
    }
    Ok(Profile {
        file,
        flags: from_flags.map(|(d, ..)| d),
        settings,
        client,
        client_limiters,
        kinds,
        process,
        calibration: Vec::new(),
        user_agent: raw.user_agent.as_ref().map(|u| u.value.clone()),
    })
}

/// The client-side limiters: the profile's list (each limiter's QPS and burst defaulting to
/// `client`), else what the command line's family derives, else a controller-runtime
/// provider's manager and events. Our provider's family takes them from `--event-client`
/// and refuses a list.
fn client_limiters(
    c: &mut Checker,
    raw: &RawProfileSettings,
    from_flags: Option<&(Dialect, FlagSettings, Pos)>,
    client: ClientLimits,
) -> Vec<ClientLimiter> {
    let derived = || match from_flags {
        Some((_, fs, _)) => fs
            .limiters
            .iter()
            .map(|l| ClientLimiter::new(&l.name, client))
            .collect(),
        None => clients::per_rest_client(client, false),
    };
    let Some(list) = &raw.client_limiters else {
        return derived();
    };
    if let Some((Dialect::Loadtest, fs, _)) = from_flags {
        c.err(
            pos(list),
            format!(
                "clientLimiters is given by the command line's --event-client={} ({}), expected no clientLimiters with `flags: loadtest`",
                fs.settings.event_client,
                clients::names(&fs.limiters)
            ),
        );
        return derived();
    }
    if list.value.is_empty() {
        c.err(
            pos(list),
            "clientLimiters is empty, expected at least one limiter such as {name: manager}",
        );
        return derived();
    }
    let mut names = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for l in &list.value {
        if l.name.value.is_empty() {
            c.err(
                pos(&l.name),
                "a client limiter's name is empty, expected one such as manager",
            );
        } else if !names.insert(l.name.value.as_str()) {
            c.err(
                pos(&l.name),
                format!(
                    "client limiter {:?} is named twice, expected each REST client once",
                    l.name.value
                ),
            );
        }
        let mut limits = client;
        positive_limits(c, &mut limits, [(&l.qps, "qps"), (&l.burst, "burst")]);
        out.push(ClientLimiter::new(&l.name.value, limits));
    }
    out
}

/// The settings: each written-out value, else the command line's; without a command line,
/// every one is required. A written-out value that a flag of the command line gives
/// otherwise is a problem naming the flag.
fn settings(
    c: &mut Checker,
    raw: &RawProfileSettings,
    from_flags: Option<&(flags::Dialect, FlagSettings, Pos)>,
    has_flags: bool,
    at: Pos,
) -> (Settings, ClientLimits) {
    // With `flags` the command line gives every setting (its problem, if it cannot be
    // read, is reported there).
    let given = raw.rate().given().map(|(name, at)| (name, at.is_some()));
    let client_given = [
        ("clientQps", raw.client_qps.is_some()),
        ("clientBurst", raw.client_burst.is_some()),
    ];
    let missing: Vec<&str> = given
        .into_iter()
        .chain(client_given)
        .filter(|&(_, given)| !given && !has_flags)
        .map(|(name, _)| name)
        .collect();
    if !missing.is_empty() {
        c.err(
            at,
            format!(
                "the profile gives no {}, expected every setting the budget needs in `settings`, or `flags` with the provider's command line",
                missing.join(", ")
            ),
        );
    }
    let base = from_flags.map_or_else(Settings::default, |(_, fs, _)| fs.settings.clone());
    let s = super::settings::rate(c, &raw.rate(), base);
    let derived = ClientLimits::limit_rest_config(s.max_reconcile_rate);
    let mut client = derived;
    positive_limits(
        c,
        &mut client,
        [
            (&raw.client_qps, "clientQps"),
            (&raw.client_burst, "clientBurst"),
        ],
    );
    if let Some((d, fs, place)) = from_flags {
        for diff in flags::differ(*d, &fs.settings, &s) {
            c.err(
                *place,
                format!(
                    "the command line's --{}={} disagrees with the profile's settings ({}), expected them to agree",
                    diff.flag, diff.have, diff.want
                ),
            );
        }
    }
    (s, client)
}

/// `limits` with the QPS and burst written in `[qps, burst]` in their place, each a finite
/// number > 0 (else a problem at it, and the value stays).
fn positive_limits(
    c: &mut Checker,
    limits: &mut ClientLimits,
    [qps, burst]: [(&Option<Spanned<f64>>, &str); 2],
) {
    for ((v, what), slot) in [(qps, &mut limits.qps), (burst, &mut limits.burst)] {
        if let Some(v) = v {
            if v.value.is_finite() && v.value > 0.0 {
                *slot = v.value;
            } else {
                c.err(
                    pos(v),
                    format!("{what} {} is not a number > 0, expected one", v.value),
                );
            }
        }
    }
}
