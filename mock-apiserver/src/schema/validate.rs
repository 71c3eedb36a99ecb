//! Validation of a custom resource against its structural schema, with the field errors
//! the real server reports (kube-openapi's validators, converted by apiextensions'
//! `kubeOpenAPIResultToFieldErrors`).

use std::cmp::Ordering;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde_json::Value;

use super::Structural;
use crate::error::Cause;

/// The JSON type of a value, as kube-openapi names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A value as `field.Error` prints a bad value: strings quoted, numbers and booleans
/// bare, anything else as JSON.
pub(super) fn show(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => go_float(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Go's `%q` of a string (close enough: JSON escaping, which agrees on printable text).
pub(super) fn go_quote(text: &str) -> String {
    Value::from(text).to_string()
}

/// Go's `%v` of a float64 (strconv's shortest `%g`): exponent form when the exponent is
/// below -4 or at least 6 (`1e+06`), plain digits otherwise.
pub(super) fn go_float(value: f64) -> String {
    let scientific = format!("{value:e}");
    let (mantissa, exp) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if value != 0.0 && !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    value.to_string()
}

fn cause(reason: &'static str, field: &str, message: String) -> Cause {
    Cause {
        reason,
        field: field.to_owned(),
        message,
    }
}

fn invalid(field: &str, value: &Value, detail: String) -> Cause {
    cause(
        "FieldValueInvalid",
        field,
        format!("Invalid value: {}: {detail}", show(value)),
    )
}

/// A bound as kube-openapi prints it: an integer when both value and bound are.
fn bound(limit: f64, value: &Value) -> String {
    if (value.is_i64() || value.is_u64()) && limit == limit.trunc() {
        return format!("{limit:.0}");
    }
    go_float(limit)
}

impl Structural {
    /// Validates a whole custom resource; `path` prefixes are built as the apiserver's
    /// (`spec.list[0].name`).
    /// `old` is the stored object on updates: transition rules (`oldSelf`) compare with
    /// it.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        self.validate_at(object, old, &mut String::new(), &mut causes);
        causes
    }

    /// `path` is one buffer grown and cut back around each child, so a valid object
    /// costs no allocation for its field paths.
    fn validate_at(
        &self,
        value: &Value,
        old: Option<&Value>,
        path: &mut String,
        causes: &mut Vec<Cause>,
    ) {
        let name = if path.is_empty() {
            "<root>"
        } else {
            path.as_str()
        };
        if value.is_null() {
            if self.type_.is_some() && !self.nullable {
                let expected = self.expected_type();
                causes.push(cause(
                    "FieldValueTypeInvalid",
                    path,
                    format!(
                        "Invalid value: \"null\": {name} in body must be of type {expected}: \"null\""
                    ),
                ));
            }
            return;
        }
        if !self.type_matches(value) {
            let actual = type_name(value);
            let expected = self.expected_type();
            causes.push(cause(
                "FieldValueTypeInvalid",
                path,
                format!(
                    "Invalid value: \"{actual}\": {name} in body must be of type {expected}: \"{actual}\""
                ),
            ));
            return;
        }
        match value {
            Value::String(text) => self.validate_string(text, value, path, causes),
            Value::Number(n) => {
                if let Some(number) = n.as_f64() {
                    self.validate_number(number, value, path, causes);
                }
            }
            Value::Array(items) => self.validate_array(items, old, path, causes),
            Value::Object(map) => {
                for key in &self.required {
                    if !map.contains_key(key) {
                        let field = join(path, key);
                        causes.push(cause("FieldValueRequired", &field, "Required value".into()));
                    }
                }
                let count = map.len() as u64;
                if let Some(max) = self.max_properties.filter(|m| count > *m) {
                    causes.push(cause(
                        "FieldValueTooMany",
                        path,
                        format!("Too many: {count}: must have at most {max} {}", items(max)),
                    ));
                }
                if let Some(min) = self.min_properties.filter(|m| count < *m) {
                    causes.push(invalid(
                        path,
                        &Value::from(min),
                        format!("{name} in body should have at least {min} properties"),
                    ));
                }
                for (key, child) in map {
                    if let Some(schema) = self.child(key) {
                        let old_child = old.and_then(|o| o.get(key));
                        let len = path.len();
                        if len > 0 {
                            path.push('.');
                        }
                        path.push_str(key);
                        schema.validate_at(child, old_child, path, causes);
                        path.truncate(len);
                    }
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
        if !self.enum_.is_empty() && !self.enum_.contains(value) {
            let allowed: Vec<String> = self
                .enum_
                .iter()
                .map(|v| match v {
                    Value::String(s) => go_quote(s),
                    other => go_quote(&other.to_string()),
                })
                .collect();
            causes.push(cause(
                "FieldValueNotSupported",
                path,
                format!(
                    "Unsupported value: {}: supported values: {}",
                    show(value),
                    allowed.join(", ")
                ),
            ));
        }
        for rule in &self.rules {
            let Some(failure) = rule.check(value, old) else {
                continue;
            };
            let field = match &failure.field_path {
                Some(extra) => join(path, extra.trim_start_matches('.')),
                None => path.to_owned(),
            };
            let type_ = go_quote(self.type_.as_deref().unwrap_or_default());
            let (reason, message) = match failure.reason.as_str() {
                "FieldValueForbidden" => (
                    "FieldValueForbidden",
                    format!("Forbidden: {}", failure.message),
                ),
                "FieldValueRequired" => (
                    "FieldValueRequired",
                    format!("Required value: {}", failure.message),
                ),
                "FieldValueDuplicate" => {
                    ("FieldValueDuplicate", format!("Duplicate value: {type_}"))
                }
                _ => (
                    "FieldValueInvalid",
                    format!("Invalid value: {type_}: {}", failure.message),
                ),
            };
            causes.push(cause(reason, &field, message));
        }
    }

    fn expected_type(&self) -> String {
        if self.int_or_string {
            "integer,string".into()
        } else {
            self.type_.clone().unwrap_or_default()
        }
    }

    fn type_matches(&self, value: &Value) -> bool {
        if self.int_or_string {
            return value.is_string() || is_integer(value);
        }
        match self.type_.as_deref() {
            None => true,
            Some("integer") => is_integer(value),
            Some("number") => value.is_number(),
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("array") => value.is_array(),
            Some("object") => value.is_object(),
            Some(_) => true,
        }
    }

    fn validate_string(&self, text: &str, value: &Value, path: &str, causes: &mut Vec<Cause>) {
        let name = path;
        let length = text.chars().count() as u64;
        if let Some(max) = self.max_length.filter(|m| length > *m) {
            causes.push(cause(
                "FieldValueTooLong",
                path,
                format!(
                    "Too long: may not be more than {max} {}",
                    if max == 1 { "byte" } else { "bytes" }
                ),
            ));
        }
        if let Some(min) = self.min_length.filter(|m| length < *m) {
            causes.push(invalid(
                path,
                value,
                format!("{name} in body should be at least {min} chars long"),
            ));
        }
        if let Some((source, regex)) = &self.pattern
            && !regex.is_match(text)
        {
            causes.push(invalid(
                path,
                value,
                format!("{name} in body should match '{source}'"),
            ));
        }
        if let Some(format) = &self.format
            && !format_matches(format, text)
        {
            causes.push(cause(
                "FieldValueTypeInvalid",
                path,
                format!(
                    "Invalid value: {}: {name} in body must be of type {format}: {}",
                    go_quote(text),
                    go_quote(text)
                ),
            ));
        }
    }

    fn validate_number(&self, number: f64, value: &Value, path: &str, causes: &mut Vec<Cause>) {
        let name = path;
        if let Some(factor) = self.multiple_of
            && factor > 0.0
            && (number / factor).fract() != 0.0
        {
            causes.push(invalid(
                path,
                value,
                format!(
                    "{name} in body should be a multiple of {}",
                    bound(factor, value)
                ),
            ));
        }
        let limits = [
            (
                self.maximum,
                self.exclusive_maximum,
                "less than",
                Ordering::Greater,
            ),
            (
                self.minimum,
                self.exclusive_minimum,
                "greater than",
                Ordering::Less,
            ),
        ];
        for (limit, exclusive, relation, beyond) in limits {
            let Some(limit) = limit else { continue };
            // Past the limit, or on it when it is exclusive.
            let out = match number.partial_cmp(&limit) {
                Some(Ordering::Equal) => exclusive,
                Some(order) => order == beyond,
                None => false,
            };
            if out {
                let relation = if exclusive {
                    relation.to_owned()
                } else {
                    format!("{relation} or equal to")
                };
                causes.push(invalid(
                    path,
                    value,
                    format!(
                        "{name} in body should be {relation} {}",
                        bound(limit, value)
                    ),
                ));
            }
        }
    }

    fn validate_array(
        &self,
        list: &[Value],
        old: Option<&Value>,
        path: &mut String,
        causes: &mut Vec<Cause>,
    ) {
        if let Some(schema) = &self.items {
            for (i, item) in list.iter().enumerate() {
                // Only map lists correlate items with the old list (by their keys).
                let old_item = old.and_then(Value::as_array).and_then(|old_items| {
                    (self.list_type.as_deref() == Some("map") && !self.list_map_keys.is_empty())
                        .then(|| {
                            old_items.iter().find(|o| {
                                self.list_map_keys.iter().all(|k| o.get(k) == item.get(k))
                            })
                        })
                        .flatten()
                });
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                schema.validate_at(item, old_item, path, causes);
                path.truncate(len);
            }
        }
        let size = list.len() as u64;
        if let Some(min) = self.min_items.filter(|m| size < *m) {
            causes.push(invalid(
                path,
                &Value::from(size),
                format!("{path} in body should have at least {min} items"),
            ));
        }
        if let Some(max) = self.max_items.filter(|m| size > *m) {
            causes.push(cause(
                "FieldValueTooMany",
                path,
                format!("Too many: {size}: must have at most {max} {}", items(max)),
            ));
        }
        match self.list_type.as_deref() {
            Some("set") => {
                for (i, item) in list.iter().enumerate() {
                    if list[..i].contains(item) {
                        causes.push(cause(
                            "FieldValueDuplicate",
                            &format!("{path}[{i}]"),
                            format!("Duplicate value: {}", show(item)),
                        ));
                    }
                }
            }
            Some("map") if !self.list_map_keys.is_empty() => {
                let key_of = |item: &Value| -> Value {
                    let mut key = serde_json::Map::new();
                    for k in &self.list_map_keys {
                        if let Some(v) = item.get(k) {
                            key.insert(k.clone(), v.clone());
                        }
                    }
                    Value::Object(key)
                };
                let keys: Vec<Value> = list.iter().map(key_of).collect();
                for (i, key) in keys.iter().enumerate() {
                    if keys[..i].contains(key) {
                        causes.push(cause(
                            "FieldValueDuplicate",
                            &format!("{path}[{i}]"),
                            format!("Duplicate value: {key}"),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

fn items(n: u64) -> &'static str {
    if n == 1 { "item" } else { "items" }
}

fn is_integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f == f.trunc())
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The formats apiextensions validates that are common in CRDs; others pass.
fn format_matches(format: &str, text: &str) -> bool {
    match format {
        "date-time" | "datetime" => text.parse::<jiff::Timestamp>().is_ok(),
        "date" => text.parse::<jiff::civil::Date>().is_ok() && text.len() == 10,
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .is_ok()
        }
        "uuid" | "uuid3" | "uuid4" | "uuid5" => is_uuid(text),
        "ipv4" => text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            let bits: Option<u8> = bits.parse().ok();
            match (ip.parse::<Ipv4Addr>(), ip.parse::<Ipv6Addr>(), bits) {
                (Ok(_), _, Some(b)) => b <= 32,
                (_, Ok(_), Some(b)) => b <= 128,
                _ => false,
            }
        }),
        "hostname" => {
            !text.is_empty()
                && text.len() <= 255
                && text.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        }
        "email" => text
            .split_once('@')
            .is_some_and(|(user, domain)| !user.is_empty() && domain.contains('.')),
        _ => true,
    }
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}
