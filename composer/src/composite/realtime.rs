//! Realtime composition's event mapping: watch events of composed resources, of XRs and of
//! CompositionRevisions mapped back to XRs, each through the XR controller's circuit
//! breaker (`limiter`'s reproduction of core's `internal/circuit`).
//!
//! Follows crossplane/crossplane's `definition/handlers.go` (revisions fan out to every
//! Automatic XR of their Composition, whatever the revision) and `internal/circuit`'s map
//! functions. Composed resources map to the XR that controls them by owner reference; core
//! v2.4 maps them through its dependency tracker from the XR's `resourceRefs`, which names
//! the same XR for every resource the XR composed.

use std::sync::Mutex;

use kube::api::DynamicObject;
use limiter::controller::Request;
use limiter::crossplane::circuit::{
    Breaker, BreakerConfig, BreakerMetrics, Deletion, EventSource, Handled, Mode, Probe,
    Responsive, Transition, Watch, WatchEvent, handle,
};
use tokio::time::Instant;

use super::Machinery;
use crate::api::{CompositionRevision, UpdatePolicy};

/// One XR controller's breaker and the map functions in front of it.
pub struct Realtime {
    breaker: Mutex<Breaker>,
    api_version: String,
    kind: String,
}

impl Realtime {
    /// The breaker of the controller of XRs of `api_version` and `kind`.
    #[must_use]
    pub fn new(api_version: &str, kind: &str, config: BreakerConfig) -> Self {
        Self {
            breaker: Mutex::new(Breaker::new(format!("composite/{kind}"), config)),
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    fn run(
        &self,
        now: Instant,
        event: WatchEvent,
        object: &DynamicObject,
        deletion: Deletion,
        watch: &Watch,
    ) -> Handled {
        let source = EventSource::new(
            object
                .types
                .as_ref()
                .map(|t| t.kind.clone())
                .unwrap_or_default(),
            object.metadata.namespace.clone().unwrap_or_default(),
            object.metadata.name.clone().unwrap_or_default(),
        );
        let mut breaker = self.breaker.lock().expect("not poisoned");
        handle(&mut breaker, now, event, &source, deletion, watch)
    }

    /// A composed resource's event: `old` is an Update's previous object.
    #[must_use]
    pub fn composed(
        &self,
        now: Instant,
        event: WatchEvent,
        old: Option<&DynamicObject>,
        object: &DynamicObject,
    ) -> Handled {
        let targets = self.controller_of(object);
        self.run(
            now,
            event,
            object,
            deletion(old, object),
            &Watch::Maps(targets),
        )
    }

    /// An XR's own event.
    #[must_use]
    pub fn xr(
        &self,
        now: Instant,
        event: WatchEvent,
        old: Option<&DynamicObject>,
        object: &DynamicObject,
    ) -> Handled {
        self.run(now, event, object, deletion(old, object), &Watch::OwnXr)
    }

    /// A CompositionRevision's event, mapped to every XR in `xrs` whose Composition is the
    /// revision's and whose update policy is Automatic.
    #[must_use]
    pub fn revision(
        &self,
        now: Instant,
        event: WatchEvent,
        revision: &CompositionRevision,
        xrs: &[DynamicObject],
    ) -> Handled {
        let composition = revision.composition_name().unwrap_or_default();
        let targets = xrs
            .iter()
            .filter(|xr| {
                Machinery::read(&xr.data).is_ok_and(|m| {
                    m.composition_update_policy == Some(UpdatePolicy::Automatic)
                        && m.composition_ref.is_some_and(|r| r.name == composition)
                })
            })
            .map(|xr| {
                Request::new(
                    xr.metadata.namespace.clone().unwrap_or_default(),
                    xr.metadata.name.clone().unwrap_or_default(),
                )
            })
            .collect();
        let object = DynamicObject {
            types: Some(kube::api::TypeMeta {
                api_version: "apiextensions.crossplane.io/v1".to_owned(),
                kind: "CompositionRevision".to_owned(),
            }),
            metadata: revision.metadata.clone(),
            data: serde_json::Value::Null,
        };
        let deleting = if revision.metadata.deletion_timestamp.is_some() {
            Deletion::Deleting
        } else {
            Deletion::Live
        };
        self.run(now, event, &object, deleting, &Watch::Maps(targets))
    }

    /// The XR's `Responsive` condition now.
    #[must_use]
    pub fn responsive(&self, now: Instant, xr: &Request) -> Responsive {
        let state = self.breaker.lock().expect("not poisoned").state(now, xr);
        Responsive::from_state(&state)
    }

    /// The breaker's counters: `circuit_breaker_opens_total`, `_closes_total` and
    /// `_events_total` by result, for this controller.
    #[must_use]
    pub fn metrics(&self) -> BreakerMetrics {
        self.breaker.lock().expect("not poisoned").metrics()
    }

    /// Every circuit's opens and closes so far, in order (core logs each open as
    /// "Circuit breaker is open"): what the time each XR spent open is read from.
    #[must_use]
    pub fn transitions(&self) -> Vec<Transition> {
        self.breaker
            .lock()
            .expect("not poisoned")
            .transitions()
            .to_vec()
    }

    /// Every half-open probe let through an open circuit so far, in order: with the
    /// transitions and the half-open interval, when each circuit was half-open.
    #[must_use]
    pub fn probes(&self) -> Vec<Probe> {
        self.breaker.lock().expect("not poisoned").probes().to_vec()
    }

    /// The breaker's settings.
    #[must_use]
    pub fn config(&self) -> BreakerConfig {
        *self.breaker.lock().expect("not poisoned").config()
    }

    /// In [`Mode::EagerClose`] (crossplane/crossplane PR #7725, the fix for #7703), the
    /// reconciler's half of the fix: while `xr`'s circuit is open, reconcile it again when
    /// its next half-open event could pass, or a half-open interval (30 s) from now once
    /// that instant is past, so that an XR whose events were dropped is not left stale;
    /// the reconcile after the cooldown finds the circuit closed (the mode's `GetState`)
    /// and stops asking. `None` in [`Mode::Released`] or while closed. The PR describes this
    /// half ("requeue while the circuit breaker is open"); its diff was not at hand, so
    /// the interval is this reading of it.
    #[must_use]
    pub fn requeue_while_open(&self, now: Instant, xr: &Request) -> Option<std::time::Duration> {
        let mut breaker = self.breaker.lock().expect("not poisoned");
        if breaker.config().mode != Mode::EagerClose {
            return None;
        }
        let state = breaker.state(now, xr);
        if !state.is_open {
            return None;
        }
        let interval = breaker.config().half_open_interval.to_std();
        Some(
            state
                .next_allowed_at
                .filter(|at| *at > now)
                .map_or(interval, |at| at - now),
        )
    }

    fn controller_of(&self, object: &DynamicObject) -> Vec<Request> {
        object
            .metadata
            .owner_references
            .iter()
            .flatten()
            .filter(|o| {
                o.controller == Some(true)
                    && o.kind == self.kind
                    && o.api_version == self.api_version
            })
            .map(|o| {
                Request::new(
                    object.metadata.namespace.clone().unwrap_or_default(),
                    o.name.clone(),
                )
            })
            .collect()
    }
}

fn deletion(old: Option<&DynamicObject>, new: &DynamicObject) -> Deletion {
    let new_deleting = new.metadata.deletion_timestamp.is_some();
    match old.map(|o| o.metadata.deletion_timestamp.is_some()) {
        Some(true) => Deletion::Deleting,
        Some(false) if new_deleting => Deletion::Marked,
        None if new_deleting => Deletion::Deleting,
        _ => Deletion::Live,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn widget(owner: &str, deleting: bool) -> DynamicObject {
        let mut metadata = json!({"name": "w", "namespace": "default", "ownerReferences": [{
            "apiVersion": "example.org/v1", "kind": "XWidget", "name": owner, "uid": "u",
            "controller": true}]});
        if deleting {
            metadata["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        serde_json::from_value(
            json!({"apiVersion": "test.example.org/v1", "kind": "Widget",
            "metadata": metadata}),
        )
        .unwrap()
    }

    #[test]
    fn a_composed_update_costs_its_xr_two_tokens_and_a_deleting_one_nothing() {
        let realtime = Realtime::new(
            "example.org/v1",
            "XWidget",
            BreakerConfig::default().burst(4.0),
        );
        let now = Instant::now();
        let w = widget("one", false);
        let handled = realtime.composed(now, WatchEvent::Update, Some(&w), &w);
        assert_eq!(handled.enqueued, [Request::new("default", "one")]);
        assert_eq!(handled.mappings.len(), 2);
        let gone = widget("one", true);
        let handled = realtime.composed(now, WatchEvent::Update, Some(&gone), &gone);
        assert!(
            handled
                .mappings
                .iter()
                .all(|m| m.decision.to_string() == "Bypassed")
        );
        // A third and fourth token, then the circuit opens on the fifth.
        let _ = realtime.composed(now, WatchEvent::Update, Some(&w), &w);
        let _ = realtime.composed(now, WatchEvent::Create, None, &w);
        assert!(
            !realtime
                .responsive(now, &Request::new("default", "one"))
                .status
        );
    }

    #[test]
    fn a_revision_maps_to_every_automatic_xr_of_its_composition() {
        let realtime = Realtime::new("example.org/v1", "XWidget", BreakerConfig::default());
        let xr = |name: &str, composition: &str, policy: &str| -> DynamicObject {
            serde_json::from_value(json!({"apiVersion": "example.org/v1", "kind": "XWidget",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"crossplane": {"compositionRef": {"name": composition},
                    "compositionUpdatePolicy": policy}}}))
            .unwrap()
        };
        let xrs = [
            xr("a", "widgets", "Automatic"),
            xr("b", "widgets", "Manual"),
            xr("c", "other", "Automatic"),
        ];
        let revision: CompositionRevision = serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositionRevision",
            "metadata": {"name": "widgets-2", "labels": {"crossplane.io/composition-name": "widgets"}},
            "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                     "pipeline": [], "revision": 2},
        }))
        .unwrap();
        let handled = realtime.revision(Instant::now(), WatchEvent::Create, &revision, &xrs);
        assert_eq!(handled.enqueued, [Request::new("default", "a")]);
    }
}
