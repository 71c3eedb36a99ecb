//! The words a scenario file and a provider profile share: a Go duration's text and the
//! names of the rate-limit models and jitter sizings. A leaf, so that both file formats
//! (`raw`, `profile::raw`) read them without reading each other.

use schemars::JsonSchema;
use serde::Deserialize;

/// The pattern of a Go duration the scenario accepts: a sequence of decimal numbers with a
/// unit each (`500ms`, `10s`, `1m30s`, `1.5h`), or `0`; Go's optional `+`, but no `-`: no
/// field takes a negative duration.
pub const GO_DURATION_PATTERN: &str =
    r"^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$";

/// A Go duration as the JSON Schema describes it (the validator parses it with limiter's
/// `GoDuration`, which accepts exactly what [`GO_DURATION_PATTERN`] matches, minus values
/// past its range).
pub struct DurationText;

impl JsonSchema for DurationText {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GoDuration".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": GO_DURATION_PATTERN,
            "description": "A Go duration: 500ms, 10s, 1m30s, 1.5h",
        })
    }
}

/// What the poll jitter's percentage is a share of (`limiter::crossplane::JitterSizing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum JitterSizingName {
    /// Each resource's own interval (ours).
    PerResource,
    /// The provider's `pollInterval`, one absolute jitter for all (upjet's).
    PollInterval,
}

/// The four rate-limit models (docs/budget.md §0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModelName {
    /// crossplane-runtime's middleware: bucket R/10R taken when an item is popped.
    Crossplane,
    /// The same bucket taken when a worker takes an item: the nominal budget is strict.
    InQueue,
    /// controller-runtime defaults: no global budget, one worker.
    ControllerRuntime,
    /// Crossplane core ≥ 2.1: R workers, API client limited, no bucket.
    ConcurrencyOnly,
}
