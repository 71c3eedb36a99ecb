//! The config file as written: serde structs that reject unknown keys, turned into the
//! validated types by `into_*` functions.

use std::num::NonZeroUsize;
use std::time::Duration;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::{ErrorRate, Faults, Flavor, Latency, Outage, Quotas, Rate};
use crate::model::{Action, Class, Collection};

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    pub flavor: Option<RawFlavor>,
    pub shadow: Option<bool>,
    pub journal_cap: Option<NonZeroUsize>,
    pub provisioning: Option<RawProvisioning>,
    pub quotas: Option<RawQuotas>,
    pub accounts: Option<Vec<RawAccount>>,
    pub faults: Option<Spanned<RawFaults>>,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawFlavor {
    Generic,
    AwsJson,
    AwsEc2,
}

impl From<RawFlavor> for Flavor {
    fn from(raw: RawFlavor) -> Flavor {
        match raw {
            RawFlavor::Generic => Flavor::Generic,
            RawFlavor::AwsJson => Flavor::AwsJson,
            RawFlavor::AwsEc2 => Flavor::AwsEc2,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProvisioning {
    pub database_create_ms: Option<u64>,
    pub database_delete_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAccount {
    pub name: Spanned<String>,
    #[serde(default)]
    pub tokens: Vec<Spanned<String>>,
    pub quotas: Option<RawQuotas>,
}

/// A token bucket as written; checked while parsing so the error has a location.
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(try_from = "RawRateFields")]
pub(super) struct RawRate(Rate);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRateFields {
    burst: u32,
    per_second: f64,
}

impl TryFrom<RawRateFields> for RawRate {
    type Error = String;

    fn try_from(raw: RawRateFields) -> Result<RawRate, String> {
        Rate::try_new(raw.burst, raw.per_second).map(RawRate).ok_or_else(|| {
            format!(
                "a rate needs burst >= 1 and per_second from 1/86400 to 1e9, got burst {} and per_second {}",
                raw.burst, raw.per_second
            )
        })
    }
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuotas {
    /// Start from no limits at all instead of the quotas this block overrides.
    pub unlimited: Option<bool>,
    pub account: Option<RawRate>,
    pub classes: Option<ByClass<RawRate>>,
    pub actions: Option<RawActions>,
    pub counts: Option<RawCounts>,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub(crate) struct ByClass<T> {
    pub read: Option<T>,
    pub list: Option<T>,
    pub mutate: Option<T>,
    pub delete: Option<T>,
}

impl<T: Copy> ByClass<T> {
    fn entries(&self) -> impl Iterator<Item = (Class, T)> + '_ {
        [
            (Class::Read, self.read),
            (Class::List, self.list),
            (Class::Mutate, self.mutate),
            (Class::Delete, self.delete),
        ]
        .into_iter()
        .filter_map(|(class, value)| Some((class, value?)))
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawActions {
    pub create: Option<RawRate>,
    pub get: Option<RawRate>,
    pub update: Option<RawRate>,
    pub delete: Option<RawRate>,
    pub list: Option<RawRate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCounts {
    pub buckets: Option<u32>,
    pub databases: Option<u32>,
    pub records: Option<u32>,
}

impl RawQuotas {
    /// Applies every key that is set over `quotas`; keys not set keep their value.
    pub fn apply_to(&self, quotas: &mut Quotas) {
        if self.unlimited == Some(true) {
            *quotas = Quotas::unlimited();
        }
        if let Some(RawRate(rate)) = self.account {
            quotas.account = Some(rate);
        }
        if let Some(classes) = &self.classes {
            for (class, RawRate(rate)) in classes.entries() {
                quotas.classes.insert(class, rate);
            }
        }
        if let Some(actions) = &self.actions {
            let all = [
                (Action::Create, actions.create),
                (Action::Get, actions.get),
                (Action::Update, actions.update),
                (Action::Delete, actions.delete),
                (Action::List, actions.list),
            ];
            for (action, rate) in all {
                if let Some(RawRate(rate)) = rate {
                    quotas.actions.insert(action, rate);
                }
            }
        }
        if let Some(counts) = &self.counts {
            let all = [
                (Collection::Buckets, counts.buckets),
                (Collection::Databases, counts.databases),
                (Collection::Records, counts.records),
            ];
            for (collection, limit) in all {
                if let Some(limit) = limit {
                    quotas.counts.insert(collection, limit);
                }
            }
        }
    }
}

/// Faults as written in the config file or sent to `PUT /admin/v1/faults`.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFaults {
    seed: Option<u64>,
    latency: Option<ByClass<RawLatency>>,
    errors: Option<ByClass<RawErrorRate>>,
    #[serde(default)]
    outages: Vec<RawOutage>,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
enum RawLatency {
    #[serde(rename = "fixed_ms")]
    Fixed(u64),
    #[serde(rename = "uniform_ms")]
    Uniform { min: u64, max: u64 },
    #[serde(rename = "lognormal_ms")]
    LogNormal { median: u64, sigma: f64 },
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawErrorRate {
    rate: f64,
    #[serde(default = "default_fault_status")]
    status: u16,
}

#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawOutage {
    start_s: f64,
    end_s: f64,
    #[serde(default = "default_fault_status")]
    status: u16,
}

fn default_fault_status() -> u16 {
    503
}

impl RawFaults {
    /// The validated faults, or a sentence naming the offending field.
    pub fn into_faults(self) -> Result<Faults, String> {
        let mut faults = Faults::none().with_seed(self.seed.unwrap_or(0));
        if let Some(latency) = &self.latency {
            for (class, raw) in latency.entries() {
                let latency = match raw {
                    RawLatency::Fixed(ms) => Latency::Fixed(Duration::from_millis(ms)),
                    RawLatency::Uniform { min, max } => Latency::Uniform {
                        min: Duration::from_millis(min),
                        max: Duration::from_millis(max),
                    },
                    RawLatency::LogNormal { median, sigma } => Latency::LogNormal {
                        median: Duration::from_millis(median),
                        sigma,
                    },
                };
                faults.latency.insert(class, latency);
            }
        }
        if let Some(errors) = &self.errors {
            for (class, raw) in errors.entries() {
                let rate = ErrorRate {
                    probability: raw.rate,
                    status: raw.status,
                };
                faults.errors.insert(class, rate);
            }
        }
        for (i, raw) in self.outages.iter().enumerate() {
            let seconds = |s: f64, key: &str| {
                Duration::try_from_secs_f64(s)
                    .map_err(|_| format!("outages[{i}].{key} must be a number of seconds >= 0"))
            };
            faults.outages.push(Outage {
                start: seconds(raw.start_s, "start_s")?,
                end: seconds(raw.end_s, "end_s")?,
                status: raw.status,
            });
        }
        super::validate_faults(&faults)?;
        Ok(faults)
    }
}
