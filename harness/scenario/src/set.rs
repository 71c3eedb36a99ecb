//! `--set PATH=VALUE`: a value given on the command line in place of the file's, applied to
//! the raw scenario before validation, so it meets the same checks and the warnings are
//! computed with it. Its problems are placed at `--set PATH` where a file's would be at a
//! line and column.
//!
//! | path | value |
//! |---|---|
//! | `provider.maxReconcileRate`, `provider.pollJitterPercent` | an integer |
//! | `provider.rateLimitModel` | `crossplane`, `in-queue`, `controller-runtime`, `concurrency-only` |
//! | `provider.pollInterval`, `provider.minPollInterval` | a Go duration (`30s`, `1m30s`) |
//! | `provider.errorRequeue` | `backoff` or `immediate` |
//! | `provider.observeOnlyAbsent` | `poll` or `backoff` |
//! | `provider.eventClient` | `shared` or `separate` |
//! | `provider.reconcileRequests` | `honour` or `ignore` |
//! | `provider.credentialCache` | `none`, `irsa` or `all` (the AWS flavour's `--credential-cache`) |
//! | `resources.NAME.count` | an integer, for the group named NAME |
//! | `core.FLAG` | one of Crossplane core's flags as `core` spells them (`maxReconcileRate`, `pollInterval`, `minPollInterval`, `syncInterval`, `enableRealtimeCompositions`, `circuitBreakerBurst`, `circuitBreakerRefillRate`, `circuitBreakerCooldown`, `circuitBreakerMode`) |
//! | `composites.NAME.count` | an integer, for the XR group named NAME |
//! | `phases.NAME.duration`, `phases.NAME.timeout` | a Go duration, for the phase named NAME (`duration` where the action has one: hold, cloudOutage, cloudLatency) |
//! | `assertions.CHECK.window` | a Go duration, the window of every assertion whose check is CHECK (`perResourceCalls`, `hotLoops`, `cloudCalls`, …): a scenario shortened with `phases.NAME.duration` keeps windows that fit in it |
//! | `seed` | an integer |
//! | `time` | `real` or `virtual` |
//!
//! The value is read as YAML, as it would be in the file; [`super::apply`] puts it in
//! place.

use std::fmt;
use std::str::FromStr;

/// The paths `--set` accepts (`NAME` is a resource group's name).
pub const SETTABLE: &[&str] = &[
    "provider.maxReconcileRate",
    "provider.rateLimitModel",
    "provider.pollInterval",
    "provider.pollJitterPercent",
    "provider.minPollInterval",
    "provider.pollJitterSizing",
    "provider.scopedBuckets",
    "provider.backoffBase",
    "provider.backoffMax",
    "provider.errorRequeue",
    "provider.observeOnlyAbsent",
    "provider.eventClient",
    "provider.reconcileRequests",
    "provider.credentialCache",
    "resources.NAME.count",
    "core.maxReconcileRate",
    "core.pollInterval",
    "core.minPollInterval",
    "core.syncInterval",
    "core.enableRealtimeCompositions",
    "core.circuitBreakerBurst",
    "core.circuitBreakerRefillRate",
    "core.circuitBreakerCooldown",
    "core.circuitBreakerMode",
    "composites.NAME.count",
    "phases.NAME.duration",
    "phases.NAME.timeout",
    "assertions.CHECK.window",
    "profile.file",
    "seed",
    "time",
];

/// One `--set PATH=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Set {
    /// The path, such as `provider.pollInterval`.
    pub path: String,
    /// The value, as YAML.
    pub value: String,
}

/// A `--set` argument that is not `PATH=VALUE`.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("--set {0:?}: expected PATH=VALUE, such as provider.maxReconcileRate=20")]
pub struct SetSyntaxError(String);

impl FromStr for Set {
    type Err = SetSyntaxError;

    fn from_str(s: &str) -> Result<Set, SetSyntaxError> {
        match s.split_once('=') {
            Some((path, value)) if !path.trim().is_empty() => Ok(Set {
                path: path.trim().to_owned(),
                value: value.trim().to_owned(),
            }),
            _ => Err(SetSyntaxError(s.to_owned())),
        }
    }
}

impl fmt::Display for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.path, self.value)
    }
}
