//! A group's fault and drift shares: resources whose cloud calls fail or drift.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::DurationText;

/// A share of a group with a per-resource cloud fault: exactly one of `error`,
/// `notFoundAfterCreate`, `slowCreate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawFaultShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// A lasting error: every Observe (and Create, Update, Delete) of AccessDenied fails
    /// with 403; Conflict fails creates with 409; Validation fails creates and updates
    /// with 400.
    #[serde(default)]
    #[schemars(with = "Option<ErrorName>")]
    pub error: Option<Spanned<ErrorName>>,
    /// The error code the cloud answers (default: the error's own, such as
    /// `AccessDenied`); for example `BucketAlreadyExists`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub code: Option<Spanned<String>>,
    /// With `error`: the error's answers carry this retry hint (`Retry-After`, whole
    /// seconds rounded up), which a provider that honours hints waits out
    /// (`retryAfterHonoured`).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub retry_after: Option<Spanned<String>>,
    /// Reads answer 404 for this long after the create (eventual consistency).
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub not_found_after_create: Option<Spanned<String>>,
    /// The create leaves the resource `creating` for this long.
    #[serde(default)]
    #[schemars(with = "Option<DurationText>")]
    pub slow_create: Option<Spanned<String>>,
}

/// A share of a group whose cloud resource never converges.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawDriftShare {
    /// Share of the group, in percent (0 < percent ≤ 100); rounded to whole resources.
    #[schemars(with = "f64")]
    pub percent: Spanned<f64>,
    /// The top-level `spec.forProvider` field the cloud reports differently (default: an
    /// extra field `drift`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub field: Option<Spanned<String>>,
}

/// A lasting cloud error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
pub enum ErrorName {
    /// 403: a missing permission; every action fails.
    AccessDenied,
    /// 409: the name is taken elsewhere; creates fail.
    Conflict,
    /// 400: the cloud refuses the spec; creates and updates fail.
    Validation,
}

/// A crossplane management policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema, serde::Serialize)]
pub enum PolicyName {
    /// Every action.
    #[serde(rename = "*")]
    All,
    /// Observe the cloud resource.
    Observe,
    /// Create it.
    Create,
    /// Update it.
    Update,
    /// Delete it.
    Delete,
    /// Late-initialize the spec from it.
    LateInitialize,
}
