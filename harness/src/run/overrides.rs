//! `--set path=value`: change a scenario's settings for one run without editing the file.
//!
//! | path | value |
//! |---|---|
//! | `provider.maxReconcileRate` | a positive integer |
//! | `provider.rateLimitModel` | `crossplane`, `in-queue`, `controller-runtime`, `concurrency-only` |
//! | `provider.pollInterval`, `provider.minPollInterval` | a Go duration (`30s`, `1m30s`) |
//! | `provider.pollJitterPercent` | an integer below 100 |
//! | `resources.NAME.count` | a positive integer, for the group named NAME |
//! | `seed` | an integer |

use std::num::NonZeroU32;

use limiter::crossplane::RateLimitModel;
use limiter::go::GoDuration;

use crate::scenario::Scenario;

/// A `--set` that cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OverrideError {
    /// Not `path=value`.
    #[error("--set {0:?}: expected path=value")]
    Syntax(String),
    /// A path that cannot be set.
    #[error(
        "--set {0}: unknown path (settable: provider.maxReconcileRate, provider.rateLimitModel, provider.pollInterval, provider.pollJitterPercent, provider.minPollInterval, resources.NAME.count, seed)"
    )]
    UnknownPath(String),
    /// A value of the wrong form.
    #[error("--set {path}: {value:?} is not {expected}")]
    BadValue {
        /// The path.
        path: String,
        /// The value given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

fn bad(path: &str, value: &str, expected: &'static str) -> OverrideError {
    OverrideError::BadValue {
        path: path.to_owned(),
        value: value.to_owned(),
        expected,
    }
}

fn duration(path: &str, value: &str) -> Result<std::time::Duration, OverrideError> {
    GoDuration::parse(value)
        .ok()
        .filter(|d| *d > GoDuration::ZERO)
        .map(GoDuration::to_std)
        .ok_or_else(|| bad(path, value, "a positive Go duration such as 30s"))
}

/// Applies every `path=value` to `s`, in order, and validates the provider settings again.
///
/// # Errors
/// The first override that cannot be applied.
pub fn apply_overrides(s: &mut Scenario, sets: &[String]) -> Result<(), OverrideError> {
    for set in sets {
        let (path, value) = set
            .split_once('=')
            .ok_or_else(|| OverrideError::Syntax(set.clone()))?;
        let (path, value) = (path.trim(), value.trim());
        match path {
            "provider.maxReconcileRate" => {
                s.settings.max_reconcile_rate = value
                    .parse::<NonZeroU32>()
                    .map_err(|_| bad(path, value, "a positive integer"))?;
            }
            "provider.rateLimitModel" => {
                s.settings.model = value.parse::<RateLimitModel>().map_err(|_| {
                    bad(
                        path,
                        value,
                        "one of crossplane, in-queue, controller-runtime, concurrency-only",
                    )
                })?;
            }
            "provider.pollInterval" => s.settings.poll_interval = duration(path, value)?,
            "provider.minPollInterval" => s.settings.min_poll_interval = duration(path, value)?,
            "provider.pollJitterPercent" => {
                s.settings.poll_jitter_percent = value
                    .parse::<u32>()
                    .ok()
                    .filter(|p| *p < 100)
                    .ok_or_else(|| bad(path, value, "an integer below 100"))?;
            }
            "seed" => {
                s.seed = value
                    .parse()
                    .map_err(|_| bad(path, value, "an unsigned integer"))?;
            }
            _ => {
                let group = path
                    .strip_prefix("resources.")
                    .and_then(|rest| rest.strip_suffix(".count"))
                    .and_then(|name| s.groups.iter_mut().find(|g| g.name == name))
                    .ok_or_else(|| OverrideError::UnknownPath(path.to_owned()))?;
                group.count = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad(path, value, "a positive integer"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        let yaml = "apiVersion: harness/v1\nname: tiny\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";
        crate::scenario::parse(yaml, "tiny.yaml").unwrap()
    }

    #[test]
    fn provider_settings_and_group_counts_can_be_set() {
        let mut s = scenario();
        apply_overrides(
            &mut s,
            &[
                "provider.maxReconcileRate=20".into(),
                "provider.rateLimitModel=in-queue".into(),
                "provider.pollInterval=30s".into(),
                "resources.b.count=7".into(),
            ],
        )
        .unwrap();
        assert_eq!(s.settings.rate(), 20);
        assert_eq!(s.settings.model, RateLimitModel::InQueue);
        assert_eq!(s.settings.poll_interval, std::time::Duration::from_secs(30));
        assert_eq!(s.groups[0].count, 7);
    }

    #[test]
    fn bad_overrides_say_what_was_expected() {
        let mut s = scenario();
        assert_eq!(
            apply_overrides(&mut s, &["provider.maxReconcileRate=0".into()])
                .unwrap_err()
                .to_string(),
            "--set provider.maxReconcileRate: \"0\" is not a positive integer"
        );
        assert!(matches!(
            apply_overrides(&mut s, &["resources.nope.count=1".into()]),
            Err(OverrideError::UnknownPath(_))
        ));
        assert!(matches!(
            apply_overrides(&mut s, &["seed".into()]),
            Err(OverrideError::Syntax(_))
        ));
    }
}
