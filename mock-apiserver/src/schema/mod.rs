//! Structural schemas of custom resources: what the real API server does with a CRD
//! version's `openAPIV3Schema` on every write (pruning, defaulting, validation) and on
//! reads (defaulting).
//!
//! # Semantics
//! Each mirrors `k8s.io/apiextensions-apiserver/pkg/apiserver/schema`:
//! - [`Structural::prune`] drops fields the schema does not declare (kept under
//!   `x-kubernetes-preserve-unknown-fields`, inside `additionalProperties`, and
//!   `apiVersion`/`kind`/`metadata` at the root and in embedded resources) and returns
//!   their paths, which `fieldValidation=Strict|Warn` report;
//! - [`Structural::apply_defaults`] sets each missing property (or `null` one, unless
//!   `nullable`) to its schema default, top-down, then descends;
//! - [`Structural::validate`] checks type, nullability, required, enum, pattern, format,
//!   length, bounds, item and property counts, list uniqueness
//!   (`x-kubernetes-list-type: set|map`) and `x-kubernetes-validations` rules that are
//!   plain comparisons ([`Rule`]; a rule beyond them is logged when the CRD loads and
//!   not enforced), and reports failures as the apiserver's field errors.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::Value;

mod admit;
mod default;
mod prune;
mod rules;
mod validate;

pub use admit::FieldValidation;
pub use rules::Rule;

/// One node of a structural schema.
#[derive(Debug, Clone, Default)]
pub struct Structural {
    type_: Option<String>,
    nullable: bool,
    int_or_string: bool,
    preserve_unknown: bool,
    embedded_resource: bool,
    properties: BTreeMap<String, Structural>,
    additional_properties: Option<Box<Structural>>,
    items: Option<Box<Structural>>,
    required: Vec<String>,
    enum_: Vec<Value>,
    pattern: Option<(String, Regex)>,
    format: Option<String>,
    minimum: Option<f64>,
    exclusive_minimum: bool,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    default: Option<Value>,
    list_type: Option<String>,
    list_map_keys: Vec<String>,
    map_type: Option<String>,
    rules: Vec<Rule>,
}

/// A schema this server cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A `pattern` that is not a regular expression.
    #[error("{path}.pattern: {pattern:?} is not a regular expression")]
    Pattern {
        /// Where in the schema.
        path: String,
        /// The pattern.
        pattern: String,
    },
}

fn count(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

impl Structural {
    /// Compiles a CRD version's `openAPIV3Schema`.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        Self::compile_at(schema, "openAPIV3Schema")
    }

    fn compile_at(schema: &Value, path: &str) -> Result<Self, SchemaError> {
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        let text = |key: &str| schema.get(key).and_then(Value::as_str).map(str::to_owned);
        let texts = |key: &str| -> Vec<String> {
            schema
                .get(key)
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut node = Self {
            type_: text("type"),
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            required: texts("required"),
            enum_: schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            format: text("format"),
            minimum: schema.get("minimum").and_then(Value::as_f64),
            exclusive_minimum: flag("exclusiveMinimum"),
            maximum: schema.get("maximum").and_then(Value::as_f64),
            exclusive_maximum: flag("exclusiveMaximum"),
            multiple_of: schema.get("multipleOf").and_then(Value::as_f64),
            min_length: count(schema, "minLength"),
            max_length: count(schema, "maxLength"),
            min_items: count(schema, "minItems"),
            max_items: count(schema, "maxItems"),
            min_properties: count(schema, "minProperties"),
            max_properties: count(schema, "maxProperties"),
            default: schema.get("default").cloned(),
            list_type: text("x-kubernetes-list-type"),
            list_map_keys: texts("x-kubernetes-list-map-keys"),
            map_type: text("x-kubernetes-map-type"),
            ..Self::default()
        };
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            let regex = Regex::new(pattern).map_err(|_| SchemaError::Pattern {
                path: path.to_owned(),
                pattern: pattern.to_owned(),
            })?;
            node.pattern = Some((pattern.to_owned(), regex));
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let child = Self::compile_at(property, &format!("{path}.properties[{name}]"))?;
                node.properties.insert(name.clone(), child);
            }
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            let child = Self::compile_at(additional, &format!("{path}.additionalProperties"))?;
            node.additional_properties = Some(Box::new(child));
        }
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            node.items = Some(Box::new(Self::compile_at(items, &format!("{path}.items"))?));
        }
        if let Some(rules) = schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
        {
            for rule in rules {
                match Rule::compile(rule) {
                    Ok(rule) => node.rules.push(rule),
                    // A real CRD must keep loading: the rule is reported, not enforced.
                    Err(detail) => {
                        tracing::warn!(path, %detail, "x-kubernetes-validations rule not evaluated");
                    }
                }
            }
        }
        Ok(node)
    }

    /// The schema of property `name`, when declared.
    pub fn property(&self, name: &str) -> Option<&Structural> {
        self.properties.get(name)
    }

    /// The schema of undeclared properties (`additionalProperties`).
    pub fn additional_properties(&self) -> Option<&Structural> {
        self.additional_properties.as_deref()
    }

    /// The schema of list items.
    pub fn items(&self) -> Option<&Structural> {
        self.items.as_deref()
    }

    /// Whether undeclared fields are kept (`x-kubernetes-preserve-unknown-fields`).
    pub fn preserves_unknown_fields(&self) -> bool {
        self.preserve_unknown
    }

    /// `x-kubernetes-list-type`, when set.
    pub fn list_type(&self) -> Option<&str> {
        self.list_type.as_deref()
    }

    /// `x-kubernetes-list-map-keys`.
    pub fn list_map_keys(&self) -> &[String] {
        &self.list_map_keys
    }

    /// The `default`, when set.
    pub fn default_value(&self) -> Option<&Value> {
        self.default.as_ref()
    }

    /// `x-kubernetes-map-type`, when set.
    pub fn map_type(&self) -> Option<&str> {
        self.map_type.as_deref()
    }

    /// Whether anything under this node has a default (so reads need defaulting).
    pub fn has_defaults(&self) -> bool {
        self.default.is_some()
            || self.properties.values().any(Self::has_defaults)
            || self
                .additional_properties
                .as_deref()
                .is_some_and(Self::has_defaults)
            || self.items.as_deref().is_some_and(Self::has_defaults)
    }
}

#[cfg(test)]
mod tests;
