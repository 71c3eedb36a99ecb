//! The words an `apiserver_requests` input draws from: names, label keys and values,
//! `apiVersion`s, kinds, patch operations.

use crate::pick::{Pick, vocabulary};

vocabulary!(
    /// Names, label keys and values, and field values the server meets.
    KubeWords,
    8,
    [
        "default", "kube-system", "ns1", "cm1", "s1", "b1", "app", "web", "db", "tier",
        "team", "x", "", "a.b/c", "example.org/k", "crossplane.io/external-name",
        "crossplane.io/paused", "foregroundDeletion", "kubernetes", "finalizer.example.org",
        "Opaque", "Active", "Terminating", "true", "false", "0", "1", "-1", "10", "v1",
        "data", "stringData", "binaryData", "spec", "status", "type", "metadata", "items",
        "conditions", "forProvider", "region", "us-east-1", "replicas", "selector",
        "matchLabels", "$patch", "$retainKeys", "$deleteFromPrimitiveList/finalizers",
        "$setElementOrder/finalizers", "replace", "delete", "merge", "managedFields",
        "manager", "operation", "Apply", "Update", "fieldsV1", "f:spec", "f:data",
        "ownerReferences", "uid", "finalizers", "containers", "name", "env",
        "$setElementOrder/containers", "$setElementOrder/env", "$deleteFromPrimitiveList/args",
        "args", "apiVersion", "fieldsType", "FieldsV1", "subresource", "f:x", "f:app",
        "f:metadata", "f:labels", "f:forProvider", "f:region", "namespace", "labels",
        "template", "image", "value", "strategy", "rollingUpdate", "maxSurge",
        "RollingUpdate", "Recreate", "storageClass", "eu-west-1", "Ready", "a", "b",
    ]
);
/// A name the server meets, or any text.
pub type Word = Pick<KubeWords>;

vocabulary!(
    /// `apiVersion` values.
    ApiVersions,
    16,
    [
        "v1", "apps/v1", "events.k8s.io/v1", "coordination.k8s.io/v1",
        "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1",
        "mockcloud.example.org/v1alpha1", "meta.k8s.io/v1", "v2",
    ]
);
/// An `apiVersion`.
pub type ApiVersion = Pick<ApiVersions>;

vocabulary!(
    /// `kind` values.
    Kinds,
    16,
    [
        "ConfigMap", "Secret", "Namespace", "ServiceAccount", "Event", "Lease", "Service",
        "Deployment", "Role", "CustomResourceDefinition", "Bucket", "Status", "DeleteOptions",
        "List", "Table",
    ]
);
/// A `kind`.
pub type Kind = Pick<Kinds>;

vocabulary!(
    /// JSON patch operations.
    PatchOps,
    16,
    ["add", "remove", "replace", "move", "copy", "test"]
);
/// A JSON patch operation.
pub type PatchOp = Pick<PatchOps>;

/// A small JSON value of the server's words.
pub type Json = crate::json::Json<KubeWords>;

/// An object name.
pub type Name = crate::pick::Name<KubeWords>;
