//! A core profile: Crossplane core as a program the harness does not build, in the
//! profile format ([`RawProfile`]) with `flags: crossplane-core`. `harness run
//! --core-profile FILE` reads it: the process target starts its `command` with the
//! scenario's `core` settings appended as core's flags ([`core_flags`]); the cluster target
//! reads core's Deployment args in its family and checks them against those settings.
//!
//! A core profile has `flags`, `command` (the process target), `env`, `metricsUrl` (core's
//! function metrics, scraped for `functionCalls`), `crds` (Crossplane's CRDs for
//! mock-apiserver; default: one open CRD per Crossplane kind the harness creates) and
//! `userAgent` (default: the program's file name and `/`, client-go's convention). The
//! provider's fields (`file`, `args`, `settings`, `kinds`, `calibration`) are refused, and
//! so is a setting flag in `command`: the scenario's `core` section sets them.

use std::path::Path;

use super::raw::RawProfile;
use super::{ProcessCommand, metrics_url_problem};
use crate::ScenarioError;
use crate::core_flags;
use crate::error::{Pos, Problem, from_yaml_in};
use crate::flags::Dialect;

/// A validated core profile.
#[derive(Clone, Debug)]
pub struct CoreProfile {
    /// The file it was read from.
    pub file: String,
    /// How the process target starts core (its setting flags are appended at the start).
    pub process: Option<ProcessCommand>,
    /// The start of the `User-Agent` of core's API requests.
    pub user_agent: String,
}

fn at<T>(s: &serde_saphyr::Spanned<T>) -> Pos {
    Pos::of(&s.referenced)
}

/// Reads and validates the core profile at `path` (relative paths in it start from its
/// directory).
///
/// # Errors
/// [`ScenarioError::Read`] when it cannot be read; [`ScenarioError::Invalid`] with every
/// problem, placed in the file.
pub fn load(path: &Path) -> Result<CoreProfile, ScenarioError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        what: "core profile",
        file: shown.clone(),
        source,
    })?;
    let invalid = |problems| ScenarioError::Invalid {
        file: shown.clone(),
        sets: Vec::new(),
        problems,
    };
    let raw: RawProfile =
        serde_saphyr::from_str(&text).map_err(|e| invalid(vec![from_yaml_in(&e, &text)]))?;
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    validate(&raw, &dir, &shown).map_err(invalid)
}

fn validate(raw: &RawProfile, dir: &Path, file: &str) -> Result<CoreProfile, Vec<Problem>> {
    let start = Pos {
        line: 1,
        column: 1,
        source: 0,
    };
    let mut problems = Vec::new();
    match &raw.flags {
        None => problems.push(Problem::new(
            start,
            "a core profile names its family, expected `flags: crossplane-core`",
        )),
        Some(d) if d.value != Dialect::CrossplaneCore => problems.push(Problem::new(
            at(d),
            format!(
                "{} is a provider's family, expected crossplane-core in a core profile",
                d.value
            ),
        )),
        Some(_) => {}
    }
    let provider_only = [
        raw.file.as_ref().map(|f| (at(f), "file")),
        raw.args.as_ref().map(|a| (at(a), "args")),
        raw.calibration.as_ref().map(|c| (at(c), "calibration")),
    ];
    for (pos, field) in provider_only.into_iter().flatten() {
        problems.push(Problem::new(
            pos,
            format!("{field} is a provider profile's field, expected command, env, metricsUrl, crds or userAgent in a core profile"),
        ));
    }
    if !raw.kinds.is_empty() {
        problems.push(Problem::new(
            at(&raw.kinds[0].api_version),
            "kinds is a provider profile's field: core's kinds are the scenario's XRDs",
        ));
    }
    let st = &raw.settings;
    let settings_given = st.max_reconcile_rate.is_some()
        || st.rate_limit_model.is_some()
        || st.poll_interval.is_some()
        || st.poll_jitter_percent.is_some()
        || st.poll_jitter_sizing.is_some()
        || st.min_poll_interval.is_some()
        || st.scoped_buckets.is_some()
        || st.backoff_base.is_some()
        || st.backoff_max.is_some()
        || st.client_qps.is_some()
        || st.client_burst.is_some()
        || st.client_limiters.is_some();
    if settings_given {
        problems.push(Problem::new(
            start,
            "settings is a provider profile's field: core's settings come from the scenario's `core` section",
        ));
    }
    let process = match &raw.command {
        Some(cmd) if cmd.value.is_empty() || cmd.value[0].trim().is_empty() => {
            problems.push(Problem::new(
                at(cmd),
                "command is empty, expected core's program and its arguments, such as [crossplane, core, start]",
            ));
            None
        }
        Some(cmd) => {
            for flag in core_flags::occurrences(&cmd.value[1..]) {
                problems.push(Problem::new(
                    at(cmd),
                    format!(
                        "--{} is one of core's settings, which the harness gives core from the scenario's `core` section, expected it left out of the command",
                        flag.name
                    ),
                ));
            }
            Some(ProcessCommand::of(&cmd.value, raw, dir))
        }
        None => None,
    };
    if let Some(u) = &raw.metrics_url
        && let Some(problem) = metrics_url_problem(&u.value)
    {
        problems.push(Problem::new(at(u), problem));
    }
    if process.is_none()
        && let Some(first) = raw
            .metrics_url
            .as_ref()
            .map(at)
            .or_else(|| raw.crds.first().map(at))
    {
        problems.push(Problem::new(
            first,
            "metricsUrl and crds are for the process target, expected a `command` beside them",
        ));
    }
    let user_agent = match &raw.user_agent {
        Some(ua) if ua.value.trim().is_empty() || ua.value.chars().any(char::is_control) => {
            problems.push(Problem::new(
                at(ua),
                format!(
                    "userAgent {:?} is not the start of a User-Agent header, expected such as crossplane/",
                    ua.value
                ),
            ));
            String::new()
        }
        Some(ua) => ua.value.clone(),
        None => {
            let program = raw
                .command
                .as_ref()
                .and_then(|c| c.value.first())
                .and_then(|p| Path::new(p).file_name())
                .map_or_else(
                    || "crossplane".to_owned(),
                    |n| n.to_string_lossy().into_owned(),
                );
            format!("{program}/")
        }
    };
    if !problems.is_empty() {
        problems.sort_by_key(|p| (p.pos.line, p.pos.column));
        return Err(problems);
    }
    Ok(CoreProfile {
        file: file.to_owned(),
        process,
        user_agent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<CoreProfile, String> {
        let raw: RawProfile = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        validate(&raw, Path::new("profiles"), "core.yaml").map_err(|p| {
            p.iter()
                .map(|p| format!("{}:{}: {}", p.pos.line, p.pos.column, p.message))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    #[test]
    fn a_core_profile_gives_the_command_and_core_s_user_agent() {
        let p = parsed(
            "flags: crossplane-core\ncommand: [/usr/local/bin/crossplane, core, start]\nenv: {KUBECONFIG: '{{kubeconfig}}'}\n",
        )
        .unwrap();
        let cmd = p.process.unwrap();
        assert_eq!(
            cmd.program,
            std::path::PathBuf::from("/usr/local/bin/crossplane")
        );
        assert_eq!(cmd.args, ["core", "start"]);
        assert_eq!(
            p.user_agent, "crossplane/",
            "client-go's: the program's name"
        );
        let p =
            parsed("flags: crossplane-core\ncommand: [composer]\nuserAgent: composer/v\n").unwrap();
        assert_eq!(p.user_agent, "composer/v");
    }

    #[test]
    fn a_setting_flag_in_the_command_and_a_providers_field_are_refused_where_they_are() {
        let e = parsed(
            "flags: crossplane-core\ncommand: [crossplane, core, start, --poll-interval=1m]\nkinds:\n  - {apiVersion: a.b/v1, kind: K, scope: Cluster}\n",
        )
        .unwrap_err();
        assert!(
            e.contains("2:10: --poll-interval is one of core's settings"),
            "{e}"
        );
        assert!(
            e.contains("4:18: kinds is a provider profile's field"),
            "{e}"
        );
        let e = parsed("flags: upjet\ncommand: [crossplane]\n").unwrap_err();
        assert!(e.starts_with("1:8: upjet is a provider's family"), "{e}");
        let e = parsed("command: [crossplane]\n").unwrap_err();
        assert!(e.starts_with("1:1: a core profile names its family"), "{e}");
        let e =
            parsed("flags: crossplane-core\nmetricsUrl: http://127.0.0.1:1/metrics\n").unwrap_err();
        assert!(e.contains("expected a `command` beside them"), "{e}");
    }
}
