//! The nine rate-limit settings (budget.md §0) that a scenario's `provider` section and a
//! provider profile's `settings` both write, declared once.
//!
//! Both sections reject unknown fields, and serde's `flatten` does not mix with
//! `deny_unknown_fields` (nor keep the values' locations), so the fields are not a nested
//! struct: `rate_section!` declares a section's struct with the nine fields first and the
//! section's own after them, and implements [`RateSection`], whose [`RawRate`] view is what
//! the one validation of the settings reads (`validate::settings`).

use serde_saphyr::Spanned;

use super::error::Pos;
use super::words::{JitterSizingName, ModelName};

/// The rate-limit settings as a section wrote them: each one absent, or its value and where
/// it was written.
#[derive(Clone, Copy, Debug)]
pub struct RawRate<'a> {
    /// `maxReconcileRate`.
    pub max_reconcile_rate: Option<&'a Spanned<u32>>,
    /// `rateLimitModel`.
    pub rate_limit_model: Option<&'a Spanned<ModelName>>,
    /// `pollInterval`.
    pub poll_interval: Option<&'a Spanned<String>>,
    /// `pollJitterPercent`.
    pub poll_jitter_percent: Option<&'a Spanned<u32>>,
    /// `pollJitterSizing`.
    pub poll_jitter_sizing: Option<&'a Spanned<JitterSizingName>>,
    /// `minPollInterval`.
    pub min_poll_interval: Option<&'a Spanned<String>>,
    /// `scopedBuckets`.
    pub scoped_buckets: Option<&'a Spanned<bool>>,
    /// `backoffBase`.
    pub backoff_base: Option<&'a Spanned<String>>,
    /// `backoffMax`.
    pub backoff_max: Option<&'a Spanned<String>>,
}

impl RawRate<'_> {
    /// Each setting's name in the file, and where it is written (none: absent), in the
    /// order of the section's fields.
    #[must_use]
    pub fn given(&self) -> [(&'static str, Option<Pos>); 9] {
        [
            ("maxReconcileRate", at(self.max_reconcile_rate)),
            ("rateLimitModel", at(self.rate_limit_model)),
            ("pollInterval", at(self.poll_interval)),
            ("pollJitterPercent", at(self.poll_jitter_percent)),
            ("pollJitterSizing", at(self.poll_jitter_sizing)),
            ("minPollInterval", at(self.min_poll_interval)),
            ("scopedBuckets", at(self.scoped_buckets)),
            ("backoffBase", at(self.backoff_base)),
            ("backoffMax", at(self.backoff_max)),
        ]
    }
}

/// Where a setting is written, if it is.
fn at<T>(s: Option<&Spanned<T>>) -> Option<Pos> {
    s.map(|s| Pos::of(&s.referenced))
}

/// A raw section that holds the rate-limit settings (declared by `rate_section!`).
pub trait RateSection {
    /// The settings as written.
    fn rate(&self) -> RawRate<'_>;
}

/// Declares a raw section: a struct whose first fields are the nine rate-limit settings,
/// then the fields given, and its [`RateSection`] implementation. The attributes given
/// (derives, `serde` and `schemars` options) apply to the whole struct.
macro_rules! rate_section {
    ($(#[$meta:meta])* pub struct $name:ident { $($extra:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            /// `--max-reconcile-rate`, R (≥ 1). Default 10.
            #[serde(default)]
            #[schemars(with = "Option<u32>", range(min = 1))]
            pub max_reconcile_rate: Option<serde_saphyr::Spanned<u32>>,
            /// `--rate-limit-model`. Default `crossplane` (crossplane-runtime and upjet
            /// providers).
            #[serde(default)]
            #[schemars(with = "Option<crate::words::ModelName>")]
            pub rate_limit_model:
                Option<serde_saphyr::Spanned<crate::words::ModelName>>,
            /// `--poll-interval`, P, a Go duration > 0 (`1m`, `30s`). Default `1m`.
            #[serde(default)]
            #[schemars(with = "Option<crate::words::DurationText>")]
            pub poll_interval: Option<serde_saphyr::Spanned<String>>,
            /// `--poll-jitter-percent`: jitter as a share (below 100) of what
            /// `pollJitterSizing` names; 0 for none. Default 10; upjet's providers use 5.
            #[serde(default)]
            #[schemars(with = "Option<u32>", range(max = 99))]
            pub poll_jitter_percent: Option<serde_saphyr::Spanned<u32>>,
            /// `--poll-jitter-sizing`: `per-resource` (a share of each resource's own
            /// interval, the default) or `poll-interval` (a share of `pollInterval`, the same
            /// absolute jitter for every resource, as upjet's providers compute it and
            /// `WithPollJitterHook(j)` gives it).
            #[serde(default)]
            #[schemars(with = "Option<crate::words::JitterSizingName>")]
            pub poll_jitter_sizing:
                Option<serde_saphyr::Spanned<crate::words::JitterSizingName>>,
            /// `--min-poll-interval`: floor of the `crossplane.io/poll-interval` annotation;
            /// `0s` means none, as in upjet's providers. Default `1s`.
            #[serde(default)]
            #[schemars(with = "Option<crate::words::DurationText>")]
            pub min_poll_interval: Option<serde_saphyr::Spanned<String>>,
            /// `--scoped-buckets`: one global bucket per scope (cluster-scoped, namespaced
            /// `*.m.*`), as crossplane-runtime v2 providers run, instead of one shared
            /// bucket. Default false.
            #[serde(default)]
            #[schemars(with = "Option<bool>")]
            pub scoped_buckets: Option<serde_saphyr::Spanned<bool>>,
            /// `--backoff-base`: first delay of the per-item failure backoff, a Go
            /// duration > 0. Default: the model's (`1s`; `5ms` for controller-runtime).
            #[serde(default)]
            #[schemars(with = "Option<crate::words::DurationText>")]
            pub backoff_base: Option<serde_saphyr::Spanned<String>>,
            /// `--backoff-max`: cap of the per-item failure backoff, ≥ `backoffBase`.
            /// Default: the model's (`60s`; `1000s` for controller-runtime).
            #[serde(default)]
            #[schemars(with = "Option<crate::words::DurationText>")]
            pub backoff_max: Option<serde_saphyr::Spanned<String>>,
            $($extra)*
        }

        impl crate::settings::RateSection for $name {
            fn rate(&self) -> crate::settings::RawRate<'_> {
                crate::settings::RawRate {
                    max_reconcile_rate: self.max_reconcile_rate.as_ref(),
                    rate_limit_model: self.rate_limit_model.as_ref(),
                    poll_interval: self.poll_interval.as_ref(),
                    poll_jitter_percent: self.poll_jitter_percent.as_ref(),
                    poll_jitter_sizing: self.poll_jitter_sizing.as_ref(),
                    min_poll_interval: self.min_poll_interval.as_ref(),
                    scoped_buckets: self.scoped_buckets.as_ref(),
                    backoff_base: self.backoff_base.as_ref(),
                    backoff_max: self.backoff_max.as_ref(),
                }
            }
        }
    };
}

pub(crate) use rate_section;
