//! One write of a custom resource through its schema: prune (reporting unknown fields as
//! `fieldValidation` asks), default, validate (ratcheting unchanged values on updates).

use serde_json::Value;

use super::Structural;
use crate::error::{ApiError, Details};
use crate::registry::ResourceKind;

/// What a write does with fields the schema does not know (`?fieldValidation=`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and say so in `Warning` headers (the server's default).
    #[default]
    Warn,
    /// Refuse the write (400).
    Strict,
}

impl FieldValidation {
    /// Reads the query parameter; absent or empty is the default, `Warn`.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value.unwrap_or_default() {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got {other:?}"
            ))),
        }
    }
}

/// The value at a field path such as `spec.list[0].name`, if present.
fn resolve<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = value;
    for part in path.split('.') {
        let (key, indexes) = part
            .split_once('[')
            .map_or((part, ""), |(k, rest)| (k, rest));
        if !key.is_empty() {
            current = current.get(key)?;
        }
        for index in indexes.split('[').filter(|s| !s.is_empty()) {
            current = current.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(current)
}

impl Structural {
    /// Prunes, defaults and validates `object`, a whole custom resource of `kind`; `old`
    /// is the stored object on updates. Returns the `Warning` texts to send.
    pub fn admit(
        &self,
        kind: &ResourceKind,
        object: &mut Value,
        old: Option<&Value>,
        mode: FieldValidation,
    ) -> Result<Vec<String>, ApiError> {
        let unknown = self.prune(object);
        let unknown: Vec<String> = unknown
            .iter()
            .map(|path| format!("unknown field {}", super::validate::go_quote(path)))
            .collect();
        let warnings = match mode {
            FieldValidation::Strict if !unknown.is_empty() => {
                return Err(ApiError::bad_request(format!(
                    "{kind_name} in version {version:?} cannot be handled as a {kind_name}: strict decoding error: {}",
                    unknown.join(", "),
                    kind_name = kind.kind,
                    version = kind.version,
                )));
            }
            FieldValidation::Warn => unknown,
            _ => Vec::new(),
        };
        self.apply_defaults(object);
        let mut causes = self.validate(object, old);
        if let Some(old) = old {
            // Ratcheting (on by default since 1.30): an invalid value the update did not
            // change is allowed to stay.
            causes.retain(|cause| resolve(object, &cause.field) != resolve(old, &cause.field));
        }
        if causes.is_empty() {
            return Ok(warnings);
        }
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        Err(ApiError::Invalid {
            kind: format!("{}.{}", kind.kind, kind.group),
            details: Box::new(Details::new(&name, &kind.group, &kind.kind)),
            name,
            causes,
        })
    }
}
