//! Reading an awsJson1_0 request body as Coral (the framework behind DynamoDB) reads it:
//! members of the wrong JSON type are `SerializationException`s, constraint violations
//! are collected into one `ValidationException` ("2 validation errors detected: …; …"),
//! unknown members are ignored.

use http::StatusCode;
use serde_json::{Map, Value};

use super::super::envelope::AwsError;

/// A body that is not a JSON object, or a member of the wrong JSON type.
pub(crate) fn serialization(message: impl Into<String>) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "SerializationException",
        message.into(),
    )
}

/// A `ValidationException` with `message` as DynamoDB words it.
pub(crate) fn validation(message: impl Into<String>) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "ValidationException",
        message.into(),
    )
}

/// DynamoDB's "One or more parameter values were invalid: …".
pub(crate) fn invalid(message: impl std::fmt::Display) -> AwsError {
    validation(format!(
        "One or more parameter values were invalid: {message}"
    ))
}

/// The request body as a JSON object. An empty body is an empty object.
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, AwsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(serialization(format!(
            "{} can not be converted to a structure",
            kind(&other)
        ))),
        Err(err) => Err(serialization(format!("Malformed JSON: {err}"))),
    }
}

/// The token name Coral's (Jackson's) errors give a JSON value.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "VALUE_NULL",
        Value::Bool(true) => "VALUE_TRUE",
        Value::Bool(false) => "VALUE_FALSE",
        Value::Number(_) => "NUMBER_VALUE",
        Value::String(_) => "STRING_VALUE",
        Value::Array(_) => "START_ARRAY",
        Value::Object(_) => "START_OBJECT",
    }
}

fn wrong(value: &Value, expected: &str) -> AwsError {
    match value {
        Value::Object(_) => serialization("Start of structure or map found where not expected."),
        Value::Array(_) => serialization("Start of list found where not expected"),
        other => serialization(format!(
            "{} can not be converted to {expected}",
            kind(other)
        )),
    }
}

/// The member `key` when `take` reads its JSON type (`null` is absent, as Coral reads
/// it); otherwise Coral's error for a value that is not `expected`.
fn member<'a, T>(
    map: &'a Map<String, Value>,
    key: &str,
    expected: &str,
    take: impl FnOnce(&'a Value) -> Option<T>,
) -> Result<Option<T>, AwsError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => take(value).map(Some).ok_or_else(|| wrong(value, expected)),
    }
}

/// The list member `key`, each item read by `take` (Coral's error for one that is not
/// `expected`).
fn items<'a, T>(
    map: &'a Map<String, Value>,
    key: &str,
    expected: &str,
    take: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<Vec<T>>, AwsError> {
    list(map, key)?
        .map(|items| {
            items
                .iter()
                .map(|item| take(item).ok_or_else(|| wrong(item, expected)))
                .collect()
        })
        .transpose()
}

/// A string member.
pub(crate) fn string<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, AwsError> {
    member(map, key, "a String", Value::as_str)
}

/// An integer member.
pub(crate) fn integer(map: &Map<String, Value>, key: &str) -> Result<Option<i64>, AwsError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| serialization(format!("Invalid integer value {n}"))),
        Some(other) => Err(wrong(other, "a Long")),
    }
}

/// A boolean member.
pub(crate) fn boolean(map: &Map<String, Value>, key: &str) -> Result<Option<bool>, AwsError> {
    member(map, key, "a Boolean", Value::as_bool)
}

/// A structure member.
pub(crate) fn structure<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, AwsError> {
    member(map, key, "a structure", Value::as_object)
}

/// A list member.
pub(crate) fn list<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a [Value]>, AwsError> {
    member(map, key, "a list", |v| v.as_array().map(Vec::as_slice))
}

/// A list of structures.
pub(crate) fn structures<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<Vec<&'a Map<String, Value>>>, AwsError> {
    items(map, key, "a structure", Value::as_object)
}

/// A list of strings.
pub(crate) fn strings<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<Vec<&'a str>>, AwsError> {
    items(map, key, "a String", Value::as_str)
}

/// Constraint violations, collected in member order and answered together.
#[derive(Debug, Default)]
pub(crate) struct Violations(Vec<String>);

impl Violations {
    /// A required member that is absent.
    pub fn null(&mut self, path: &str) {
        self.0.push(format!(
            "Value null at '{path}' failed to satisfy constraint: Member must not be null"
        ));
    }

    /// A string's length outside `min..=max` (in characters).
    pub fn length(&mut self, path: &str, value: &str, min: usize, max: usize) {
        self.count(path, value, value.chars().count(), min, max);
    }

    /// A list's length outside `min..=max`.
    pub fn count(&mut self, path: &str, shown: &str, len: usize, min: usize, max: usize) {
        self.outside(path, shown, "length", len, min, max);
    }

    /// A table or index name: 3 to 255 characters of `[a-zA-Z0-9_.-]`.
    pub fn name(&mut self, path: &str, value: &str) {
        self.length(path, value, 3, 255);
        let pattern_ok = value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !pattern_ok {
            self.0.push(format!(
                "Value '{value}' at '{path}' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
            ));
        }
    }

    /// A value outside an enum's set.
    pub fn one_of(&mut self, path: &str, value: &str, set: &[&str]) {
        if !set.contains(&value) {
            self.0.push(format!(
                "Value '{value}' at '{path}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                set.join(", ")
            ));
        }
    }

    /// A number below `min` (or above `max`).
    pub fn range(&mut self, path: &str, value: i64, min: i64, max: i64) {
        self.outside(path, value, "value", value, min, max);
    }

    /// `value` (shown as `shown`) outside `min..=max`, its `what` (length, value) named.
    fn outside<T: PartialOrd + std::fmt::Display>(
        &mut self,
        path: &str,
        shown: impl std::fmt::Display,
        what: &str,
        value: T,
        min: T,
        max: T,
    ) {
        let bound = if value < min {
            format!("greater than or equal to {min}")
        } else if value > max {
            format!("less than or equal to {max}")
        } else {
            return;
        };
        self.0.push(format!(
            "Value '{shown}' at '{path}' failed to satisfy constraint: Member must have {what} {bound}"
        ));
    }

    /// `Ok` without violations, else the `ValidationException` that lists them.
    pub fn finish(self) -> Result<(), AwsError> {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(validation(format!(
                "1 validation error detected: {}",
                self.0[0]
            ))),
            n => Err(validation(format!(
                "{n} validation errors detected: {}",
                self.0.join("; ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_are_serialization_errors_and_violations_are_counted() {
        let map = object(br#"{"TableName": 5, "Limit": "x", "Tags": {}}"#).unwrap();
        assert_eq!(
            string(&map, "TableName").unwrap_err().message,
            "NUMBER_VALUE can not be converted to a String"
        );
        assert_eq!(
            integer(&map, "Limit").unwrap_err().code,
            "SerializationException"
        );
        assert!(list(&map, "Tags").is_err());
        assert_eq!(object(b"[1]").unwrap_err().code, "SerializationException");
        assert_eq!(object(b"{").unwrap_err().code, "SerializationException");
        assert!(object(b"").unwrap().is_empty());

        let mut v = Violations::default();
        v.name("tableName", "a!");
        let err = v.finish().unwrap_err();
        assert_eq!(err.code, "ValidationException");
        assert!(
            err.message.starts_with("2 validation errors detected: Value 'a!' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3; "),
            "{}",
            err.message
        );
        assert!(Violations::default().finish().is_ok());
    }
}
