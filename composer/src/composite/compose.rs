//! Step 6 of an XR reconcile, compose, against an API server: read the composed resources,
//! run the pipeline, collect garbage, and apply (the XR's resource refs, each composed
//! resource in order, the XR's status).
//!
//! Follows crossplane/crossplane's `composite/composition_functions.go`
//! (`FunctionComposer.Compose`), with these differences: composed resources are read
//! live (core reads them from its cache and falls back to a live GET), connection and
//! credential secrets are not read, garbage is deleted without core's Update that first
//! removes the XR's owner reference, and the conditions go out with the status apply
//! instead of core's separate status Update when `.status` changed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy,
};
use kube::core::GroupVersionKind;
use limiter::crossplane::circuit::Responsive;
use rand::Rng;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::outcome::{ComposedState, Outcome, XrCondition, outcome};
use super::render::{ANNOTATION_COMPOSITION_RESOURCE_NAME, RenderError, render_composed};
use super::{FIELD_OWNER_XR, Machinery, ResourceRef, composed_field_owner};
use crate::api::CompositionRevision;
use crate::function::FunctionRunner;
use crate::function::pipeline::{self, PipelineError, Step};
use crate::function::proto::{Ready, Resource, State};
use crate::function::value::{from_struct, to_struct};

/// Why composing failed.
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    /// An API request failed.
    #[error("cannot {action}")]
    Api {
        /// What was being done.
        action: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// The pipeline failed.
    #[error("cannot run the function pipeline")]
    Pipeline(#[source] PipelineError),
    /// A desired resource could not be rendered.
    #[error("cannot render composed resource")]
    Render(#[source] RenderError),
    /// A desired resource has no `apiVersion` or `kind`.
    #[error("desired composed resource {0:?} has no apiVersion or kind")]
    NoKind(String),
    /// The XR's `spec.crossplane` does not read.
    #[error("cannot read the XR's spec.crossplane")]
    Machinery(#[source] serde_json::Error),
}

fn api(action: impl Into<String>) -> impl FnOnce(kube::Error) -> ComposeError {
    let action = action.into();
    move |source| ComposeError::Api { action, source }
}

/// What one compose did.
#[derive(Debug)]
pub struct Composed {
    /// Conditions, events and how many resources wait.
    pub outcome: Outcome,
    /// The pipeline's smallest non-zero TTL.
    pub ttl: Option<std::time::Duration>,
    /// How many composed resources were deleted as garbage.
    pub deleted: usize,
}

/// What the reconciler adds to the XR's status apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatusExtras {
    /// The `Responsive` condition from the XR's circuit breaker.
    pub responsive: Option<Responsive>,
    /// The `crossplane.io/reconcile-requested-at` token this reconcile handled.
    pub last_handled_reconcile_at: Option<String>,
}

/// What a [`Composer`] calls for each kind it meets the first time.
type NewKind = Box<dyn Fn(&ApiResource) + Send + Sync>;

/// Composes XRs of one kind through a function runner, with an API client.
pub struct Composer {
    client: kube::Client,
    runner: Box<dyn FunctionRunner>,
    kinds: Mutex<HashMap<GroupVersionKind, ApiResource>>,
    new_kind: Option<NewKind>,
}

impl Composer {
    /// A composer calling functions through `runner`.
    pub fn new(client: kube::Client, runner: impl FunctionRunner + 'static) -> Self {
        Self {
            client,
            runner: Box::new(runner),
            kinds: Mutex::new(HashMap::new()),
            new_kind: None,
        }
    }

    /// Calls `start` once for each composed kind this composer meets (discovers) the first
    /// time: where core starts a watch for a new composed kind (`StartWatches`, step 7 of a
    /// reconcile); the binary starts one there.
    #[must_use]
    pub fn on_new_kind(mut self, start: impl Fn(&ApiResource) + Send + Sync + 'static) -> Self {
        self.new_kind = Some(Box::new(start));
        self
    }

    async fn resource(&self, api_version: &str, kind: &str) -> Result<ApiResource, ComposeError> {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let gvk = GroupVersionKind::gvk(group, version, kind);
        if let Some(found) = self.kinds.lock().expect("not poisoned").get(&gvk) {
            return Ok(found.clone());
        }
        let (resource, _) = kube::discovery::pinned_kind(&self.client, &gvk)
            .await
            .map_err(api(format!("discover {api_version} {kind}")))?;
        let first = self
            .kinds
            .lock()
            .expect("not poisoned")
            .insert(gvk, resource.clone())
            .is_none();
        if first && let Some(start) = &self.new_kind {
            start(&resource);
        }
        Ok(resource)
    }

    fn dynamic(&self, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, resource),
            None => Api::all_with(self.client.clone(), resource),
        }
    }

    /// Composes `xr` (of `xr_resource`) with `revision`'s pipeline, by `deadline`.
    ///
    /// # Errors
    /// [`ComposeError`]: a failed request, pipeline, or render.
    pub async fn compose(
        &self,
        xr: &DynamicObject,
        xr_resource: &ApiResource,
        revision: &CompositionRevision,
        deadline: Instant,
    ) -> Result<Composed, ComposeError> {
        self.compose_with(
            xr,
            xr_resource,
            revision,
            deadline,
            &StatusExtras::default(),
        )
        .await
    }

    /// [`Composer::compose`], with the reconciler's own additions to the status apply.
    ///
    /// # Errors
    /// [`ComposeError`]: a failed request, pipeline, or render.
    pub async fn compose_with(
        &self,
        xr: &DynamicObject,
        xr_resource: &ApiResource,
        revision: &CompositionRevision,
        deadline: Instant,
        extras: &StatusExtras,
    ) -> Result<Composed, ComposeError> {
        let xr_json = serde_json::to_value(xr).expect("objects serialize");
        let xr_name = xr.metadata.name.clone().unwrap_or_default();
        let namespace = xr.metadata.namespace.as_deref();
        let machinery = Machinery::read(&xr_json).map_err(ComposeError::Machinery)?;

        // Observed composed resources, by their pipeline name.
        let mut observed: BTreeMap<String, (Value, ApiResource)> = BTreeMap::new();
        for r in &machinery.resource_refs {
            let Some(name) = &r.name else { continue };
            let resource = self.resource(&r.api_version, &r.kind).await?;
            let ns = namespace.or(r.namespace.as_deref());
            let found = self
                .dynamic(&resource, ns)
                .get_opt(name)
                .await
                .map_err(api(format!("get composed resource {name}")))?;
            if let Some(object) = found {
                let value = serde_json::to_value(&object).expect("objects serialize");
                if let Some(id) = value
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(ANNOTATION_COMPOSITION_RESOURCE_NAME))
                    .and_then(Value::as_str)
                {
                    observed.insert(id.to_owned(), (value.clone(), resource));
                }
            }
        }

        let state = State {
            composite: Some(resource_of(&xr_json)),
            resources: observed
                .iter()
                .map(|(id, (value, _))| (id.clone(), resource_of(value)))
                .collect(),
        };
        let steps: Vec<Step> = revision
            .spec
            .composition
            .pipeline
            .iter()
            .map(|s| {
                let input = s.input.as_ref().and_then(Value::as_object).map(to_struct);
                Step::new(&s.step, &s.function_ref.name, input)
            })
            .collect();
        let run = pipeline::run(
            self.runner.as_ref(),
            &steps,
            &state,
            State::default(),
            deadline,
        )
        .await
        .map_err(ComposeError::Pipeline)?;

        // Render each desired resource, naming new ones.
        let mut desired = Vec::new();
        for (id, wanted) in &run.desired.resources {
            let value = Value::Object(
                wanted
                    .resource
                    .as_ref()
                    .map(from_struct)
                    .unwrap_or_default(),
            );
            let mut cd = render_composed(id, &value, observed.get(id).map(|(v, _)| v), &xr_json)
                .map_err(ComposeError::Render)?;
            let (Some(api_version), Some(kind)) = (
                cd["apiVersion"].as_str().map(str::to_owned),
                cd["kind"].as_str().map(str::to_owned),
            ) else {
                return Err(ComposeError::NoKind(id.clone()));
            };
            let resource = self.resource(&api_version, &kind).await?;
            if cd.pointer("/metadata/name").is_none() {
                let prefix = cd["metadata"]["generateName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let ns = cd.pointer("/metadata/namespace").and_then(Value::as_str);
                let name = self.generate_name(&resource, ns, &prefix).await?;
                cd["metadata"]["name"] = json!(name);
            }
            desired.push((id.clone(), cd, resource, wanted.ready() == Ready::True));
        }

        // Garbage: observed resources no longer desired.
        let mut deleted = 0;
        for (id, (value, resource)) in &observed {
            if run.desired.resources.contains_key(id) {
                continue;
            }
            let name = value["metadata"]["name"].as_str().unwrap_or_default();
            let ns = value.pointer("/metadata/namespace").and_then(Value::as_str);
            let params = DeleteParams {
                propagation_policy: Some(PropagationPolicy::Foreground),
                ..DeleteParams::default()
            };
            match self.dynamic(resource, ns).delete(name, &params).await {
                Ok(_) => deleted += 1,
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(api(format!("delete composed resource {name}"))(e)),
            }
        }

        // The XR's resource refs, then each composed resource, then the XR's status.
        let mut refs: Vec<ResourceRef> = desired
            .iter()
            .map(|(_, cd, _, _)| ResourceRef {
                api_version: cd["apiVersion"].as_str().unwrap_or_default().to_owned(),
                kind: cd["kind"].as_str().unwrap_or_default().to_owned(),
                name: cd["metadata"]["name"].as_str().map(str::to_owned),
                namespace: None,
            })
            .collect();
        refs.sort();
        let xrs = self.dynamic(xr_resource, namespace);
        let apply_xr = PatchParams::apply(FIELD_OWNER_XR).force();
        let refs_patch = json!({
            "apiVersion": xr_json["apiVersion"], "kind": xr_json["kind"],
            "metadata": {"name": xr_name},
            "spec": {"crossplane": {"resourceRefs": refs}},
        });
        xrs.patch(&xr_name, &apply_xr, &Patch::Apply(&refs_patch))
            .await
            .map_err(api("apply the XR's resource refs"))?;

        let owner = composed_field_owner(&xr_name, &xr_resource.kind, &xr_resource.group);
        let apply_composed = PatchParams::apply(&owner).force();
        let mut states = Vec::new();
        for (id, cd, resource, ready) in &desired {
            let name = cd["metadata"]["name"].as_str().unwrap_or_default();
            let ns = cd.pointer("/metadata/namespace").and_then(Value::as_str);
            self.dynamic(resource, ns)
                .patch(name, &apply_composed, &Patch::Apply(cd))
                .await
                .map_err(api(format!("apply composed resource {id}")))?;
            states.push(ComposedState {
                name: id.clone(),
                synced: true,
                ready: *ready,
            });
        }

        let result = outcome(&states, None);
        let now = jiff::Timestamp::now().to_string();
        let previous = xr_json
            .pointer("/status/conditions")
            .cloned()
            .unwrap_or(json!([]));
        let responsive = extras.responsive.as_ref().map(|r| XrCondition {
            type_: "Responsive",
            status: if r.status { "True" } else { "False" },
            reason: r.reason,
            message: Some(r.message.clone()).filter(|m| !m.is_empty()),
        });
        let conditions: Vec<Value> = result
            .conditions
            .iter()
            .chain(responsive.as_ref())
            .map(|c| {
                let same = previous.as_array().and_then(|p| {
                    p.iter().find(|o| {
                        o["type"] == c.type_ && o["status"] == c.status && o["reason"] == c.reason
                    })
                });
                let since = same
                    .and_then(|o| o["lastTransitionTime"].as_str())
                    .map_or(now.clone(), str::to_owned);
                let mut condition = json!({"type": c.type_, "status": c.status,
                    "reason": c.reason, "lastTransitionTime": since});
                if let Some(message) = &c.message {
                    condition["message"] = json!(message);
                }
                condition
            })
            .collect();
        let mut status_patch = json!({
            "apiVersion": xr_json["apiVersion"], "kind": xr_json["kind"],
            "metadata": {"name": xr_name},
            "status": {"conditions": conditions},
        });
        if let Some(token) = &extras.last_handled_reconcile_at {
            status_patch["status"]["lastHandledReconcileAt"] = json!(token);
        }
        xrs.patch_status(&xr_name, &apply_xr, &Patch::Apply(&status_patch))
            .await
            .map_err(api("apply the XR's status"))?;

        Ok(Composed {
            outcome: result,
            ttl: run.ttl,
            deleted,
        })
    }

    /// Kubernetes' `SimpleNameGenerator` (the prefix cut to 58 characters, then five of
    /// `bcdfghjklmnpqrstvwxz2456789`), retried while the name is taken, as core's
    /// `names.NameGenerator` does.
    async fn generate_name(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        prefix: &str,
    ) -> Result<String, ComposeError> {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let base: String = prefix.chars().take(58).collect();
        let objects = self.dynamic(resource, namespace);
        loop {
            let suffix: String = {
                let mut rng = rand::rng();
                (0..5)
                    .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
                    .collect()
            };
            let name = format!("{base}{suffix}");
            let taken = objects
                .get_opt(&name)
                .await
                .map_err(api("check a generated name"))?;
            if taken.is_none() {
                return Ok(name);
            }
        }
    }
}

fn resource_of(value: &Value) -> Resource {
    Resource {
        resource: value.as_object().map(to_struct),
        ..Resource::default()
    }
}
