//! Resource groups: what the harness creates, and each resource's poll interval.

use std::collections::BTreeMap;
use std::time::Duration;

use limiter::crossplane::Settings;

use crate::error::Pos;
use crate::faults::{FaultShare, GroupFault};
use crate::kinds::GroupKind;
use crate::template::{Template, Vars, render_json};

/// A group of resources.
#[derive(Clone, Debug)]
pub struct ResourceGroup {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: GroupKind,
    /// Namespace of its objects when it differs from the run's (namespaced kinds only).
    pub namespace: Option<String>,
    /// The object beyond `spec.forProvider`: `metadata.labels`, `metadata.annotations` and
    /// `spec` fields (placeholders allowed); `Null` when none.
    pub template: serde_json::Value,
    /// The conditions (type, status) a Ready resource has.
    pub ready: Vec<(String, String)>,
    /// How many.
    pub count: u32,
    /// Cloud account.
    pub account: String,
    /// Name of each resource.
    pub name_pattern: Template,
    /// `spec.forProvider` template.
    pub spec: serde_json::Value,
    /// Annotation shares, as disjoint index ranges.
    pub annotations: Vec<AnnotationShare>,
    /// Per-resource cloud faults, as disjoint index ranges from the top index down.
    pub faults: Vec<FaultShare>,
    /// `spec.managementPolicies` of every resource, if set.
    pub management_policies: Option<Vec<String>>,
    /// Where its `kind` is in the scenario (a problem found at run time names it).
    pub pos: Pos,
}

/// Annotations for the resources with index in `start..end`.
#[derive(Clone, Debug)]
pub struct AnnotationShare {
    /// First index.
    pub start: u32,
    /// One past the last index.
    pub end: u32,
    /// Annotations.
    pub values: BTreeMap<String, Template>,
}

impl ResourceGroup {
    fn vars<'a>(&'a self, index: u32, scenario: &'a str) -> Vars<'a> {
        Vars::new(index, &self.name, scenario)
    }

    /// The name of resource `index`.
    #[must_use]
    pub fn resource_name(&self, index: u32, scenario: &str) -> String {
        self.name_pattern.render(self.vars(index, scenario))
    }

    /// The spec of resource `index`.
    #[must_use]
    pub fn resource_spec(&self, index: u32, scenario: &str) -> serde_json::Value {
        render_json(&self.spec, self.vars(index, scenario))
    }

    /// The template of resource `index`, rendered (`Null` when the group has none).
    #[must_use]
    pub fn resource_template(&self, index: u32, scenario: &str) -> serde_json::Value {
        render_json(&self.template, self.vars(index, scenario))
    }

    /// The cloud fault of resource `index`, if any.
    #[must_use]
    pub fn fault(&self, index: u32) -> Option<&GroupFault> {
        self.faults
            .iter()
            .find(|s| (s.start..s.end).contains(&index))
            .map(|s| &s.fault)
    }

    /// Whether the group only observes (`managementPolicies: [Observe]`).
    #[must_use]
    pub fn observe_only(&self) -> bool {
        crate::faults::observe_only(self.management_policies.as_deref())
    }

    /// Whether resource `index` can never become Ready: a lasting error, or observe-only
    /// (the harness creates nothing in the cloud for it).
    #[must_use]
    pub fn never_ready(&self, index: u32) -> bool {
        self.observe_only() || self.fault(index).is_some_and(GroupFault::never_ready)
    }

    /// The annotations of resource `index`.
    #[must_use]
    pub fn resource_annotations(&self, index: u32, scenario: &str) -> BTreeMap<String, String> {
        self.annotations
            .iter()
            .filter(|s| (s.start..s.end).contains(&index))
            .flat_map(|s| {
                s.values
                    .iter()
                    .map(move |(k, v)| (k.clone(), v.render(self.vars(index, scenario))))
            })
            .collect()
    }

    /// How many resources poll at each effective interval (after the annotation, the clamp
    /// and the fallback), in ascending interval order.
    #[must_use]
    pub fn poll_intervals(&self, settings: &Settings, scenario: &str) -> Vec<(Duration, u32)> {
        if self.annotations.is_empty() {
            return vec![(settings.poll_interval, self.count)];
        }
        let mut by: BTreeMap<Duration, u32> = BTreeMap::new();
        for i in 0..self.count {
            *by.entry(self.poll_interval_of(i, settings, scenario))
                .or_default() += 1;
        }
        by.into_iter().collect()
    }

    /// Resource `index`'s own poll interval: its `crossplane.io/poll-interval` annotation,
    /// clamped to the floor, or the provider's P.
    #[must_use]
    pub fn poll_interval_of(&self, index: u32, settings: &Settings, scenario: &str) -> Duration {
        self.annotations
            .iter()
            .filter(|s| (s.start..s.end).contains(&index))
            .find_map(|s| s.values.get(limiter::crossplane::POLL_INTERVAL_ANNOTATION))
            .map_or(settings.poll_interval, |t| {
                let v = t.render(self.vars(index, scenario));
                settings.effective_poll(Some(&v)).interval
            })
    }
}
