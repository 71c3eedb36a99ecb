//! API errors and the `Status` objects that carry them to clients.

use serde_json::{Value, json};

/// An error answered to a client as a Kubernetes `Status` object.
///
/// Every variant maps to one HTTP code and one `reason`; clients (kube, kubectl) key on
/// those two, so the messages follow the real API server's wording only loosely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: the request itself is malformed (bad JSON, bad selector, bad query).
    #[error("{message}")]
    BadRequest {
        /// What was wrong.
        message: String,
    },
    /// 404: the object, the resource or the path does not exist.
    #[error("{message}")]
    NotFound {
        /// What was not found.
        message: String,
        /// The details (name, group, kind), when an object was looked up.
        details: Option<Box<Details>>,
    },
    /// 409: an object with this name already exists.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        /// `plural.group` of the resource.
        resource: String,
        /// The object name.
        name: String,
        /// The details for the `Status`.
        details: Box<Details>,
    },
    /// 409: an optimistic-concurrency or precondition failure.
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {reason}")]
    Conflict {
        /// `plural.group` of the resource.
        resource: String,
        /// The object name.
        name: String,
        /// Why.
        reason: String,
        /// The details for the `Status`.
        details: Box<Details>,
    },
    /// 409: a server-side apply that would change fields other managers own
    /// (`NewApplyConflict`), one `FieldManagerConflict` cause per field.
    #[error("{message}")]
    ApplyConflict {
        /// `Apply failed with N conflict(s): ...`.
        message: String,
        /// One per conflicting field.
        causes: Vec<Cause>,
    },
    /// 405: the verb is not supported on this path.
    #[error("{message}")]
    MethodNotAllowed {
        /// What was refused.
        message: String,
    },
    /// 410: a continue token or resourceVersion older than the kept history.
    #[error("{message}")]
    Expired {
        /// What expired.
        message: String,
    },
    /// 415: the request body's content type is not supported here.
    #[error(
        "the body of the request was in an unknown format - accepted media types include: {accepted}"
    )]
    UnsupportedMediaType {
        /// The accepted media types, comma separated.
        accepted: String,
    },
    /// 422: the object is invalid; one cause per offending field.
    #[error("{kind} \"{name}\" is invalid: {}", Cause::aggregate(causes))]
    Invalid {
        /// `Kind.group` of the object.
        kind: String,
        /// The object name.
        name: String,
        /// What is wrong, field by field (never empty).
        causes: Vec<Cause>,
        /// The details for the `Status`.
        details: Box<Details>,
    },
    /// 422 without causes: a JSON patch that does not apply. The real server answers it
    /// with `NewGenericServerResponse(422, …)`, which keeps only this generic message.
    #[error("the server rejected our request due to an error in our request")]
    PatchNotApplied,
    /// 429: server-side flow control refused the request.
    #[error("Too many requests, please try again later.")]
    TooManyRequests {
        /// Whole seconds the client should wait, sent as `Retry-After`.
        retry_after_secs: u64,
    },
    /// 500: a broken invariant inside the server.
    #[error("{message}")]
    Internal {
        /// What went wrong.
        message: String,
    },
}

/// One field's failure, as apimachinery's `field.Error` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// The `field.ErrorType`: `FieldValueRequired`, `FieldValueInvalid`, ...
    pub reason: &'static str,
    /// The field path, such as `spec.region`.
    pub field: String,
    /// The error without the field (`ErrorBody`): `Required value`, `Invalid value: 3: ...`.
    pub message: String,
}

impl Cause {
    /// `field: message`, as `field.Error.Error()` writes it.
    pub fn text(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }

    /// Several causes as `utilerrors.NewAggregate` prints them: one alone, more in brackets.
    pub fn aggregate(causes: &[Self]) -> String {
        match causes {
            [one] => one.text(),
            many => format!(
                "[{}]",
                many.iter().map(Self::text).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// The `details` of a `Status`: which object an error is about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Details {
    /// The object name.
    pub name: String,
    /// The API group (empty for core).
    pub group: String,
    /// The kind or resource.
    pub kind: String,
}

impl Details {
    /// Details naming an object of a resource.
    pub fn new(name: &str, group: &str, kind: &str) -> Self {
        Self {
            name: name.to_owned(),
            group: group.to_owned(),
            kind: kind.to_owned(),
        }
    }

    fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        if !self.name.is_empty() {
            map.insert("name".into(), json!(self.name));
        }
        if !self.group.is_empty() {
            map.insert("group".into(), json!(self.group));
        }
        if !self.kind.is_empty() {
            map.insert("kind".into(), json!(self.kind));
        }
        Value::Object(map)
    }
}

impl ApiError {
    /// A 400 with a message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::BadRequest {
            message: message.into(),
        }
    }

    /// A 404 about a path or resource rather than an object.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound {
            message: message.into(),
            details: None,
        }
    }

    /// A 500 with a message.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Internal {
            message: message.into(),
        }
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        match self {
            Self::BadRequest { .. } => 400,
            Self::NotFound { .. } => 404,
            Self::AlreadyExists { .. } | Self::Conflict { .. } | Self::ApplyConflict { .. } => 409,
            Self::MethodNotAllowed { .. } => 405,
            Self::Expired { .. } => 410,
            Self::UnsupportedMediaType { .. } => 415,
            Self::Invalid { .. } | Self::PatchNotApplied => 422,
            Self::TooManyRequests { .. } => 429,
            Self::Internal { .. } => 500,
        }
    }

    /// The machine-readable `reason` of the `Status`.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::BadRequest { .. } => "BadRequest",
            Self::NotFound { .. } => "NotFound",
            Self::AlreadyExists { .. } => "AlreadyExists",
            Self::Conflict { .. } | Self::ApplyConflict { .. } => "Conflict",
            Self::MethodNotAllowed { .. } => "MethodNotAllowed",
            Self::Expired { .. } => "Expired",
            Self::UnsupportedMediaType { .. } => "UnsupportedMediaType",
            Self::Invalid { .. } | Self::PatchNotApplied => "Invalid",
            Self::TooManyRequests { .. } => "TooManyRequests",
            Self::Internal { .. } => "InternalError",
        }
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let details = match self {
            Self::NotFound {
                details: Some(d), ..
            }
            | Self::AlreadyExists { details: d, .. }
            | Self::Conflict { details: d, .. } => Some(d.to_json()),
            Self::Invalid {
                details: d, causes, ..
            } => {
                let mut v = d.to_json();
                v["causes"] = causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                Some(v)
            }
            Self::ApplyConflict { causes, .. } => Some(json!({
                "causes": causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect::<Vec<_>>(),
            })),
            Self::PatchNotApplied => Some(json!({})),
            Self::TooManyRequests { retry_after_secs } => {
                Some(json!({ "retryAfterSeconds": retry_after_secs }))
            }
            _ => None,
        };
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "reason": self.reason(),
            "code": self.code(),
        });
        if let Some(details) = details {
            status["details"] = details;
        }
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_status_carries_code_reason_and_details() {
        let err = ApiError::Conflict {
            resource: "buckets.example.org".into(),
            name: "b1".into(),
            reason: "the object has been modified".into(),
            details: Box::new(Details::new("b1", "example.org", "buckets")),
        };
        let status = err.to_status();
        assert_eq!(status["code"], 409);
        assert_eq!(status["reason"], "Conflict");
        assert_eq!(status["details"]["name"], "b1");
        assert!(
            status["message"]
                .as_str()
                .unwrap()
                .contains("Operation cannot be fulfilled")
        );
    }

    #[test]
    fn too_many_requests_says_when_to_retry() {
        let status = ApiError::TooManyRequests {
            retry_after_secs: 3,
        }
        .to_status();
        assert_eq!(status["code"], 429);
        assert_eq!(status["details"]["retryAfterSeconds"], 3);
    }
}
