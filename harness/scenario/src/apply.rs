//! Applying `--set`s ([`Set`]) to a raw scenario, before validation: each value is read
//! as YAML into the type of the field it replaces and placed at its set (serde-saphyr
//! location source `n` for the `n`-th set; the file is source 0).

use serde::de::DeserializeOwned;
use serde_saphyr::{Location, Spanned};

use super::error::{self, Pos, Problem};
use super::raw::RawScenario;
use super::set::{SETTABLE, Set};

/// The location of the `index`-th `--set` (0-based): source `index + 1`, the file being
/// source 0. serde-saphyr keeps a source id in every location for this purpose, but builds
/// locations only when it parses, so this one is read from its serialized form.
fn location(index: usize) -> Location {
    let source = u32::try_from(index + 1).unwrap_or(u32::MAX);
    serde_json::from_value(serde_json::json!({"line": 1, "column": 1, "source_id": source}))
        .unwrap_or(Location::UNKNOWN)
}

/// The value of `set`, typed as the raw field it replaces, placed at the set.
fn value<T: DeserializeOwned>(set: &Set, index: usize) -> Result<Spanned<T>, Problem> {
    let at = location(index);
    match serde_saphyr::from_str::<T>(&set.value) {
        Ok(value) => Ok(Spanned::new(value, at, at)),
        Err(err) => {
            let message = error::from_yaml(&err).message;
            let field = set.path.rsplit('.').next();
            let message = error::type_message(&message, field, Some(set.value.trim()))
                .unwrap_or_else(|| format!("{:?}: {message}", set.value));
            Err(Problem::new(Pos::of(&at), message))
        }
    }
}

/// The problem of a set whose path is not one of [`SETTABLE`].
fn unknown_path(index: usize) -> Problem {
    Problem::new(
        Pos::of(&location(index)),
        format!("unknown path, expected one of {}", SETTABLE.join(", ")),
    )
}

/// The entry of `list` named `name` (its name read by `name_of`), or the problem of the
/// `index`-th set that names no `what` of the list.
fn named<'a, T>(
    list: &'a mut [T],
    name_of: impl Fn(&T) -> &String,
    name: &str,
    what: &str,
    index: usize,
) -> Result<&'a mut T, Problem> {
    let names: Vec<&str> = list.iter().map(|t| name_of(t).as_str()).collect();
    let message = format!(
        "no {what} named {name:?}, expected one of {}",
        names.join(", ")
    );
    list.iter_mut()
        .find(|t| name_of(t) == name)
        .ok_or_else(|| Problem::new(Pos::of(&location(index)), message))
}

/// Applies the `index`-th set to `raw`.
fn apply(raw: &mut RawScenario, set: &Set, index: usize) -> Result<(), Problem> {
    let p = &mut raw.provider;
    match set.path.as_str() {
        "provider.maxReconcileRate" => p.max_reconcile_rate = Some(value(set, index)?),
        "provider.rateLimitModel" => p.rate_limit_model = Some(value(set, index)?),
        "provider.pollInterval" => p.poll_interval = Some(value(set, index)?),
        "provider.pollJitterPercent" => p.poll_jitter_percent = Some(value(set, index)?),
        "provider.minPollInterval" => p.min_poll_interval = Some(value(set, index)?),
        "provider.pollJitterSizing" => p.poll_jitter_sizing = Some(value(set, index)?),
        "provider.scopedBuckets" => p.scoped_buckets = Some(value(set, index)?),
        "provider.backoffBase" => p.backoff_base = Some(value(set, index)?),
        "provider.backoffMax" => p.backoff_max = Some(value(set, index)?),
        "provider.errorRequeue" => p.error_requeue = Some(value(set, index)?),
        "provider.observeOnlyAbsent" => p.observe_only_absent = Some(value(set, index)?),
        "provider.eventClient" => p.event_client = Some(value(set, index)?),
        "provider.reconcileRequests" => p.reconcile_requests = Some(value(set, index)?),
        "provider.credentialCache" => p.credential_cache = Some(value(set, index)?),
        "profile.file" => {
            let file: Spanned<String> = value(set, index)?;
            let at = file.referenced;
            raw.profile = Some(Spanned::new(
                super::profile::raw::RawProfile {
                    file: Some(file),
                    ..Default::default()
                },
                at,
                at,
            ));
        }
        path if path.starts_with("core.") => {
            let core = raw.core.get_or_insert_with(|| {
                let at = location(index);
                Spanned::new(super::raw::composite::RawCore::default(), at, at)
            });
            let c = &mut core.value;
            match &path["core.".len()..] {
                "maxReconcileRate" => c.max_reconcile_rate = Some(value(set, index)?),
                "pollInterval" => c.poll_interval = Some(value(set, index)?),
                "minPollInterval" => c.min_poll_interval = Some(value(set, index)?),
                "syncInterval" => c.sync_interval = Some(value(set, index)?),
                "enableRealtimeCompositions" => {
                    c.enable_realtime_compositions = Some(value(set, index)?);
                }
                "circuitBreakerBurst" => c.circuit_breaker_burst = Some(value(set, index)?),
                "circuitBreakerRefillRate" => {
                    c.circuit_breaker_refill_rate = Some(value(set, index)?);
                }
                "circuitBreakerCooldown" => c.circuit_breaker_cooldown = Some(value(set, index)?),
                "circuitBreakerMode" => c.circuit_breaker_mode = Some(value(set, index)?),
                _ => {
                    return Err(unknown_path(index));
                }
            }
        }
        path if path.starts_with("composites.") => {
            let name = path
                .strip_prefix("composites.")
                .and_then(|rest| rest.strip_suffix(".count"));
            let Some(name) = name else {
                return Err(unknown_path(index));
            };
            named(
                &mut raw.composites,
                |g| &g.name.value,
                name,
                "XR group",
                index,
            )?
            .count = value(set, index)?;
        }
        "seed" => raw.seed = Some(value::<u64>(set, index)?.value),
        "time" => raw.time = Some(value(set, index)?),
        path if path.starts_with("assertions.") => {
            let check = path
                .strip_prefix("assertions.")
                .and_then(|rest| rest.strip_suffix(".window"))
                .unwrap_or_default();
            let named = |a: &&mut super::raw::RawAssertion| {
                serde_json::to_value(a.check.value)
                    .ok()
                    .as_ref()
                    .and_then(|v| v.as_str())
                    == Some(check)
            };
            let mut found = false;
            for a in raw.assertions.iter_mut().filter(named) {
                a.window = Some(value(set, index)?);
                found = true;
            }
            if !found {
                let mut checks: Vec<String> = raw
                    .assertions
                    .iter()
                    .filter_map(|a| serde_json::to_value(a.check.value).ok())
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect();
                checks.dedup();
                return Err(Problem::new(
                    Pos::of(&location(index)),
                    format!(
                        "no assertion checks {check:?}, expected assertions.CHECK.window with CHECK one of {}",
                        checks.join(", ")
                    ),
                ));
            }
        }
        path if path.starts_with("phases.") => {
            let (name, field) = path
                .strip_prefix("phases.")
                .and_then(|rest| rest.rsplit_once('.'))
                .unwrap_or_default();
            let phase = named(&mut raw.phases, |p| &p.name.value, name, "phase", index)?;
            match field {
                "duration" => phase.duration = Some(value(set, index)?),
                "timeout" => phase.timeout = Some(value(set, index)?),
                _ => {
                    return Err(unknown_path(index));
                }
            }
        }
        path => {
            let group = path
                .strip_prefix("resources.")
                .and_then(|rest| rest.strip_suffix(".count"));
            let Some(name) = group else {
                return Err(unknown_path(index));
            };
            named(
                &mut raw.resources,
                |g| &g.name.value,
                name,
                "resource group",
                index,
            )?
            .count = value(set, index)?;
        }
    }
    Ok(())
}

/// Applies every set, in order (a later one wins), and returns the problems of those that
/// could not be applied.
pub(super) fn apply_all(raw: &mut RawScenario, sets: &[Set]) -> Vec<Problem> {
    sets.iter()
        .enumerate()
        .filter_map(|(i, set)| apply(raw, set, i).err())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ScenarioError, parse_with};

    const TINY: &str = "apiVersion: harness/v1\nname: tiny\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";

    fn sets(args: &[&str]) -> Vec<Set> {
        args.iter().map(|a| a.parse().unwrap()).collect()
    }

    fn problems(args: &[&str]) -> String {
        match parse_with(TINY, "tiny.yaml", &sets(args)) {
            Err(e @ ScenarioError::Invalid { .. }) => e.to_string(),
            other => panic!("expected problems, got {other:?}"),
        }
    }

    #[test]
    fn provider_settings_seed_and_group_counts_can_be_set() {
        let s = parse_with(
            TINY,
            "tiny.yaml",
            &sets(&[
                "provider.maxReconcileRate=20",
                "provider.rateLimitModel=in-queue",
                "provider.pollInterval=30s",
                "provider.pollJitterPercent=5",
                "provider.minPollInterval=2s",
                "resources.b.count=7",
                "seed=42",
            ]),
        )
        .unwrap();
        assert_eq!(s.settings.rate(), 20);
        assert_eq!(
            s.settings.model,
            limiter::crossplane::RateLimitModel::InQueue
        );
        assert_eq!(s.settings.poll_interval, std::time::Duration::from_secs(30));
        assert_eq!(s.settings.poll_jitter_percent, 5);
        assert_eq!(
            s.settings.min_poll_interval,
            std::time::Duration::from_secs(2)
        );
        assert_eq!(s.groups[0].count, 7);
        assert_eq!(s.seed, 42);
        assert_eq!(s.sets.len(), 7);
    }

    #[test]
    fn the_aws_flavours_credential_cache_can_be_set_as_a_sweep_varies_it() {
        let s = parse_with(TINY, "tiny.yaml", &sets(&["provider.credentialCache=all"])).unwrap();
        assert_eq!(s.aws.credential_cache, crate::raw::CredentialCacheName::All);
        assert!(s.aws.set);
    }

    #[test]
    fn an_assertions_window_can_be_set_by_its_check() {
        let file = format!(
            "{TINY}assertions:\n  - {{check: cloudCalls, window: 10m}}\n  - {{check: cloudCalls, window: 1h}}\n  - {{check: throttles}}\n"
        );
        let s = parse_with(
            &file,
            "tiny.yaml",
            &sets(&["assertions.cloudCalls.window=20s"]),
        )
        .unwrap();
        let windows: Vec<_> = s
            .assertions
            .iter()
            .filter_map(|a| match a.check {
                crate::Check::CloudCalls { window, .. } => Some(window),
                _ => None,
            })
            .collect();
        assert_eq!(windows, [std::time::Duration::from_secs(20); 2]);
        let err = match parse_with(
            &file,
            "tiny.yaml",
            &sets(&["assertions.hotLoops.window=20s"]),
        ) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("no hotLoops assertion to set"),
        };
        assert!(
            err.contains("no assertion checks \"hotLoops\"")
                && err.contains("cloudCalls, throttles"),
            "{err}"
        );
    }

    #[test]
    fn the_settings_of_todays_providers_can_be_set() {
        let s = parse_with(
            TINY,
            "tiny.yaml",
            &sets(&[
                "provider.scopedBuckets=true",
                "provider.minPollInterval=0s",
                "provider.backoffBase=2s",
                "provider.backoffMax=5m",
                "provider.pollJitterSizing=poll-interval",
            ]),
        )
        .unwrap();
        let st = &s.settings;
        assert!(st.scoped_buckets);
        assert_eq!(st.min_poll_interval, std::time::Duration::ZERO);
        assert_eq!(
            st.failure_backoff(),
            limiter::crossplane::FailureBackoff {
                base: std::time::Duration::from_secs(2),
                max: std::time::Duration::from_secs(300)
            }
        );
        assert_eq!(
            st.poll_jitter_sizing,
            limiter::crossplane::JitterSizing::PollInterval
        );
        let flags = crate::flags::write(crate::flags::Dialect::Loadtest, st);
        assert!(flags.contains(&("scoped-buckets", "true".to_owned())));
        assert!(flags.contains(&("backoff-max", "5m0s".to_owned())));
    }

    #[test]
    fn a_phase_duration_and_timeout_can_be_set_and_meet_the_files_rules() {
        let yaml = format!("{TINY}  - {{name: hold, action: hold, duration: 1h}}\n");
        let s = parse_with(
            &yaml,
            "t.yaml",
            &sets(&["phases.hold.duration=30s", "phases.create.timeout=2m"]),
        )
        .unwrap();
        assert_eq!(
            s.phases[1].action,
            crate::Action::Hold {
                duration: std::time::Duration::from_secs(30)
            }
        );
        assert_eq!(s.phases[0].timeout, std::time::Duration::from_secs(120));
        let err = parse_with(&yaml, "t.yaml", &sets(&["phases.create.duration=30s"]))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--set phases.create.duration: "), "{err}");
        let err = parse_with(&yaml, "t.yaml", &sets(&["phases.nope.duration=30s"]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--set phases.nope.duration: no phase named \"nope\", expected one of create, hold"
        );
        let err = parse_with(&yaml, "t.yaml", &sets(&["phases.hold.duration=soon"]))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("--set phases.hold.duration: "), "{err}");
    }

    #[test]
    fn a_later_set_of_the_same_path_wins() {
        let s = parse_with(
            TINY,
            "t.yaml",
            &sets(&[
                "provider.maxReconcileRate=20",
                "provider.maxReconcileRate=30",
            ]),
        )
        .unwrap();
        assert_eq!(s.settings.rate(), 30);
    }

    #[test]
    fn a_set_value_meets_the_files_rules_and_is_placed_at_the_set() {
        assert_eq!(
            problems(&["provider.maxReconcileRate=0"]),
            "--set provider.maxReconcileRate: maxReconcileRate is 0, expected an integer ≥ 1"
        );
        assert_eq!(
            problems(&["provider.pollJitterPercent=100"]),
            "--set provider.pollJitterPercent: pollJitterPercent 100 is too large, expected 0 to 99"
        );
        assert!(
            problems(&["provider.pollInterval=soon"]).starts_with("--set provider.pollInterval: "),
            "{}",
            problems(&["provider.pollInterval=soon"])
        );
        assert!(problems(&["resources.b.count=0"]).starts_with("--set resources.b.count: "));
    }

    #[test]
    fn a_value_of_the_wrong_type_says_what_was_given() {
        let text = problems(&["provider.maxReconcileRate=many"]);
        assert!(
            text.starts_with(
                "--set provider.maxReconcileRate: maxReconcileRate: expected a whole number ≥ 1, got many"
            ),
            "{text}"
        );
        let text = problems(&["provider.rateLimitModel=fast"]);
        assert!(text.contains("crossplane"), "{text}");
    }

    #[test]
    fn unknown_paths_and_groups_list_what_is_settable() {
        let text = problems(&["provider.speed=1"]);
        assert!(
            text.starts_with(
                "--set provider.speed: unknown path, expected one of provider.maxReconcileRate"
            ),
            "{text}"
        );
        assert_eq!(
            problems(&["resources.nope.count=1"]),
            "--set resources.nope.count: no resource group named \"nope\", expected one of b"
        );
    }

    #[test]
    fn problems_in_the_file_and_in_sets_are_listed_together() {
        let bad = TINY.replace("count: 3", "count: 0");
        let err = parse_with(&bad, "t.yaml", &sets(&["seed=x"])).unwrap_err();
        let text = err.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("t.yaml:4:"), "{text}");
        assert_eq!(
            lines[1], "--set seed: seed: expected a whole number ≥ 0, got x",
            "{text}"
        );
    }

    #[test]
    fn the_syntax_is_path_equals_value() {
        assert!("seed".parse::<Set>().is_err());
        assert!("=3".parse::<Set>().is_err());
        assert_eq!(
            " seed = 3 ".parse::<Set>().unwrap(),
            Set {
                path: "seed".into(),
                value: "3".into()
            }
        );
    }

    #[test]
    fn warnings_are_computed_with_the_set_values() {
        let yaml = TINY.replace(
            "count: 3}",
            "count: 3, annotations: [{percent: 50, values: {crossplane.io/poll-interval: 2s}}]}",
        );
        let plain = parse_with(&yaml, "t.yaml", &[]).unwrap();
        assert!(plain.warnings.is_empty(), "{:?}", plain.warnings);
        let s = parse_with(&yaml, "t.yaml", &sets(&["provider.minPollInterval=5s"])).unwrap();
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    }
}
