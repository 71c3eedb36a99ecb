//! The kinds the server knows: built-in ones and those registered by CRDs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;

use crate::schema::Structural;

/// A compiled structural schema, shared by the kind's copies (equal when it is the same).
#[derive(Debug, Clone)]
pub struct Schema(pub Arc<Structural>);

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How a resource's objects are presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Objects are served exactly as stored.
    Plain,
    /// `core/v1` Events: a read-write view of the `events.k8s.io/v1` store.
    CoreEvents,
}

/// An `additionalPrinterColumns` entry of a CRD version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    /// A simple JSONPath such as `.status.conditions[?(@.type=="Ready")].status`.
    pub json_path: String,
    /// Shown only with `-o wide` when above 0.
    pub priority: i64,
    /// Human description.
    pub description: String,
}

/// One resource of one group-version, as discovery lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceKind {
    /// API group, empty for core.
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Plural resource name used in paths.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// The `kind` of its objects.
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories such as `all` or `managed`.
    pub categories: Vec<String>,
    /// Whether a `/status` subresource exists (then the main resource ignores `.status`).
    pub status_subresource: bool,
    /// Whether it comes from a CRD (strategic merge is refused, updates need a resourceVersion).
    pub custom: bool,
    /// Extra field-selector labels beyond `metadata.name` and `metadata.namespace`.
    pub field_labels: Vec<String>,
    /// Printer columns for `kubectl get`.
    pub printer_columns: Vec<PrinterColumn>,
    /// The version's OpenAPI v3 schema, when a CRD gave one.
    pub schema: Option<Value>,
    /// That schema compiled: pruning, defaulting and validation of every write.
    pub structural: Option<Schema>,
    /// How objects are presented.
    pub view: View,
}

impl ResourceKind {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural.group` (or `plural` for core), as errors name a resource.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The key of the store that holds this resource's objects, shared by all versions.
    pub fn storage_key(&self) -> String {
        match self.view {
            View::CoreEvents => "events.k8s.io/events".to_owned(),
            View::Plain => format!("{}/{}", self.group, self.plural),
        }
    }

    fn builtin(group: &str, version: &str, plural: &str, kind: &str, namespaced: bool) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            kind: kind.into(),
            namespaced,
            short_names: Vec::new(),
            categories: Vec::new(),
            status_subresource: false,
            custom: false,
            field_labels: Vec::new(),
            printer_columns: Vec::new(),
            schema: None,
            structural: None,
            view: View::Plain,
        }
    }

    fn short(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    fn fields(mut self, labels: &[&str]) -> Self {
        self.field_labels = labels.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    fn columns(mut self, columns: &[(&str, &str, &str)]) -> Self {
        self.printer_columns = columns
            .iter()
            .map(|(name, type_, json_path)| PrinterColumn {
                name: (*name).to_owned(),
                type_: (*type_).to_owned(),
                json_path: (*json_path).to_owned(),
                priority: 0,
                description: String::new(),
            })
            .collect();
        self
    }

    fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }
}

/// The built-in kinds every server starts with.
pub fn builtin_kinds() -> Vec<ResourceKind> {
    let core_event_fields = [
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ];
    let mut core_events = ResourceKind::builtin("", "v1", "events", "Event", true)
        .short(&["ev"])
        .fields(&core_event_fields)
        .columns(&[
            ("Last Seen", "date", ".lastTimestamp"),
            ("Type", "string", ".type"),
            ("Reason", "string", ".reason"),
            ("Object", "string", ".involvedObject.name"),
            ("Message", "string", ".message"),
        ]);
    core_events.view = View::CoreEvents;
    vec![
        ResourceKind::builtin("", "v1", "namespaces", "Namespace", false)
            .short(&["ns"])
            .fields(&["status.phase"])
            .columns(&[
                ("Status", "string", ".status.phase"),
                ("Age", "date", ".metadata.creationTimestamp"),
            ])
            .with_status(),
        ResourceKind::builtin("", "v1", "configmaps", "ConfigMap", true).short(&["cm"]),
        ResourceKind::builtin("", "v1", "secrets", "Secret", true).fields(&["type"]),
        ResourceKind::builtin("", "v1", "serviceaccounts", "ServiceAccount", true).short(&["sa"]),
        core_events,
        ResourceKind::builtin("events.k8s.io", "v1", "events", "Event", true)
            .short(&["ev"])
            .fields(&[
                "regarding.kind",
                "regarding.namespace",
                "regarding.name",
                "regarding.uid",
                "regarding.apiVersion",
                "reason",
                "reportingController",
                "type",
            ]),
        ResourceKind::builtin("coordination.k8s.io", "v1", "leases", "Lease", true),
        // Workloads (Jobs too), Services, RBAC and FlowSchemas are stored objects only (no controller acts on
        // them): enough for `kubectl apply --dry-run=server` of deployment manifests
        // and for a `kubectl rollout restart`-style patch of a Deployment's template.
        ResourceKind::builtin("", "v1", "services", "Service", true)
            .short(&["svc"])
            .with_status(),
        ResourceKind::builtin("", "v1", "pods", "Pod", true)
            .short(&["po"])
            .fields(&[
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "status.phase",
                "status.podIP",
                "status.nominatedNodeName",
            ])
            .with_status(),
        ResourceKind::builtin("apps", "v1", "deployments", "Deployment", true)
            .short(&["deploy"])
            .with_status(),
        // A sweep's Indexed Job (`harness sweep --kubernetes-job`): stored, run by no one.
        ResourceKind::builtin("batch", "v1", "jobs", "Job", true).with_status(),
        // The API server's own addresses, as the `kubernetes` Service's EndpointSlices
        // (written by `ApiServer::set_replica_endpoints`).
        ResourceKind::builtin(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            "EndpointSlice",
            true,
        ),
        ResourceKind::builtin("rbac.authorization.k8s.io", "v1", "roles", "Role", true),
        ResourceKind::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
        ),
        ResourceKind::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
        ),
        ResourceKind::builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
        ),
        ResourceKind::builtin(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "flowschemas",
            "FlowSchema",
            false,
        )
        .with_status(),
        ResourceKind::builtin(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            false,
        )
        .short(&["crd", "crds"])
        .with_status(),
    ]
}

/// All kinds, looked up by group, version and plural.
#[derive(Debug, Default)]
pub struct Registry {
    by_path: HashMap<(String, String, String), Arc<ResourceKind>>,
    /// Ordered group → version → kinds, for discovery and OpenAPI.
    by_group: BTreeMap<String, BTreeMap<String, Vec<Arc<ResourceKind>>>>,
    /// Preferred version per group (the first registered).
    preferred: HashMap<String, String>,
}

impl Registry {
    /// A registry holding the built-in kinds.
    pub fn with_builtins() -> Self {
        let mut registry = Self::default();
        for kind in builtin_kinds() {
            registry.insert(kind);
        }
        registry
    }

    /// Adds or replaces a kind.
    pub fn insert(&mut self, kind: ResourceKind) {
        let kind = Arc::new(kind);
        let key = (
            kind.group.clone(),
            kind.version.clone(),
            kind.plural.clone(),
        );
        self.by_path.insert(key, kind.clone());
        self.preferred
            .entry(kind.group.clone())
            .or_insert_with(|| kind.version.clone());
        let list = self
            .by_group
            .entry(kind.group.clone())
            .or_default()
            .entry(kind.version.clone())
            .or_default();
        list.retain(|k| k.plural != kind.plural);
        list.push(kind);
    }

    /// Removes every version of `plural.group`.
    pub fn remove(&mut self, group: &str, plural: &str) {
        self.by_path
            .retain(|(g, _, p), _| !(g == group && p == plural));
        if let Some(versions) = self.by_group.get_mut(group) {
            for kinds in versions.values_mut() {
                kinds.retain(|k| k.plural != plural);
            }
            versions.retain(|_, kinds| !kinds.is_empty());
            if versions.is_empty() {
                self.by_group.remove(group);
                self.preferred.remove(group);
            } else if !self
                .preferred
                .get(group)
                .is_some_and(|v| versions.contains_key(v))
            {
                let first = versions.keys().next().cloned().unwrap_or_default();
                self.preferred.insert(group.to_owned(), first);
            }
        }
    }

    /// The kind served at `/apis/{group}/{version}/{plural}`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceKind>> {
        self.by_path
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
            .cloned()
    }

    /// The kinds of one group-version, or `None` if it is not served.
    pub fn group_version(&self, group: &str, version: &str) -> Option<&[Arc<ResourceKind>]> {
        self.by_group.get(group)?.get(version).map(Vec::as_slice)
    }

    /// Every group with its versions, the preferred one first.
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        self.by_group
            .iter()
            .map(|(group, versions)| {
                let preferred = self.preferred.get(group).cloned().unwrap_or_default();
                let mut list: Vec<String> = versions.keys().cloned().collect();
                list.sort_by_key(|v| *v != preferred);
                (group.clone(), list)
            })
            .collect()
    }

    /// Every kind of every group-version.
    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceKind>> {
        self.by_group.values().flat_map(|v| v.values()).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_include_namespaces_secrets_and_both_event_apis() {
        let registry = Registry::with_builtins();
        assert!(!registry.get("", "v1", "namespaces").unwrap().namespaced);
        assert!(registry.get("", "v1", "secrets").unwrap().namespaced);
        let core = registry.get("", "v1", "events").unwrap();
        let new = registry.get("events.k8s.io", "v1", "events").unwrap();
        assert_eq!(core.storage_key(), new.storage_key());
    }

    #[test]
    fn builtins_include_deployments_services_and_rbac_with_their_scopes() {
        let registry = Registry::with_builtins();
        let deployments = registry.get("apps", "v1", "deployments").unwrap();
        assert!(deployments.namespaced && deployments.status_subresource && !deployments.custom);
        assert!(registry.get("", "v1", "services").unwrap().namespaced);
        let jobs = registry.get("batch", "v1", "jobs").unwrap();
        assert!(jobs.namespaced && jobs.status_subresource && jobs.kind == "Job");
        let rbac = "rbac.authorization.k8s.io";
        assert!(registry.get(rbac, "v1", "roles").unwrap().namespaced);
        assert!(registry.get(rbac, "v1", "rolebindings").unwrap().namespaced);
        assert!(!registry.get(rbac, "v1", "clusterroles").unwrap().namespaced);
        assert!(
            !registry
                .get(rbac, "v1", "clusterrolebindings")
                .unwrap()
                .namespaced
        );
    }

    #[test]
    fn removing_a_kind_drops_an_emptied_group() {
        let mut registry = Registry::with_builtins();
        let mut kind = ResourceKind::builtin("example.org", "v1", "buckets", "Bucket", true);
        kind.custom = true;
        registry.insert(kind);
        assert!(registry.group_version("example.org", "v1").is_some());
        registry.remove("example.org", "buckets");
        assert!(registry.get("example.org", "v1", "buckets").is_none());
        assert!(registry.groups().iter().all(|(g, _)| g != "example.org"));
    }
}
