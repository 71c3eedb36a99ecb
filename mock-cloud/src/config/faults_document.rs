//! The faults document: the config's `faults` block and the body of
//! `PUT /admin/v1/faults`, read into [`Faults`] and written from them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parts::{ByClass, millis};
use super::{
    ConfigError, ErrorRate, Faults, LastingError, Latency, OperationFaults, Outage, ResourceEffect,
    ResourceFault, ResourceKind, ResourceSelector,
};
use crate::model::Action;
use crate::service::Service;

/// Faults as written: the `faults` block of a config document and the body of
/// `PUT /admin/v1/faults` (JSON).
///
/// `seed`; `latency` and `errors` per class (`read`, `list`, `mutate`, `delete`) of the
/// generic API; a list of `outages` (every service); `services`: per AWS service, per
/// operation name (or `*`), its `latency`, `errors`, `outages` and the error `code` they
/// answer; `resources`: per-resource rules of the generic API, each a selector
/// (`collection`, `name` with `*` wildcards, `tag: {key, value}` on `spec.tags`, `percent`
/// of the matching names, seeded) and one effect: `error` (`AccessDenied`, `Conflict` or
/// `Validation`, with an optional `code` and `actions`), `not_found_after_create_s`,
/// `drift: {field}` or `slow_create_s`. Unknown keys are errors. Latency is in whole milliseconds
/// (`{"fixed_ms": 20}`, `{"uniform_ms": {"min": 10, "max": 30}}`,
/// `{"lognormal_ms": {"median": 20, "sigma": 0.5}}`); outage windows in seconds since the
/// cloud started (`start_s`, `end_s`). `FaultsDocument::from(&faults)` writes faults
/// (latency finer than a millisecond is truncated); `Faults::try_from(document)` reads
/// and checks them.
///
/// ```
/// use std::time::Duration;
/// use mock_cloud::admin::FaultsDocument;
/// use mock_cloud::{Class, Faults, Latency};
///
/// let faults = Faults::none().with_latency(Class::Read, Latency::Fixed(Duration::from_millis(20)));
/// let json = serde_json::to_string(&FaultsDocument::from(&faults)).unwrap();
/// assert_eq!(json, r#"{"seed":0,"latency":{"read":{"fixed_ms":20}},"outages":[]}"#);
/// let back: FaultsDocument = serde_json::from_str(&json).unwrap();
/// assert_eq!(Faults::try_from(back).unwrap(), faults);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultsDocument {
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<ByClass<LatencyDoc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<ByClass<ErrorRateDoc>>,
    #[serde(default)]
    outages: Vec<OutageDoc>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    services: BTreeMap<Service, BTreeMap<String, OperationFaultsDoc>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resources: Vec<ResourceFaultDoc>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OperationFaultsDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<LatencyDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    errors: Option<ErrorRateDoc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    outages: Vec<OutageDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
enum LatencyDoc {
    #[serde(rename = "fixed_ms")]
    Fixed(u64),
    #[serde(rename = "uniform_ms")]
    Uniform { min: u64, max: u64 },
    #[serde(rename = "lognormal_ms")]
    LogNormal { median: u64, sigma: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorRateDoc {
    rate: f64,
    #[serde(default = "default_fault_status")]
    status: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutageDoc {
    start_s: f64,
    end_s: f64,
    #[serde(default = "default_fault_status")]
    status: u16,
}

/// One per-resource rule as written: a selector (`collection`, `name`, `tag`, `percent`)
/// and exactly one effect (`error`, `not_found_after_create_s`, `drift`, `slow_create_s`,
/// `retry_after_s`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceFaultDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    collection: Option<ResourceKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<TagDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    percent: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    actions: Option<Vec<Action>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_found_after_create_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    drift: Option<DriftDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slow_create_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TagDoc {
    key: String,
    value: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DriftDoc {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    field: Option<String>,
}

impl ResourceFaultDoc {
    fn fault(&self, at: &str) -> Result<ResourceFault, String> {
        let seconds = |s: f64, key: &str| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| format!("{at}.{key} must be a number of seconds >= 0"))
        };
        let mut effects = Vec::new();
        if let Some(name) = &self.error {
            let error = LastingError::parse(name).ok_or_else(|| {
                let known: Vec<_> = LastingError::ALL.iter().map(|e| e.as_str()).collect();
                format!(
                    "{at}.error: unknown error {name:?}, expected one of {}",
                    known.join(", ")
                )
            })?;
            effects.push(ResourceEffect::Error {
                error,
                code: self.code.clone(),
                actions: self.actions.clone(),
            });
        } else if self.code.is_some() || self.actions.is_some() {
            return Err(format!("{at}: `code` and `actions` go with `error`"));
        }
        if let Some(s) = self.not_found_after_create_s {
            let duration = seconds(s, "not_found_after_create_s")?;
            effects.push(ResourceEffect::NotFoundAfterCreate { duration });
        }
        if let Some(drift) = &self.drift {
            effects.push(ResourceEffect::Drift {
                field: drift.field.clone(),
            });
        }
        if let Some(s) = self.slow_create_s {
            let duration = seconds(s, "slow_create_s")?;
            effects.push(ResourceEffect::SlowCreate { duration });
        }
        if let Some(s) = self.retry_after_s {
            let after = seconds(s, "retry_after_s")?;
            effects.push(ResourceEffect::RetryAfter { after });
        }
        let effect = match effects.len() {
            1 => effects.remove(0),
            0 => {
                return Err(format!(
                    "{at}: no effect, expected one of `error`, `not_found_after_create_s`, `drift`, `slow_create_s`, `retry_after_s`"
                ));
            }
            _ => return Err(format!("{at}: more than one effect, expected one per rule")),
        };
        Ok(ResourceFault {
            select: ResourceSelector {
                collection: self.collection,
                name: self.name.clone(),
                tag: self.tag.as_ref().map(|t| (t.key.clone(), t.value.clone())),
                percent: self.percent,
            },
            effect,
        })
    }

    fn of(fault: &ResourceFault) -> ResourceFaultDoc {
        let select = &fault.select;
        let mut doc = ResourceFaultDoc {
            collection: select.collection,
            name: select.name.clone(),
            tag: select.tag.as_ref().map(|(key, value)| TagDoc {
                key: key.clone(),
                value: value.clone(),
            }),
            percent: select.percent,
            ..ResourceFaultDoc::default()
        };
        match &fault.effect {
            ResourceEffect::Error {
                error,
                code,
                actions,
            } => {
                doc.error = Some(error.as_str().to_owned());
                doc.code.clone_from(code);
                doc.actions.clone_from(actions);
            }
            ResourceEffect::NotFoundAfterCreate { duration } => {
                doc.not_found_after_create_s = Some(duration.as_secs_f64());
            }
            ResourceEffect::Drift { field } => {
                doc.drift = Some(DriftDoc {
                    field: field.clone(),
                });
            }
            ResourceEffect::SlowCreate { duration } => {
                doc.slow_create_s = Some(duration.as_secs_f64());
            }
            ResourceEffect::RetryAfter { after } => {
                doc.retry_after_s = Some(after.as_secs_f64());
            }
        }
        doc
    }
}

fn default_fault_status() -> u16 {
    503
}

impl FaultsDocument {
    /// The validated faults, or a sentence naming the offending field.
    pub(crate) fn into_faults(self) -> Result<Faults, String> {
        let mut faults = Faults::none().with_seed(self.seed.unwrap_or(0));
        if let Some(latency) = &self.latency {
            for (class, doc) in latency.entries() {
                faults.latency.insert(class, doc.latency());
            }
        }
        for (service, operations) in &self.services {
            for (name, doc) in operations {
                let mut op = OperationFaults {
                    latency: doc.latency.map(|l| l.latency()),
                    errors: doc.errors.map(|e| ErrorRate {
                        probability: e.rate,
                        status: e.status,
                    }),
                    outages: Vec::new(),
                    code: doc.code.clone(),
                };
                for (i, outage) in doc.outages.iter().enumerate() {
                    op.outages
                        .push(outage.outage(&format!("services.{service}.{name}.outages[{i}]"))?);
                }
                faults
                    .services
                    .entry(*service)
                    .or_default()
                    .insert(name.clone(), op);
            }
        }
        if let Some(errors) = &self.errors {
            for (class, doc) in errors.entries() {
                let rate = ErrorRate {
                    probability: doc.rate,
                    status: doc.status,
                };
                faults.errors.insert(class, rate);
            }
        }
        for (i, doc) in self.outages.iter().enumerate() {
            faults.outages.push(doc.outage(&format!("outages[{i}]"))?);
        }
        for (i, doc) in self.resources.iter().enumerate() {
            faults
                .resources
                .push(doc.fault(&format!("resources[{i}]"))?);
        }
        super::validate_faults(&faults)?;
        Ok(faults)
    }
}

impl LatencyDoc {
    fn latency(self) -> Latency {
        match self {
            LatencyDoc::Fixed(ms) => Latency::Fixed(Duration::from_millis(ms)),
            LatencyDoc::Uniform { min, max } => Latency::Uniform {
                min: Duration::from_millis(min),
                max: Duration::from_millis(max),
            },
            LatencyDoc::LogNormal { median, sigma } => Latency::LogNormal {
                median: Duration::from_millis(median),
                sigma,
            },
        }
    }

    fn of(latency: &Latency) -> LatencyDoc {
        match *latency {
            Latency::Fixed(d) => LatencyDoc::Fixed(millis(d)),
            Latency::Uniform { min, max } => LatencyDoc::Uniform {
                min: millis(min),
                max: millis(max),
            },
            Latency::LogNormal { median, sigma } => LatencyDoc::LogNormal {
                median: millis(median),
                sigma,
            },
        }
    }
}

impl OutageDoc {
    fn outage(&self, at: &str) -> Result<Outage, String> {
        let seconds = |s: f64, key: &str| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| format!("{at}.{key} must be a number of seconds >= 0"))
        };
        Ok(Outage {
            start: seconds(self.start_s, "start_s")?,
            end: seconds(self.end_s, "end_s")?,
            status: self.status,
        })
    }

    fn of(outage: &Outage) -> OutageDoc {
        OutageDoc {
            start_s: outage.start.as_secs_f64(),
            end_s: outage.end.as_secs_f64(),
            status: outage.status,
        }
    }
}

impl From<&Faults> for FaultsDocument {
    /// Every fault of `faults` and its seed.
    fn from(faults: &Faults) -> FaultsDocument {
        let latency = LatencyDoc::of;
        let errors = |errors: &ErrorRate| ErrorRateDoc {
            rate: errors.probability,
            status: errors.status,
        };
        let services = faults
            .services
            .iter()
            .map(|(service, operations)| {
                let operations = operations
                    .iter()
                    .map(|(name, op)| {
                        let doc = OperationFaultsDoc {
                            latency: op.latency.as_ref().map(LatencyDoc::of),
                            errors: op.errors.as_ref().map(errors),
                            outages: op.outages.iter().map(OutageDoc::of).collect(),
                            code: op.code.clone(),
                        };
                        (name.clone(), doc)
                    })
                    .collect();
                (*service, operations)
            })
            .collect();
        FaultsDocument {
            seed: Some(faults.seed),
            latency: ByClass::from_map(&faults.latency, latency),
            errors: ByClass::from_map(&faults.errors, errors),
            outages: faults.outages.iter().map(OutageDoc::of).collect(),
            services,
            resources: faults.resources.iter().map(ResourceFaultDoc::of).collect(),
        }
    }
}

impl TryFrom<FaultsDocument> for Faults {
    type Error = ConfigError;

    /// Checks the document as `PUT /admin/v1/faults` does.
    fn try_from(document: FaultsDocument) -> Result<Faults, ConfigError> {
        document
            .into_faults()
            .map_err(|problem| ConfigError::Invalid {
                problem: format!("faults: {problem}"),
            })
    }
}
