//! The built-in function's `input`: raw as written in a Composition, then validated.
//!
//! ```yaml
//! apiVersion: composer.loadtest.dev/v1alpha1
//! kind: Resources
//! ttl: 30s                      # optional: meta.ttl of every response (a Go duration)
//! resources:
//!   - name: bucket              # composed resources bucket-0, bucket-1, ...
//!     count: 2                  # optional, default 1
//!     countFromFieldPath: spec.buckets  # optional: the XR's field wins over count
//!     base:                     # the composed resource before patches
//!       apiVersion: s3.aws.upbound.io/v1beta1
//!       kind: Bucket
//!     patches:                  # XR spec -> composed resource; a missing source is skipped
//!       - fromFieldPath: spec.region
//!         toFieldPath: spec.forProvider.region
//!     readinessCheck:           # optional, this is the default
//!       type: MatchCondition
//!       matchCondition: {type: Ready, status: "True"}
//! ```

use std::collections::BTreeSet;
use std::time::Duration;

use limiter::go::GoDuration;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::fieldpath::{FieldPath, FieldPathError};

/// The input's `apiVersion`.
pub const API_VERSION: &str = "composer.loadtest.dev/v1alpha1";
/// The input's `kind`.
pub const KIND: &str = "Resources";

/// The input as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawInput {
    api_version: String,
    kind: String,
    #[serde(default)]
    ttl: Option<String>,
    #[serde(default)]
    resources: Vec<RawTemplate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawTemplate {
    name: String,
    #[serde(default)]
    count: Option<u32>,
    #[serde(default)]
    count_from_field_path: Option<String>,
    base: Map<String, Value>,
    #[serde(default)]
    patches: Vec<RawPatch>,
    #[serde(default)]
    readiness_check: Option<RawReadinessCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPatch {
    from_field_path: String,
    to_field_path: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawReadinessCheck {
    r#type: String,
    #[serde(default)]
    match_condition: Option<RawMatchCondition>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatchCondition {
    r#type: String,
    status: String,
}

/// The validated input.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// The TTL of every response, if any.
    pub ttl: Option<Duration>,
    /// The templates, in order.
    pub templates: Vec<Template>,
}

/// One resource template.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// The prefix of the composed resources' names: `{name}-{index}`.
    pub name: String,
    /// How many, unless the XR says otherwise.
    pub count: u32,
    /// Where in the XR the count may be given.
    pub count_from: Option<FieldPath>,
    /// The composed resource before patches.
    pub base: Map<String, Value>,
    /// The patches, in order.
    pub patches: Vec<Patch>,
    /// How readiness is judged.
    pub readiness: Readiness,
}

/// Copies the XR's value at `from` to the composed resource's `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// In the XR.
    pub from: FieldPath,
    /// In the composed resource.
    pub to: FieldPath,
}

/// How a composed resource's readiness is judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Ready when the observed resource has a condition of this type with this status.
    MatchCondition {
        /// The condition's type.
        r#type: String,
        /// Its status (`"True"`, `"False"`, `"Unknown"`).
        status: String,
    },
    /// Always ready.
    None,
}

impl Default for Readiness {
    /// `Ready` is `"True"`: patch-and-transform's default.
    fn default() -> Self {
        Readiness::MatchCondition {
            r#type: "Ready".into(),
            status: "True".into(),
        }
    }
}

/// Why an input is refused; the function answers it as a FATAL result.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The step has no input.
    #[error("the step has no input; this function needs a {KIND} ({API_VERSION})")]
    Missing,
    /// The input does not have the input's shape.
    #[error("the input is not a {KIND} ({API_VERSION})")]
    Shape(#[source] serde_json::Error),
    /// Another apiVersion or kind.
    #[error("the input is {api_version}, {kind}; this function takes {API_VERSION}, {KIND}")]
    WrongKind {
        /// As written.
        api_version: String,
        /// As written.
        kind: String,
    },
    /// A template name is empty or repeated.
    #[error("resources[{index}]: name {name:?} is empty or repeated")]
    BadName {
        /// The template's index.
        index: usize,
        /// Its name.
        name: String,
    },
    /// A field path does not parse.
    #[error("resources[{index}]")]
    FieldPath {
        /// The template's index.
        index: usize,
        /// The path's problem.
        #[source]
        source: FieldPathError,
    },
    /// The readiness check is not one this function knows.
    #[error(
        "resources[{index}].readinessCheck: type {found:?} is not MatchCondition or None, or MatchCondition lacks matchCondition"
    )]
    Readiness {
        /// The template's index.
        index: usize,
        /// The type as written.
        found: String,
    },
    /// The TTL is not a non-negative Go duration.
    #[error("ttl {ttl:?} is not a non-negative duration such as 30s or 1m")]
    Ttl {
        /// As written.
        ttl: String,
    },
}

impl Input {
    /// Validates a step's input.
    ///
    /// # Errors
    /// The first problem found.
    pub fn from_json(input: Option<Map<String, Value>>) -> Result<Input, InputError> {
        let raw: RawInput =
            serde_json::from_value(Value::Object(input.ok_or(InputError::Missing)?))
                .map_err(InputError::Shape)?;
        if raw.api_version != API_VERSION || raw.kind != KIND {
            return Err(InputError::WrongKind {
                api_version: raw.api_version,
                kind: raw.kind,
            });
        }
        let ttl = raw.ttl.map(parse_ttl).transpose()?;
        let mut names = BTreeSet::new();
        let templates = raw
            .resources
            .into_iter()
            .enumerate()
            .map(|(index, t)| {
                if t.name.is_empty() || !names.insert(t.name.clone()) {
                    return Err(InputError::BadName {
                        index,
                        name: t.name,
                    });
                }
                let path = |p: &str| {
                    FieldPath::parse(p).map_err(|source| InputError::FieldPath { index, source })
                };
                let patches = t
                    .patches
                    .iter()
                    .map(|p| {
                        Ok(Patch {
                            from: path(&p.from_field_path)?,
                            to: path(&p.to_field_path)?,
                        })
                    })
                    .collect::<Result<_, InputError>>()?;
                let readiness = match t.readiness_check {
                    None => Readiness::default(),
                    Some(RawReadinessCheck {
                        r#type,
                        match_condition,
                    }) => match (r#type.as_str(), match_condition) {
                        ("None", _) => Readiness::None,
                        ("MatchCondition", Some(m)) => Readiness::MatchCondition {
                            r#type: m.r#type,
                            status: m.status,
                        },
                        _ => {
                            return Err(InputError::Readiness {
                                index,
                                found: r#type,
                            });
                        }
                    },
                };
                Ok(Template {
                    count: t.count.unwrap_or(1),
                    count_from: t.count_from_field_path.as_deref().map(path).transpose()?,
                    name: t.name,
                    base: t.base,
                    patches,
                    readiness,
                })
            })
            .collect::<Result<_, InputError>>()?;
        Ok(Input { ttl, templates })
    }
}

fn parse_ttl(ttl: String) -> Result<Duration, InputError> {
    match GoDuration::parse(&ttl) {
        Ok(d) if d.as_nanos() >= 0 => Ok(d.to_std()),
        _ => Err(InputError::Ttl { ttl }),
    }
}
