//! The composite layer of a validated scenario: Crossplane core's settings, the XRDs,
//! Compositions and Functions from `objects`, and the XR groups. What a run starts the
//! composer with, and the shape of each XR group (composed resources per XR, steps per
//! pipeline, the functions' TTL) that a prediction of core's load reads.

use std::net::SocketAddr;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, Composition};
use limiter::crossplane::circuit::{BreakerConfig, Mode};
use limiter::go::GoDuration;

use super::error::Pos;
use super::kinds::ApiKind;
use super::template::{Template, Vars, render_json};

/// Core's flags (the composer's), with core's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreSettings {
    /// `--max-reconcile-rate`: workers per XR controller.
    pub max_reconcile_rate: usize,
    /// `--poll-interval`.
    pub poll_interval: Duration,
    /// `--min-poll-interval`.
    pub min_poll_interval: Duration,
    /// `--sync-interval`.
    pub sync_interval: Duration,
    /// `--enable-realtime-compositions`.
    pub realtime: bool,
    /// The circuit breaker: `--circuit-breaker-{burst,refill-rate,cooldown,mode}`.
    pub breaker: BreakerConfig,
    /// Not a flag: each of core's API requests waits this long first (`requestLatency`).
    pub request_latency: Duration,
}

impl Default for CoreSettings {
    /// Core's defaults (`cmd/crossplane/core/core.go`).
    fn default() -> Self {
        CoreSettings {
            max_reconcile_rate: composer::composite::DEFAULT_MAX_CONCURRENT_RECONCILES,
            poll_interval: Duration::from_secs(60),
            min_poll_interval: Duration::from_secs(1),
            sync_interval: Duration::from_secs(3600),
            realtime: true,
            breaker: BreakerConfig::default(),
            request_latency: Duration::ZERO,
        }
    }
}

impl CoreSettings {
    /// The flags as core's command line spells them, for reports and the composer binary.
    #[must_use]
    pub fn args(&self) -> Vec<String> {
        let go = |d: Duration| GoDuration::from_std(d).to_string();
        vec![
            format!("--max-reconcile-rate={}", self.max_reconcile_rate),
            format!("--poll-interval={}", go(self.poll_interval)),
            format!("--min-poll-interval={}", go(self.min_poll_interval)),
            format!("--sync-interval={}", go(self.sync_interval)),
            format!("--enable-realtime-compositions={}", self.realtime),
            format!("--circuit-breaker-burst={}", self.breaker.burst),
            format!(
                "--circuit-breaker-refill-rate={}",
                self.breaker.refill_per_second
            ),
            format!("--circuit-breaker-cooldown={}", self.breaker.cooldown),
            format!(
                "--circuit-breaker-mode={}",
                match self.breaker.mode {
                    Mode::EagerClose => "eager",
                    _ => "released",
                }
            ),
        ]
    }
}

/// How a Function of the scenario runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FunctionRuntime {
    /// The composer's built-in function, in process (`render.crossplane.io/runtime:
    /// InProcess`).
    Builtin,
    /// A function served over plaintext gRPC at an address (`Development`).
    Address(SocketAddr),
}

/// A `pkg.crossplane.io/v1` Function of the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioFunction {
    /// Its name, as pipeline steps name it.
    pub name: String,
    /// How it runs.
    pub runtime: FunctionRuntime,
    /// The whole object.
    pub body: serde_json::Value,
    /// Where it is in the scenario.
    pub pos: Pos,
}

/// Composed resources of one kind that one built-in step composes per XR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composed {
    /// The step.
    pub step: String,
    /// Their `apiVersion`.
    pub api_version: String,
    /// Their kind.
    pub kind: String,
    /// How many per XR (`None`: from the XR's field, `countFromFieldPath`).
    pub count: Option<u32>,
}

/// What one reconcile of an XR of a group involves, as its Composition says: the inputs
/// of core's per-reconcile formulas (N composed resources, F steps, the TTL).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct XrShape {
    /// The pipeline's steps, in order, each with the function it calls.
    pub steps: Vec<(String, String)>,
    /// What the built-in steps compose (a step of another function composes what it
    /// decides, unknown here).
    pub composed: Vec<Composed>,
    /// The smallest TTL a built-in step returns (the XR's requeue with realtime on).
    pub ttl: Option<Duration>,
    /// Whether every step is the built-in function, so `composed` is all there is.
    pub all_builtin: bool,
}

impl XrShape {
    /// N: composed resources per XR, when the pipeline says (every step built-in, every
    /// count fixed).
    #[must_use]
    pub fn resources_per_xr(&self) -> Option<u32> {
        if !self.all_builtin {
            return None;
        }
        self.composed.iter().map(|c| c.count).sum()
    }

    /// F: function calls per reconcile when no step returns requirements (one per step).
    #[must_use]
    pub fn steps_per_pipeline(&self) -> usize {
        self.steps.len()
    }
}

/// What a `functionFault` phase does to a built-in function's answers.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FunctionFault {
    /// Latency added to every call.
    pub delay: Duration,
    /// Percent of calls answered with a FATAL result (0: none), spread evenly over the
    /// calls.
    pub error_percent: f64,
    /// No call reaches the function: each waits for core's deadline.
    pub down: bool,
    /// The TTL every answer carries instead of the function's own (`Some(0)`: none).
    pub ttl: Option<Duration>,
}

/// A `compositionUpdate` phase's edit.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositionEdit {
    /// The Composition edited.
    pub composition: String,
    /// The JSON Patch (RFC 6902) operations, as the scenario gives them.
    pub patch: serde_json::Value,
    /// What a reconcile involves after the edit (the XR groups of the Composition take it).
    pub shape: XrShape,
    /// Composed resources per XR whose template (base, patches, readiness) the edit
    /// changes, and those it adds; `None` when a step is not the built-in function.
    pub changed_per_xr: Option<(u32, u32)>,
}

/// A group of XRs.
#[derive(Clone, Debug)]
pub struct XrGroup {
    /// Its name.
    pub name: String,
    /// The XR kind (from its XRD: plural and scope).
    pub kind: ApiKind,
    /// Index of its XRD in [`Composites::xrds`].
    pub xrd: usize,
    /// The Composition that composes its XRs.
    pub composition: String,
    /// How many XRs.
    pub count: u32,
    /// The XR's `spec` (placeholders allowed; `Null` when none).
    pub spec: serde_json::Value,
    /// Each XR's name.
    pub name_pattern: Template,
    /// The conditions (type, status) a Ready XR has.
    pub ready: Vec<(String, String)>,
    /// What a reconcile of one of its XRs involves.
    pub shape: XrShape,
    /// Where it is in the scenario.
    pub pos: Pos,
}

impl XrGroup {
    fn vars<'a>(&'a self, index: u32, scenario: &'a str) -> Vars<'a> {
        Vars::new(index, &self.name, scenario)
    }

    /// The name of XR `index`.
    #[must_use]
    pub fn xr_name(&self, index: u32, scenario: &str) -> String {
        self.name_pattern.render(self.vars(index, scenario))
    }

    /// XR `index`, whole: its kind, name, namespace, `spec` and Composition reference.
    #[must_use]
    pub fn xr(&self, index: u32, scenario: &str, namespace: Option<&str>) -> serde_json::Value {
        let mut spec = match render_json(&self.spec, self.vars(index, scenario)) {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        spec.insert(
            "crossplane".to_owned(),
            serde_json::json!({"compositionRef": {"name": self.composition}}),
        );
        let mut metadata = serde_json::json!({"name": self.xr_name(index, scenario)});
        if let (Some(ns), true) = (namespace, self.kind.namespaced) {
            metadata["namespace"] = ns.into();
        }
        serde_json::json!({
            "apiVersion": self.kind.api_version(),
            "kind": self.kind.kind,
            "metadata": metadata,
            "spec": spec,
        })
    }
}

/// The composite layer of a scenario (empty without `composites`).
#[derive(Clone, Debug, Default)]
pub struct Composites {
    /// Core's settings.
    pub core: CoreSettings,
    /// The XRDs, in file order.
    pub xrds: Vec<CompositeResourceDefinition>,
    /// The Compositions, in file order.
    pub compositions: Vec<Composition>,
    /// The Functions, in file order.
    pub functions: Vec<ScenarioFunction>,
    /// The XR groups, in file order.
    pub groups: Vec<XrGroup>,
}

impl Composites {
    /// Whether the scenario has XRs (and so runs core).
    #[must_use]
    pub fn any(&self) -> bool {
        !self.groups.is_empty()
    }

    /// XRs in every group.
    #[must_use]
    pub fn total_xrs(&self) -> u64 {
        self.groups.iter().map(|g| u64::from(g.count)).sum()
    }

    /// The composed kinds of every group's built-in steps, `(apiVersion, kind)`, each once.
    #[must_use]
    pub fn composed_kinds(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for c in self.groups.iter().flat_map(|g| &g.shape.composed) {
            let k = (c.api_version.clone(), c.kind.clone());
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }
}

/// A check of core's composite layer (measured in `result::core`).
#[derive(Clone, Debug, PartialEq)]
pub enum CoreCheck {
    /// `coreApiRequests`: core's requests in any window ≤ max (default: the plan's
    /// `core/api-requests/<W>s`).
    ApiRequests {
        /// W.
        window: Duration,
        /// The scenario's limit.
        max: Option<f64>,
    },
    /// `functionCalls`: calls of every function over the run ≤ max (default: the plan's
    /// `core/function-calls`).
    FunctionCalls {
        /// The scenario's limit.
        max: Option<f64>,
    },
    /// `xrTimeToReady`: the quantile of the XRs' times to Ready ≤ maxDuration (default: the
    /// plan's `core/xr-time-to-ready` plus `tolerance_percent`).
    XrTimeToReady {
        /// The quantile, in (0, 1].
        quantile: f64,
        /// The scenario's limit.
        max: Option<Duration>,
        /// Percent over the prediction the limit allows without `maxDuration`.
        tolerance_percent: f64,
    },
    /// `breakerOpens`: opens over every XR controller ≤ max, or ≥ min. With neither, the
    /// plan's `core/breaker-opens` decides: when it says circuits surely open (a storm),
    /// at least that many must; else none may.
    BreakerOpens {
        /// The scenario's upper limit.
        max: Option<u64>,
        /// The scenario's lower limit.
        min: Option<u64>,
    },
    /// `staleXRs`: XRs stale at the end for at least `grace` ≤ max (default: the plan's
    /// `core/stale-xrs`, 0 when it predicts none).
    StaleXrs {
        /// The scenario's limit.
        max: Option<u64>,
        /// How long an XR must have been stale to count.
        grace: Duration,
    },
}
