//! Per-resource faults and management policies of a resource group, as validated: which
//! indexes get which cloud fault, and which resources can never become Ready.

use std::time::Duration;

use mock_cloud::LastingError;

/// What the cloud does to one share of a group.
#[derive(Clone, Debug, PartialEq)]
pub enum GroupFault {
    /// A lasting error (mock-cloud's per-resource `error`).
    Error {
        /// Which error.
        error: LastingError,
        /// The code it answers, if not the error's own.
        code: Option<String>,
        /// The retry hint (`Retry-After`) its answers carry, if any.
        retry_after: Option<Duration>,
    },
    /// Reads answer 404 for this long after the create.
    NotFoundAfterCreate(Duration),
    /// The create stays `creating` this long.
    SlowCreate(Duration),
    /// Every read reports this `spec.forProvider` field drifted (`None`: an extra field).
    Drift {
        /// The field.
        field: Option<String>,
    },
}

impl GroupFault {
    /// A short name for reports: `AccessDenied`, `drift`, `notFoundAfterCreate`, `slowCreate`.
    #[must_use]
    pub fn label(&self) -> &'static str {
        match self {
            GroupFault::Error { error, .. } => error.as_str(),
            GroupFault::NotFoundAfterCreate(_) => "notFoundAfterCreate",
            GroupFault::SlowCreate(_) => "slowCreate",
            GroupFault::Drift { .. } => "drift",
        }
    }

    /// Whether a resource with this fault never becomes Ready (a lasting error on its
    /// Observe or its Create).
    #[must_use]
    pub fn never_ready(&self) -> bool {
        matches!(self, GroupFault::Error { .. })
    }

    /// mock-cloud's effects of this fault: one, and a retry hint beside a lasting error
    /// that has one.
    #[must_use]
    pub fn effects(&self) -> Vec<mock_cloud::ResourceEffect> {
        match self {
            GroupFault::Error {
                retry_after: Some(after),
                ..
            } => vec![
                self.effect(),
                mock_cloud::ResourceEffect::RetryAfter { after: *after },
            ],
            _ => vec![self.effect()],
        }
    }

    /// mock-cloud's effect of this fault (without a lasting error's retry hint).
    #[must_use]
    pub fn effect(&self) -> mock_cloud::ResourceEffect {
        use mock_cloud::ResourceEffect as E;
        match self {
            GroupFault::Error { error, code, .. } => E::Error {
                error: *error,
                code: code.clone(),
                actions: None,
            },
            GroupFault::NotFoundAfterCreate(d) => E::NotFoundAfterCreate { duration: *d },
            GroupFault::SlowCreate(d) => E::SlowCreate { duration: *d },
            GroupFault::Drift { field } => E::Drift {
                field: field.clone(),
            },
        }
    }
}

/// A fault for the resources with index in `start..end`.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultShare {
    /// First index.
    pub start: u32,
    /// One past the last index.
    pub end: u32,
    /// The fault.
    pub fault: GroupFault,
}

impl FaultShare {
    /// How many resources it covers.
    #[must_use]
    pub fn len(&self) -> u32 {
        self.end - self.start
    }

    /// Whether it covers none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Whether `policies` (crossplane's `managementPolicies`) only observe.
#[must_use]
pub fn observe_only(policies: Option<&[String]>) -> bool {
    policies.is_some_and(|p| p.len() == 1 && p[0] == "Observe")
}
