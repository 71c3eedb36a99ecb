//! Turning stored objects into response bodies: plain objects and lists, `core/v1`
//! Events, `meta.k8s.io/v1` Tables and PartialObjectMetadata.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};

use crate::clock;
use crate::events;
use crate::jsonpath;
use crate::object::StoredObject;
use crate::registry::{ResourceKind, View};
use crate::store::EventType;

/// The representation a client asked for with its `Accept` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The objects themselves.
    Object,
    /// A `meta.k8s.io/v1` Table (kubectl get).
    Table,
    /// `PartialObjectMetadata` (kube's metadata API).
    Metadata,
}

impl Format {
    /// Chooses a format from an `Accept` header; anything unknown gets plain JSON.
    pub fn from_accept(accept: &str) -> Self {
        let first = accept.split(',').next().unwrap_or_default();
        if first.contains("as=Table") {
            Self::Table
        } else if first.contains("as=PartialObjectMetadata") {
            Self::Metadata
        } else {
            Self::Object
        }
    }
}

/// Renders objects of one kind in one format.
#[derive(Debug, Clone)]
pub struct Renderer {
    kind: Arc<ResourceKind>,
    format: Format,
    /// Now, in seconds since the epoch, for Age cells.
    now: i64,
    expected_prefix: Vec<u8>,
}

impl Renderer {
    /// A renderer for `kind` in `format`; `now` is seconds since the epoch.
    pub fn new(kind: Arc<ResourceKind>, format: Format, now: i64) -> Self {
        let expected_prefix = format!("{{\"apiVersion\":\"{}\"", kind.api_version()).into_bytes();
        Self {
            kind,
            format,
            now,
            expected_prefix,
        }
    }

    /// The object as this kind's version presents it (converted when needed).
    pub fn value(&self, object: &StoredObject) -> Value {
        let value = object.to_value();
        match self.kind.view {
            View::CoreEvents => events::to_core(&value),
            View::Plain => self.with_version(value),
        }
    }

    fn with_version(&self, mut value: Value) -> Value {
        if value["apiVersion"] != self.kind.api_version() {
            value["apiVersion"] = json!(self.kind.api_version());
        }
        value
    }

    /// The object's JSON as served: the stored bytes when no conversion is needed.
    pub fn object_json(&self, object: &StoredObject) -> Bytes {
        if self.kind.view == View::Plain && object.json.starts_with(&self.expected_prefix) {
            return object.json.clone();
        }
        Bytes::from(serde_json::to_vec(&self.value(object)).unwrap_or_default())
    }

    /// A single-object response body.
    pub fn object(&self, object: &StoredObject) -> Bytes {
        match self.format {
            Format::Object => self.object_json(object),
            Format::Table => {
                to_bytes(&self.table(std::slice::from_ref(&Arc::new(object.clone())), None, true))
            }
            Format::Metadata => to_bytes(&self.metadata(object)),
        }
    }

    /// A list response body; `continue_token` is set when more pages follow.
    pub fn list(
        &self,
        items: &[Arc<StoredObject>],
        resource_version: u64,
        continue_token: Option<&str>,
    ) -> Bytes {
        match self.format {
            Format::Table => {
                let mut table = self.table(items, Some(resource_version), true);
                if let Some(token) = continue_token {
                    table["metadata"]["continue"] = json!(token);
                }
                to_bytes(&table)
            }
            Format::Object | Format::Metadata => {
                let (api_version, kind) = match self.format {
                    Format::Metadata => (
                        "meta.k8s.io/v1".to_owned(),
                        "PartialObjectMetadataList".to_owned(),
                    ),
                    _ => (self.kind.api_version(), format!("{}List", self.kind.kind)),
                };
                let continued = continue_token
                    .map(|t| format!(",\"continue\":{}", Value::from(t)))
                    .unwrap_or_default();
                let head = format!(
                    "{{\"apiVersion\":\"{api_version}\",\"kind\":\"{kind}\",\"metadata\":{{\"resourceVersion\":\"{resource_version}\"{continued}}},\"items\":["
                );
                let body_len: usize = items.iter().map(|o| o.json.len() + 1).sum();
                let mut out = BytesMut::with_capacity(head.len() + body_len + 2);
                out.put_slice(head.as_bytes());
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.put_u8(b',');
                    }
                    match self.format {
                        Format::Metadata => out.put_slice(&to_bytes(&self.metadata(item))),
                        _ => out.put_slice(&self.object_json(item)),
                    }
                }
                out.put_slice(b"]}");
                out.freeze()
            }
        }
    }

    /// One line of a watch stream, newline-terminated.
    pub fn watch_line(&self, event: EventType, object: &StoredObject) -> Bytes {
        let body = match self.format {
            Format::Object => self.object_json(object),
            Format::Table => {
                to_bytes(&self.table(std::slice::from_ref(&Arc::new(object.clone())), None, true))
            }
            Format::Metadata => to_bytes(&self.metadata(object)),
        };
        let mut out = BytesMut::with_capacity(body.len() + 32);
        out.put_slice(b"{\"type\":\"");
        out.put_slice(event.as_str().as_bytes());
        out.put_slice(b"\",\"object\":");
        out.put_slice(&body);
        out.put_slice(b"}\n");
        out.freeze()
    }

    /// A BOOKMARK line; `initial_events_end` marks the end of a streaming list.
    pub fn bookmark_line(&self, resource_version: u64, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({"resourceVersion": resource_version.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let (api_version, kind) = match self.format {
            Format::Table => ("meta.k8s.io/v1".to_owned(), "Table".to_owned()),
            Format::Metadata => (
                "meta.k8s.io/v1".to_owned(),
                "PartialObjectMetadata".to_owned(),
            ),
            Format::Object => (self.kind.api_version(), self.kind.kind.clone()),
        };
        line(
            &json!({"type": "BOOKMARK", "object": {"apiVersion": api_version, "kind": kind, "metadata": metadata}}),
        )
    }

    fn metadata(&self, object: &StoredObject) -> Value {
        let value = self.value(object);
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": value["metadata"]})
    }

    fn table(
        &self,
        items: &[Arc<StoredObject>],
        resource_version: Option<u64>,
        with_columns: bool,
    ) -> Value {
        let columns = &self.kind.printer_columns;
        let mut definitions = vec![json!({
            "name": "Name", "type": "string", "format": "name", "priority": 0,
            "description": "Name must be unique within a namespace."
        })];
        for c in columns {
            definitions.push(json!({
                "name": c.name, "type": if c.type_ == "date" { "string" } else { c.type_.as_str() },
                "format": "", "priority": c.priority, "description": c.description
            }));
        }
        if columns.is_empty() {
            definitions.push(json!({
                "name": "Age", "type": "string", "format": "", "priority": 0,
                "description": "CreationTimestamp is a timestamp representing the server time when this object was created."
            }));
        }
        let rows: Vec<Value> = items
            .iter()
            .map(|object| {
                let value = self.value(object);
                let mut cells = vec![value["metadata"]["name"].clone()];
                for c in columns {
                    cells.push(self.cell(&value, &c.json_path, &c.type_));
                }
                if columns.is_empty() {
                    cells.push(self.cell(&value, ".metadata.creationTimestamp", "date"));
                }
                json!({
                    "cells": cells,
                    "object": {"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": value["metadata"]}
                })
            })
            .collect();
        let mut table =
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "Table", "metadata": {}, "rows": rows});
        if with_columns {
            table["columnDefinitions"] = Value::Array(definitions);
        }
        if let Some(rv) = resource_version {
            table["metadata"]["resourceVersion"] = json!(rv.to_string());
        }
        table
    }

    fn cell(&self, value: &Value, path: &str, type_: &str) -> Value {
        let found = jsonpath::evaluate(value, path);
        let Some(first) = found.first() else {
            return Value::Null;
        };
        if type_ == "date" {
            return match first.as_str().and_then(clock::parse_rfc3339) {
                Some(t) => json!(clock::human_age(self.now - t)),
                None => (*first).clone(),
            };
        }
        if found.len() > 1 {
            let parts: Vec<String> = found
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            return json!(parts.join(","));
        }
        (*first).clone()
    }
}

fn to_bytes(value: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}

/// A JSON value as one newline-terminated watch line.
pub fn line(value: &Value) -> Bytes {
    let mut out = serde_json::to_vec(value).unwrap_or_default();
    out.push(b'\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{PrinterColumn, Registry};

    #[test]
    fn lists_splice_stored_bytes_and_carry_the_resource_version() {
        let kind = Registry::with_builtins()
            .get("", "v1", "configmaps")
            .unwrap();
        let object = StoredObject::from_value(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            3,
        );
        let renderer = Renderer::new(kind, Format::Object, 0);
        let list: Value =
            serde_json::from_slice(&renderer.list(&[Arc::new(object)], 9, None)).unwrap();
        assert_eq!(list["kind"], "ConfigMapList");
        assert_eq!(list["metadata"]["resourceVersion"], "9");
        assert_eq!(list["items"][0]["metadata"]["name"], "a");
    }

    #[test]
    fn tables_render_printer_columns_and_ages() {
        let mut kind = (*Registry::with_builtins()
            .get("", "v1", "configmaps")
            .unwrap())
        .clone();
        kind.printer_columns = vec![
            PrinterColumn {
                name: "Ready".into(),
                type_: "string".into(),
                json_path: r#".status.conditions[?(@.type=="Ready")].status"#.into(),
                priority: 0,
                description: String::new(),
            },
            PrinterColumn {
                name: "Age".into(),
                type_: "date".into(),
                json_path: ".metadata.creationTimestamp".into(),
                priority: 0,
                description: String::new(),
            },
        ];
        let object = StoredObject::from_value(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "creationTimestamp": "2026-11-21T10:00:00Z"},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
            3,
        );
        let now = clock::parse_rfc3339("2026-11-21T10:05:00Z").unwrap();
        let renderer = Renderer::new(
            Arc::new(kind),
            Format::from_accept("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
            now,
        );
        let table: Value =
            serde_json::from_slice(&renderer.list(&[Arc::new(object)], 9, None)).unwrap();
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 3);
        assert_eq!(table["rows"][0]["cells"], json!(["a", "True", "5m"]));
        assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    }

    #[test]
    fn watch_lines_are_newline_terminated_json() {
        let kind = Registry::with_builtins()
            .get("", "v1", "configmaps")
            .unwrap();
        let object = StoredObject::from_value(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            3,
        );
        let renderer = Renderer::new(kind, Format::Object, 0);
        let line = renderer.watch_line(EventType::Added, &object);
        assert!(line.ends_with(b"\n"));
        let event: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(event["type"], "ADDED");
        let bookmark: Value = serde_json::from_slice(&renderer.bookmark_line(12, true)).unwrap();
        assert_eq!(
            bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
    }
}
