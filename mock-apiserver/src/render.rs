//! Turning stored objects into response bodies: plain objects and lists, `core/v1`
//! Events, `meta.k8s.io/v1` Tables and PartialObjectMetadata.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use http::{Response, StatusCode};
use serde_json::{Value, json};

use crate::clock;
use crate::events;
use crate::jsonpath;
use crate::object::StoredObject;
use crate::protobuf;
use crate::registry::{ResourceKind, View};
use crate::response::{ResponseBody, bytes_response};
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
    /// The objects themselves, as protobuf (client-go's clientsets, kubectl's typed calls).
    Protobuf,
}

impl Format {
    /// Chooses a format from an `Accept` header: the first media range this server can
    /// answer for objects of `api_version` and `kind` (protobuf only for built-in kinds
    /// that have a message, Tables and metadata only as JSON); anything else gets JSON.
    pub fn from_accept(accept: &str, api_version: &str, kind: &str) -> Self {
        for range in accept.split(',') {
            let media = range.split(';').next().unwrap_or_default().trim();
            if range.contains("as=Table") {
                if media == "application/json" {
                    return Self::Table;
                }
            } else if range.contains("as=PartialObjectMetadata") {
                if media == "application/json" {
                    return Self::Metadata;
                }
            } else if media == protobuf::MEDIA_TYPE {
                if protobuf::supports(api_version, kind) {
                    return Self::Protobuf;
                }
            } else {
                return Self::Object;
            }
        }
        Self::Object
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

    /// The response for one object, in the format the client asked for.
    pub fn object_response(
        &self,
        code: StatusCode,
        object: &StoredObject,
    ) -> Response<ResponseBody> {
        if self.format == Format::Protobuf {
            match protobuf::encode(&self.value(object)) {
                Ok(body) => return bytes_response(code, protobuf::MEDIA_TYPE, body),
                Err(error) => tracing::warn!(%error, "answering in JSON"),
            }
        }
        bytes_response(code, "application/json", self.object(object))
    }

    /// The response for a list; `continue_token` is set when more pages follow.
    pub fn list_response(
        &self,
        items: &[Arc<StoredObject>],
        resource_version: u64,
        continue_token: Option<&str>,
        remaining: Option<u64>,
    ) -> Response<ResponseBody> {
        if self.format == Format::Protobuf {
            let mut metadata = json!({"resourceVersion": resource_version.to_string()});
            if let Some(token) = continue_token {
                metadata["continue"] = json!(token);
            }
            if let Some(n) = remaining {
                metadata["remainingItemCount"] = json!(n);
            }
            let values: Vec<Value> = items.iter().map(|o| self.value(o)).collect();
            match protobuf::encode_list(
                &self.kind.api_version(),
                &self.kind.kind,
                &metadata,
                &values,
            ) {
                Ok(body) => return bytes_response(StatusCode::OK, protobuf::MEDIA_TYPE, body),
                Err(error) => tracing::warn!(%error, "answering in JSON"),
            }
        }
        bytes_response(
            StatusCode::OK,
            "application/json",
            self.list(items, resource_version, continue_token, remaining),
        )
    }

    /// The content type of a watch stream in this format.
    pub fn watch_content_type(&self) -> &'static str {
        match self.format {
            Format::Protobuf => protobuf::WATCH_MEDIA_TYPE,
            _ => "application/json",
        }
    }

    /// A single-object JSON body.
    pub fn object(&self, object: &StoredObject) -> Bytes {
        match self.format {
            Format::Object | Format::Protobuf => self.object_json(object),
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
        remaining: Option<u64>,
    ) -> Bytes {
        match self.format {
            Format::Table => {
                let mut table = self.table(items, Some(resource_version), true);
                if let Some(token) = continue_token {
                    table["metadata"]["continue"] = json!(token);
                }
                if let Some(n) = remaining {
                    table["metadata"]["remainingItemCount"] = json!(n);
                }
                to_bytes(&table)
            }
            Format::Object | Format::Metadata | Format::Protobuf => {
                let (api_version, kind) = match self.format {
                    Format::Metadata => (
                        "meta.k8s.io/v1".to_owned(),
                        "PartialObjectMetadataList".to_owned(),
                    ),
                    _ => (self.kind.api_version(), format!("{}List", self.kind.kind)),
                };
                let mut continued = continue_token
                    .map(|t| format!(",\"continue\":{}", Value::from(t)))
                    .unwrap_or_default();
                if let Some(n) = remaining {
                    continued.push_str(&format!(",\"remainingItemCount\":{n}"));
                }
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

    /// One event of a watch stream: a newline-terminated JSON line, or a protobuf frame.
    pub fn watch_line(&self, event: EventType, object: &StoredObject) -> Bytes {
        let body = match self.format {
            Format::Protobuf => return self.watch_frame(event.as_str(), &self.value(object)),
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
            Format::Object | Format::Protobuf => (self.kind.api_version(), self.kind.kind.clone()),
        };
        let object = json!({"apiVersion": api_version, "kind": kind, "metadata": metadata});
        if self.format == Format::Protobuf {
            return self.watch_frame("BOOKMARK", &object);
        }
        line(&json!({"type": "BOOKMARK", "object": object}))
    }

    /// A protobuf watch frame; an object that has no protobuf form ends the watch with an
    /// ERROR event, as the real server does when it cannot encode one.
    fn watch_frame(&self, event: &str, object: &Value) -> Bytes {
        match protobuf::encode(object) {
            Ok(body) => protobuf::watch_frame(event, &body),
            Err(error) => {
                tracing::warn!(%error, "watch event not encodable as protobuf");
                let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Failure", "message": error.to_string(),
                    "reason": "InternalError", "code": 500});
                let body = protobuf::encode(&status).unwrap_or_default();
                protobuf::watch_frame("ERROR", &body)
            }
        }
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

    /// The ConfigMap kind, and a ConfigMap `a` stored at resourceVersion 3.
    fn config_map_a() -> (Arc<ResourceKind>, StoredObject) {
        let kind = Registry::with_builtins()
            .get("", "v1", "configmaps")
            .unwrap();
        let object = StoredObject::from_value(
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
            3,
        );
        (kind, object)
    }

    #[test]
    fn lists_splice_stored_bytes_and_carry_the_resource_version() {
        let (kind, object) = config_map_a();
        let renderer = Renderer::new(kind, Format::Object, 0);
        let list: Value =
            serde_json::from_slice(&renderer.list(&[Arc::new(object)], 9, None, None)).unwrap();
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
            Format::from_accept(
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
                "v1",
                "ConfigMap",
            ),
            now,
        );
        let table: Value =
            serde_json::from_slice(&renderer.list(&[Arc::new(object)], 9, None, None)).unwrap();
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 3);
        assert_eq!(table["rows"][0]["cells"], json!(["a", "True", "5m"]));
        assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    }

    #[test]
    fn watch_lines_are_newline_terminated_json() {
        let (kind, object) = config_map_a();
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
