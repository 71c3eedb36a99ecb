//! Step 6 of an XR reconcile, compose, against an API server: read the composed resources,
//! run the pipeline, collect garbage, and apply (the XR's resource refs, each composed
//! resource in order, the XR's status).
//!
//! Follows crossplane/crossplane's `composite/composition_functions.go`
//! (`FunctionComposer.Compose`): composed resources are read from the watches' [`Cache`]
//! when one holds their kind, with a live GET when it does not hold the object (core's
//! fallback when its cache answers NotFound) or watches no such kind; the status apply
//! carries the functions' desired XR status and the XR's conditions as the reconciler
//! holds them, and its answer is the XR the reconciler goes on with (core loads it into
//! its XR object); a composed apply the API server refuses as invalid (422) leaves that
//! resource unsynced with a warning event, any other failure fails the compose. Not
//! reproduced: connection and credential secrets (no Secret reads), and core's Update that
//! strips the composite labels before a garbage delete.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PropagationPolicy,
};
use kube::core::GroupVersionKind;
use kube::runtime::events::EventType;
use provider::reconciler::Draws;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::events::REASON_COMPOSE;
use super::outcome::{ComposedState, Outcome, outcome};
use super::render::{ANNOTATION_COMPOSITION_RESOURCE_NAME, RenderError, render_composed};
use super::watch::{Cache, Cached};
use super::{FIELD_OWNER_XR, Machinery, ResourceRef, child_name, composed_field_owner};
use crate::api::CompositionRevision;
use crate::function::FunctionRunner;
use crate::function::pipeline::{self, PipelineError, Step};
use crate::function::proto::{Ready, Resource, Severity, State};
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
    /// The pipeline failed (core does not wrap this error).
    #[error(transparent)]
    Pipeline(PipelineError),
    /// A desired resource could not be rendered.
    #[error("cannot render composed resource")]
    Render(#[source] RenderError),
    /// A desired resource has no `apiVersion` or `kind`.
    #[error("desired composed resource {0:?} has no apiVersion or kind")]
    NoKind(String),
    /// No free name was found for a composed resource in ten tries.
    #[error("cannot generate a name for composed resource {0:?}")]
    NoName(String),
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
    /// Conditions, events and how many resources wait: [`outcome`] of the composed
    /// resources and the functions' verdict on the XR.
    pub outcome: Outcome,
    /// Each desired composed resource: applied (synced) or refused, and ready.
    pub resources: Vec<ComposedState>,
    /// The functions' verdict on the XR's readiness (`res.Ready`), if they gave one.
    pub ready: Option<bool>,
    /// The pipeline's smallest non-zero TTL.
    pub ttl: Option<std::time::Duration>,
    /// How many composed resources were deleted as garbage.
    pub deleted: usize,
    /// The XR as the API server answered the status apply.
    pub xr: DynamicObject,
    /// Events for the reconciler to record, in order: one per function result (NORMAL or
    /// WARNING, `Pipeline step "<step>": <message>`) and one warning per composed apply
    /// refused as invalid.
    pub events: Vec<(EventType, String, String)>,
    /// How many composed resources were read with a live GET (not from the cache).
    pub live_reads: usize,
    /// The conditions the functions returned, for the reconciler to set on the XR.
    pub conditions: Vec<crate::function::proto::Condition>,
}

/// The events of the functions' non-fatal results, as core turns them into events: the
/// result's reason (`ComposeResources` when it has none), Normal or Warning by severity,
/// and `Pipeline step "<step>": <message>`.
#[must_use]
pub fn result_events(
    results: &[(String, crate::function::proto::Result)],
) -> Vec<(EventType, String, String)> {
    results
        .iter()
        .map(|(step, result)| {
            let reason = result
                .reason
                .clone()
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| REASON_COMPOSE.to_owned());
            let (type_, message) = match result.severity() {
                Severity::Normal => (EventType::Normal, result.message.clone()),
                Severity::Warning => (EventType::Warning, result.message.clone()),
                _ => (
                    EventType::Warning,
                    format!(
                        "Pipeline step {step:?} returned a result of unknown severity (assuming warning): {}",
                        result.message
                    ),
                ),
            };
            (type_, reason, format!("Pipeline step {step:?}: {message}"))
        })
        .collect()
}

/// What a [`Composer`] calls for each kind it meets the first time.
type NewKind = Box<dyn Fn(&ApiResource) + Send + Sync>;

/// Composes XRs of one kind through a function runner, with an API client.
pub struct Composer {
    client: kube::Client,
    runner: Box<dyn FunctionRunner>,
    kinds: Mutex<HashMap<GroupVersionKind, ApiResource>>,
    new_kind: Option<NewKind>,
    cache: Option<Cache>,
    /// Draws the suffixes of generated names.
    draws: Arc<Draws>,
}

impl Composer {
    /// A composer calling functions through `runner`.
    pub fn new(client: kube::Client, runner: impl FunctionRunner + 'static) -> Self {
        Self {
            client,
            runner: Box::new(runner),
            kinds: Mutex::new(HashMap::new()),
            new_kind: None,
            cache: None,
            draws: Arc::new(Draws::from_os()),
        }
    }

    /// Draws generated names' suffixes from `draws` (seeded by the operating system by
    /// default, as Kubernetes' name generator is): a seeded source repeats them.
    #[must_use]
    pub fn with_draws(mut self, draws: Arc<Draws>) -> Self {
        self.draws = draws;
        self
    }

    /// Reads composed resources from `cache` (what the composed kinds' watches hold), as
    /// core reads them from its informers: an object the cache does not hold, or a kind
    /// no watch fills, is read with a live GET.
    #[must_use]
    pub fn with_cache(mut self, cache: Cache) -> Self {
        self.cache = Some(cache);
        self
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

    /// Composes `xr` (of `xr_resource`) with `revision`'s pipeline, by `deadline`. `xr` is
    /// the XR as the reconciler holds it: its conditions go out with the status apply.
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
        let xr_json = serde_json::to_value(xr).expect("objects serialize");
        let xr_name = xr.metadata.name.clone().unwrap_or_default();
        let namespace = xr.metadata.namespace.as_deref();
        let machinery = Machinery::read(&xr_json).map_err(ComposeError::Machinery)?;

        // Observed composed resources, by their pipeline name.
        let mut observed: BTreeMap<String, (Arc<Cached>, ApiResource)> = BTreeMap::new();
        let mut live_reads = 0;
        let xr_uid = xr.metadata.uid.clone().unwrap_or_default();
        for r in &machinery.resource_refs {
            let Some(name) = &r.name else { continue };
            let resource = self.resource(&r.api_version, &r.kind).await?;
            let ns = namespace.or(r.namespace.as_deref());
            let cached = self.cache.as_ref().and_then(|c| c.get(&resource, ns, name));
            let found = match cached {
                Some(object) => Some(object),
                None => {
                    live_reads += 1;
                    self.dynamic(&resource, ns)
                        .get_opt(name)
                        .await
                        .map_err(api("get composed resource"))?
                        .map(|o| Arc::new(Cached::new(o)))
                }
            };
            if let Some(object) = found {
                // A resource another XR controls is treated as absent, as core does.
                let other = object
                    .object()
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.controller == Some(true) && !xr_uid.is_empty() && o.uid != xr_uid);
                if other {
                    continue;
                }
                if let Some(id) = object
                    .value()
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(ANNOTATION_COMPOSITION_RESOURCE_NAME))
                    .and_then(Value::as_str)
                {
                    let id = id.to_owned();
                    observed.insert(id, (object, resource));
                }
            }
        }

        let state = State {
            composite: Some(resource_of(&xr_json)),
            resources: observed
                .iter()
                .map(|(id, (cached, _))| (id.clone(), resource_of(cached.value())))
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
            state,
            State::default(),
            deadline,
        )
        .await
        .map_err(ComposeError::Pipeline)?;
        let mut events = result_events(&run.results);

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
            let mut cd = render_composed(
                id,
                &value,
                observed.get(id).map(|(c, _)| c.value()),
                &xr_json,
            )
            .map_err(ComposeError::Render)?;
            let (Some(api_version), Some(kind)) = (
                cd["apiVersion"].as_str().map(str::to_owned),
                cd["kind"].as_str().map(str::to_owned),
            ) else {
                return Err(ComposeError::NoKind(id.clone()));
            };
            let resource = self.resource(&api_version, &kind).await?;
            if cd.pointer("/metadata/name").is_none() {
                let name = self.generate_name(id, &cd, &resource).await?;
                cd["metadata"]["name"] = json!(name);
            }
            desired.push((id.clone(), cd, resource, wanted.ready() == Ready::True));
        }

        // Garbage: observed resources no longer desired.
        let mut deleted = 0;
        for (id, (cached, resource)) in &observed {
            if run.desired.resources.contains_key(id) {
                continue;
            }
            let value = cached.value();
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
        apply_unread(&xrs, &xr_name, &apply_xr, &refs_patch)
            .await
            .map_err(api("update composed resource references"))?;

        let owner = composed_field_owner(&xr_name, &xr_resource.kind, &xr_resource.group);
        let apply_composed = PatchParams::apply(&owner).force();
        let mut states = Vec::new();
        for (id, cd, resource, ready) in &desired {
            let name = cd["metadata"]["name"].as_str().unwrap_or_default();
            let ns = cd.pointer("/metadata/namespace").and_then(Value::as_str);
            let synced =
                match apply_unread(&self.dynamic(resource, ns), name, &apply_composed, cd).await {
                    Ok(_) => true,
                    // Invalid: a warning, the resource unsynced, and on to the next.
                    Err(kube::Error::Api(s)) if s.code == 422 => {
                        events.push((
                            EventType::Warning,
                            REASON_COMPOSE.to_owned(),
                            format!("cannot apply composed resource {id:?}: {}", s.message),
                        ));
                        false
                    }
                    Err(e) => return Err(api(format!("apply composed resource {id:?}"))(e)),
                };
            states.push(ComposedState {
                name: id.clone(),
                synced,
                ready: *ready,
            });
        }

        // The XR's status: the functions' desired status, and the conditions the reconciler
        // holds (core's `FromStruct` of the desired composite, then `SetConditions(cs...)`).
        let desired_xr = run
            .desired
            .composite
            .as_ref()
            .and_then(|c| c.resource.as_ref())
            .map(from_struct)
            .unwrap_or_default();
        let mut status = desired_xr
            .get("status")
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        if let Some(conditions) = xr_json
            .pointer("/status/conditions")
            .filter(|c| c.as_array().is_some_and(|a| !a.is_empty()))
        {
            status["conditions"] = conditions.clone();
        }
        let mut metadata = json!({"name": xr_name});
        if let Some(ns) = namespace {
            metadata["namespace"] = json!(ns);
        }
        if let Some(uid) = &xr.metadata.uid {
            metadata["uid"] = json!(uid);
        }
        let mut status_patch = json!({
            "apiVersion": xr_json["apiVersion"], "kind": xr_json["kind"],
            "metadata": metadata,
        });
        if status.as_object().is_some_and(|s| !s.is_empty()) {
            status_patch["status"] = status;
        }
        let applied = xrs
            .patch_status(&xr_name, &apply_xr, &Patch::Apply(&status_patch))
            .await
            .map_err(api("apply composite resource status"))?;

        let ready = match run
            .desired
            .composite
            .as_ref()
            .map_or(Ready::Unspecified, Resource::ready)
        {
            Ready::True => Some(true),
            Ready::False => Some(false),
            Ready::Unspecified => None,
        };
        Ok(Composed {
            outcome: outcome(&states, ready),
            resources: states,
            ready,
            ttl: run.ttl,
            deleted,
            xr: applied,
            events,
            live_reads,
            conditions: run.conditions,
        })
    }

    /// A name for the new composed resource `id`, rendered as `cd`, as core's name
    /// generator gives it: [`child_name`] of its generateName, its controller's uid and its
    /// composition resource name when it has both, with no request (every reconcile names
    /// it the same, so a reconcile that reads a stale XR cannot leak a second copy); else
    /// Kubernetes' `SimpleNameGenerator` (the prefix cut to 58 characters, then five of
    /// `bcdfghjklmnpqrstvwxz2456789`), checked free with a GET, ten tries at most.
    async fn generate_name(
        &self,
        id: &str,
        cd: &Value,
        resource: &ApiResource,
    ) -> Result<String, ComposeError> {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        const TRIES: usize = 10;
        let prefix = cd
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let child = cd
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(ANNOTATION_COMPOSITION_RESOURCE_NAME))
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        let owner_uid = cd
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|o| o["controller"] == json!(true))
            .and_then(|o| o["uid"].as_str())
            .filter(|uid| !uid.is_empty());
        if let (Some(child), Some(uid)) = (child, owner_uid) {
            return Ok(child_name(prefix, uid, child));
        }
        let base: String = prefix.chars().take(58).collect();
        let ns = cd.pointer("/metadata/namespace").and_then(Value::as_str);
        let objects = self.dynamic(resource, ns);
        for _ in 0..TRIES {
            let suffix: String = (0..5)
                .map(|_| ALPHABET[self.draws.below(ALPHABET.len())] as char)
                .collect();
            let name = format!("{base}{suffix}");
            let taken = objects
                .get_opt(&name)
                .await
                .map_err(api("check a generated name"))?;
            if taken.is_none() {
                return Ok(name);
            }
        }
        Err(ComposeError::NoName(id.to_owned()))
    }
}

fn resource_of(value: &Value) -> Resource {
    Resource {
        resource: value.as_object().map(to_struct),
        ..Resource::default()
    }
}

/// A server-side apply of `patch` to `name` whose answer is read for its status only: kube's
/// `Api::patch` would decode the object the server returns, and core's applies of the
/// resource references and of composed resources use nothing of it. The request is the one
/// `Api::patch` sends.
async fn apply_unread(
    api: &Api<DynamicObject>,
    name: &str,
    params: &PatchParams,
    patch: &Value,
) -> kube::Result<()> {
    let mut request = kube::core::Request::new(api.resource_url())
        .patch(name, params, &Patch::Apply(patch))
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("patch");
    api.clone().into_client().request_text(request).await?;
    Ok(())
}
