//! Crossplane core's composite layer (budget.md §12): what one XR shape costs core's API
//! requests and the functions, how long until its XRs are Ready, and when the realtime
//! circuit breaker opens, for how long, and which XRs it leaves stale.
//!
//! Pure functions of a [`CoreShape`]: one XR shape (X XRs of N_x composed resources, a
//! pipeline of F steps) and core's settings. [`predict`] applies them all; the modules hold
//! one concept each: [`load`] (steady-state polling, function calls, the creation fan-in),
//! [`ready`] (XR time to Ready), [`breaker`] (the circuit breaker's lemma and verdicts) and
//! [`phases`] (what a Composition edit and a function's fault cost).
//! The numbers are those of the composer (the crate that reproduces core's composite
//! reconciler), whose behaviour they were checked against in virtual time.

pub mod breaker;
pub mod load;
pub mod phases;
pub mod ready;

use super::formula::Prediction;

/// One pipeline step: the function it calls and k_i, its calls per reconcile.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The Function the step names.
    pub function: String,
    /// k_i: `RunFunction` calls per reconcile (1; 2 for a step that returns requirements on
    /// core v2.3, up to 6).
    pub calls: f64,
}

impl Step {
    /// A step calling `function` once per reconcile.
    #[must_use]
    pub fn new(function: &str) -> Self {
        Step {
            function: function.to_owned(),
            calls: 1.0,
        }
    }
}

/// When an open circuit closes (the breaker's `--circuit-breaker-mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CloseMode {
    /// Crossplane as released: on the first watch event after the cooldown.
    #[default]
    Released,
    /// PR #7725: the XR is requeued every half-open interval while open, and the reconcile
    /// after the cooldown closes the circuit.
    Eager,
}

/// The realtime circuit breaker's settings (core's flags and constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerShape {
    /// B_cb: tokens per XR, the bucket starting full (`--circuit-breaker-burst`, 100).
    pub burst: f64,
    /// R_cb: tokens per second (`--circuit-breaker-refill-rate`, 1).
    pub refill: f64,
    /// T_cool: how long the circuit stays open at least (`--circuit-breaker-cooldown`, 300 s).
    pub cooldown: f64,
    /// T_half: one event passes this often while open (30 s, no flag).
    pub half_open: f64,
    /// When the circuit closes.
    pub mode: CloseMode,
}

impl Default for BreakerShape {
    /// Core's defaults: burst 100, 1 token/s, cooldown 5 min, half-open every 30 s, released.
    fn default() -> Self {
        BreakerShape {
            burst: 100.0,
            refill: 1.0,
            cooldown: 300.0,
            half_open: 30.0,
            mode: CloseMode::Released,
        }
    }
}

/// One XR shape and core's settings: the inputs of budget.md §12.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreShape {
    /// X: XRs of this shape.
    pub xrs: f64,
    /// N_x: composed resources per XR.
    pub composed: f64,
    /// The pipeline, in order (F = its length).
    pub steps: Vec<Step>,
    /// TTL: the pipeline's smallest non-zero `meta.ttl` (s); 0 when no step returns one.
    /// function-sdk-go's default is 60 s; the composer's built-in function returns its
    /// input's `ttl` or none.
    pub ttl: f64,
    /// `--enable-realtime-compositions` (on): with it off there are no watches and no
    /// breaker, and XRs are polled every `poll_interval`.
    pub realtime: bool,
    /// P_core: `--poll-interval` (60 s), used only with realtime off.
    pub poll_interval: f64,
    /// S_sync: `--sync-interval` (3,600 s): each informer replays its objects every
    /// S_sync × [0.9, 1.1).
    pub sync_interval: f64,
    /// w_core: workers per XR controller (`--max-reconcile-rate`, 100). Core has no
    /// reconcile rate limit and no client limit (QPS −1).
    pub workers: f64,
    /// S: live reads per reconcile: connection and credential Secrets (core reads them
    /// uncached; the composer has none, 0).
    pub secret_reads: f64,
    /// t_fn: one `RunFunction` call (s).
    pub t_fn: f64,
    /// t_apply: one API request of core, sent one after another (s).
    pub t_apply: f64,
    /// t_watch: from an object's write to core's watch event (s).
    pub t_watch: f64,
    /// τ_MR: the slowest composed resource's time to Ready from its create, the providers'
    /// own prediction (docs/budget.md §5) (s).
    pub mr_ready: f64,
    /// u: the provider's writes per composed resource while creating it (finalizer,
    /// external-name, create-pending, create-succeeded, and two status writes: 6 for ours,
    /// counted at the API server's journal).
    pub provider_writes: f64,
    /// h: changes of a composed resource the XR's status shows (the resource leaving the
    /// unsynced list, then the unready one: 2; 1 for a provider that writes Ready only).
    pub status_changes: f64,
    /// Δt: the shortest that one XR's creation events may take, from its create to its last
    /// resource's Ready (s); 0 for a zero-latency mock cloud, which compresses them. The
    /// longest is the XR's time to Ready ([`breaker::creation_span_max`]).
    pub creation_span: f64,
    /// n_k: composed kinds, each watched by an informer of its own (1).
    pub composed_kinds: f64,
    /// n_kind: the most objects of one watched kind per XR (N_x when all composed resources
    /// are of one kind; more with watched required resources or Usages).
    pub watched_per_kind: f64,
    /// v_rev: the XR's own changing writes per new CompositionRevision, each an Update
    /// event (the revision-reference Update and the status Updates of the reconciles the
    /// revision's two events cause: 3 measured on the composer).
    pub xr_writes_per_revision: f64,
    /// δ_edit: seconds between two Composition edits of an edit storm (a single edit: ∞).
    pub edit_interval: f64,
    /// The breaker.
    pub breaker: BreakerShape,
}

impl CoreShape {
    /// `xrs` XRs of `composed` resources through `steps`, with core's defaults and a 60 s
    /// TTL (function-sdk-go's default).
    #[must_use]
    pub fn new(xrs: f64, composed: f64, steps: Vec<Step>) -> Self {
        CoreShape {
            xrs,
            composed,
            steps,
            ttl: 60.0,
            realtime: true,
            poll_interval: 60.0,
            sync_interval: 3600.0,
            workers: 100.0,
            secret_reads: 0.0,
            t_fn: 0.0,
            t_apply: 0.0,
            t_watch: 0.0,
            mr_ready: 0.0,
            provider_writes: 6.0,
            status_changes: 2.0,
            creation_span: 0.0,
            composed_kinds: 1.0,
            watched_per_kind: composed,
            xr_writes_per_revision: 3.0,
            edit_interval: f64::INFINITY,
            breaker: BreakerShape::default(),
        }
    }

    /// F: pipeline steps.
    #[must_use]
    pub fn f(&self) -> f64 {
        self.steps.len() as f64
    }

    /// Σk_i: function calls per reconcile.
    #[must_use]
    pub fn calls_per_reconcile(&self) -> f64 {
        self.steps.iter().map(|s| s.calls).sum()
    }

    /// API requests of a steady reconcile: N_x + 2 applies and S live reads.
    #[must_use]
    pub fn steady_requests(&self) -> f64 {
        self.composed + 2.0 + self.secret_reads
    }

    /// L: one reconcile, Σk_i·t_fn + (N_x + 2 + S)·t_apply (the applies are sequential).
    #[must_use]
    pub fn reconcile_time(&self) -> f64 {
        self.calls_per_reconcile() * self.t_fn + self.steady_requests() * self.t_apply
    }

    /// The steady requeue period before jitter: the TTL with realtime on (0: none), the
    /// poll interval with it off.
    #[must_use]
    pub fn period(&self) -> f64 {
        if self.realtime {
            self.ttl
        } else {
            self.poll_interval
        }
    }

    /// The functions the pipeline calls, each once, in pipeline order.
    #[must_use]
    pub fn functions(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.steps {
            if !out.contains(&s.function) {
                out.push(s.function.clone());
            }
        }
        out
    }

    /// Σk_i over the steps calling `function`.
    #[must_use]
    pub fn calls_of(&self, function: &str) -> f64 {
        self.steps
            .iter()
            .filter(|s| s.function == function)
            .map(|s| s.calls)
            .sum()
    }
}

/// Everything §12 predicts for one XR shape; each field is a [`Prediction`] with its
/// formula, inputs, meaning and section.
#[derive(Clone, Debug, PartialEq)]
pub struct CorePrediction {
    /// Core's API requests in a steady hour: expected ([`load::steady_requests`]).
    pub steady_requests_per_hour: Prediction,
    /// The hard bound on them in any hour, TTL polls plus the informers' resyncs.
    pub steady_requests_bound_per_hour: Prediction,
    /// Function calls in a steady hour, one per function in pipeline order.
    pub function_calls_per_hour: Vec<Prediction>,
    /// Reconciles of one XR while it is created ([`load::creation_reconciles`]).
    pub creation_reconciles: Prediction,
    /// Core's API requests of the whole creation of the X XRs: an upper bound.
    pub creation_requests: Prediction,
    /// Function calls of the whole creation, one per function: upper bounds.
    pub creation_function_calls: Vec<Prediction>,
    /// XR time to Ready ([`ready::xr_time_to_ready`]).
    pub xr_time_to_ready: Prediction,
    /// Whether creation opens each XR's breaker ([`breaker::creation`]).
    pub creation_opens: breaker::Verdict,
    /// Whether the hourly resync of the composed kind opens it.
    pub resync_opens: breaker::Verdict,
    /// Whether the first replay closes the circuit the creation opened and the XR's own
    /// status Update opens it again ([`breaker::replay_reopens`]).
    pub resync_reopens: Prediction,
    /// Whether a Composition update (or an edit storm) opens it.
    pub revision_opens: breaker::Verdict,
}

/// All of §12 for `shape`.
#[must_use]
pub fn predict(shape: &CoreShape) -> CorePrediction {
    let hour = 3600.0;
    CorePrediction {
        steady_requests_per_hour: load::steady_requests(shape, hour),
        steady_requests_bound_per_hour: load::steady_requests_bound(shape, hour),
        function_calls_per_hour: shape
            .functions()
            .iter()
            .map(|f| load::function_calls(shape, f, hour))
            .collect(),
        creation_reconciles: load::creation_reconciles(shape),
        creation_requests: load::creation_requests(shape),
        creation_function_calls: shape
            .functions()
            .iter()
            .map(|f| load::creation_function_calls(shape, f))
            .collect(),
        xr_time_to_ready: ready::xr_time_to_ready(shape),
        creation_opens: breaker::creation(shape),
        resync_opens: breaker::resync(shape),
        resync_reopens: breaker::replay_reopens(shape, breaker::creation(shape).opens.value >= 1.0),
        revision_opens: breaker::revision(shape),
    }
}

impl CorePrediction {
    /// Every prediction, the breaker verdicts' parts included, for a listing or a lookup by
    /// id.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        [
            &self.steady_requests_per_hour,
            &self.steady_requests_bound_per_hour,
            &self.creation_reconciles,
            &self.creation_requests,
            &self.xr_time_to_ready,
            &self.resync_reopens,
        ]
        .into_iter()
        .chain(&self.function_calls_per_hour)
        .chain(&self.creation_function_calls)
        .chain(
            [
                &self.creation_opens,
                &self.resync_opens,
                &self.revision_opens,
            ]
            .into_iter()
            .flat_map(breaker::Verdict::all),
        )
    }
}

#[cfg(test)]
mod tests;
