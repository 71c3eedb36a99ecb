//! What a schema says about merging: which maps are structs, which are atomic, and how
//! lists merge (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type`), as structured-merge-diff's `schema` package reads them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::registry::ResourceKind;
use crate::schema::Structural;

/// How a list merges and names its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind<'a> {
    /// Replaced whole, owned whole (the default of every list).
    Atomic,
    /// Items are scalars named by value (`x-kubernetes-list-type: set`).
    Set,
    /// Items are objects named by these fields (`x-kubernetes-list-type: map`).
    Map(&'a [String]),
}

/// The schema at one point of an object.
///
/// # Semantics
/// - `Schema(node, loose)`: a structural schema node. A field it does not declare is a map
///   entry typed by `additionalProperties` (or untyped under
///   `x-kubernetes-preserve-unknown-fields`) for a custom resource; for a built-in kind,
///   whose tables below list only what changes merging (`loose`), it is a struct field.
/// - `Deduced`: structured-merge-diff's deduced type for untyped values: every map key is
///   an entry of a granular map, every list atomic.
/// - `Loose`: a built-in's field the tables do not describe: a struct whose lists are
///   atomic.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    /// A schema node, and whether undeclared fields are struct fields.
    Schema(&'a Structural, bool),
    /// A custom resource's root: `metadata` is `ObjectMeta`.
    Root(&'a Structural),
    /// Untyped.
    Deduced,
    /// An undescribed part of a built-in kind.
    Loose,
}

impl<'a> Shape<'a> {
    /// The shape of a kind's objects.
    pub fn of(kind: &'a ResourceKind) -> Shape<'a> {
        match &kind.structural {
            Some(schema) => Shape::Root(&schema.0),
            None => match builtins().get(kind.kind.as_str()) {
                Some(node) => Shape::Schema(node, true),
                None => Shape::Schema(builtin_root(), true),
            },
        }
    }

    /// Whether an object here is owned and replaced whole (`x-kubernetes-map-type:
    /// atomic`).
    pub fn atomic_map(&self) -> bool {
        matches!(self, Shape::Schema(node, _) | Shape::Root(node) if node.map_type() == Some("atomic"))
    }

    /// The shape of field `key` of an object here, and whether `key` is a declared
    /// struct field (a map entry is a member of a field set in its own right).
    pub fn field(&self, key: &str) -> (Shape<'a>, bool) {
        match *self {
            Shape::Root(node) => match key {
                "metadata" => (Shape::Schema(object_meta(), true), true),
                "apiVersion" | "kind" => (Shape::Loose, true),
                _ => Shape::Schema(node, false).field(key),
            },
            Shape::Schema(node, loose) => {
                if let Some(child) = node.property(key) {
                    (Shape::Schema(child, loose), true)
                } else if let Some(additional) = node.additional_properties() {
                    (Shape::Schema(additional, loose), false)
                } else if loose {
                    (Shape::Loose, true)
                } else {
                    (Shape::Deduced, false)
                }
            }
            Shape::Deduced => (Shape::Deduced, false),
            Shape::Loose => (Shape::Loose, true),
        }
    }

    /// How a list here merges.
    pub fn list(&self) -> ListKind<'a> {
        match *self {
            Shape::Schema(node, _) | Shape::Root(node) => match node.list_type() {
                Some("set") => ListKind::Set,
                Some("map") if !node.list_map_keys().is_empty() => {
                    ListKind::Map(node.list_map_keys())
                }
                _ => ListKind::Atomic,
            },
            Shape::Deduced | Shape::Loose => ListKind::Atomic,
        }
    }

    /// The shape of a list's items.
    pub fn item(&self) -> Shape<'a> {
        let (node, loose) = match *self {
            Shape::Schema(node, loose) => (node, loose),
            Shape::Root(node) => (node, false),
            Shape::Deduced => return Shape::Deduced,
            Shape::Loose => return Shape::Loose,
        };
        match node.items() {
            Some(items) => Shape::Schema(items, loose),
            None if loose => Shape::Loose,
            None => Shape::Deduced,
        }
    }

    /// The default of key field `key` of a list-map item, when the schema has one.
    pub fn key_default(&self, key: &str) -> Option<&'a Value> {
        match *self {
            Shape::Schema(node, _) => node.items()?.property(key)?.default_value(),
            _ => None,
        }
    }
}

fn compile(schema: &Value) -> Structural {
    Structural::compile(schema).expect("the built-in merge tables are valid schemas")
}

fn string_map() -> Value {
    json!({"type": "object", "additionalProperties": {"type": "string"}})
}

fn map_list(keys: &[&str], items: Value) -> Value {
    json!({
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": keys,
        "items": items,
    })
}

/// `ObjectMeta`'s merge markers (`k8s.io/apimachinery/pkg/apis/meta/v1/types.go`):
/// labels and annotations are maps, finalizers a set, ownerReferences a map keyed by
/// `uid` of atomic structs.
fn object_meta_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "labels": string_map(),
            "annotations": string_map(),
            "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "ownerReferences": map_list(&["uid"], json!({"type": "object", "x-kubernetes-map-type": "atomic"})),
        },
    })
}

fn object_meta() -> &'static Structural {
    static META: OnceLock<Structural> = OnceLock::new();
    META.get_or_init(|| compile(&object_meta_schema()))
}

fn builtin_root() -> &'static Structural {
    static ROOT: OnceLock<Structural> = OnceLock::new();
    ROOT.get_or_init(|| {
        compile(&json!({"type": "object", "properties": {"metadata": object_meta_schema()}}))
    })
}

/// `PodSpec`'s list markers (`k8s.io/api/core/v1/types.go`).
fn pod_spec() -> Value {
    let container = json!({
        "type": "object",
        "properties": {
            "env": map_list(&["name"], json!({"type": "object"})),
            "ports": map_list(&["containerPort", "protocol"], json!({
                "type": "object",
                "properties": {"protocol": {"type": "string", "default": "TCP"}},
            })),
            "volumeMounts": map_list(&["mountPath"], json!({"type": "object"})),
        },
    });
    json!({
        "type": "object",
        "properties": {
            "containers": map_list(&["name"], container.clone()),
            "initContainers": map_list(&["name"], container.clone()),
            "ephemeralContainers": map_list(&["name"], container),
            "volumes": map_list(&["name"], json!({"type": "object"})),
            "imagePullSecrets": map_list(&["name"], json!({"type": "object"})),
            "nodeSelector": string_map(),
        },
    })
}

fn builtins() -> &'static BTreeMap<&'static str, Structural> {
    static KINDS: OnceLock<BTreeMap<&'static str, Structural>> = OnceLock::new();
    KINDS.get_or_init(|| {
        let with = |properties: Value| {
            let mut root = json!({"type": "object", "properties": properties});
            root["properties"]["metadata"] = object_meta_schema();
            compile(&root)
        };
        let template = json!({
            "type": "object",
            "properties": {"metadata": object_meta_schema(), "spec": pod_spec()},
        });
        let workload = with(json!({"spec": {
            "type": "object",
            "properties": {
                "selector": {"type": "object", "properties": {"matchLabels": string_map()}},
                "template": template,
            },
        }}));
        let data = with(json!({
            "data": string_map(),
            "binaryData": string_map(),
            "stringData": string_map(),
        }));
        let mut kinds = BTreeMap::new();
        for kind in [
            "Deployment",
            "ReplicaSet",
            "StatefulSet",
            "DaemonSet",
            "Job",
        ] {
            kinds.insert(kind, workload.clone());
        }
        kinds.insert("ConfigMap", data.clone());
        kinds.insert("Secret", data);
        kinds.insert("Pod", with(json!({"spec": pod_spec()})));
        kinds.insert(
            "Service",
            with(json!({"spec": {
                "type": "object",
                "properties": {
                    "selector": string_map(),
                    "ports": map_list(&["port", "protocol"], json!({
                        "type": "object",
                        "properties": {"protocol": {"type": "string", "default": "TCP"}},
                    })),
                },
            }})),
        );
        kinds
    })
}
