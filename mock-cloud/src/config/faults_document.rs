//! The faults document: the config's `faults` block and the body of
//! `PUT /admin/v1/faults`, read into [`Faults`] and written from them.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::parts::{ByClass, millis};
use super::{ConfigError, ErrorRate, Faults, Latency, OperationFaults, Outage};
use crate::service::Service;

/// Faults as written: the `faults` block of a config document and the body of
/// `PUT /admin/v1/faults` (JSON).
///
/// `seed`; `latency` and `errors` per class (`read`, `list`, `mutate`, `delete`) of the
/// generic API; a list of `outages` (every service); `services`: per AWS service, per
/// operation name (or `*`), its `latency`, `errors`, `outages` and the error `code` they
/// answer. Unknown keys are errors. Latency is in whole milliseconds
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
