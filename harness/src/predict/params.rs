//! The numbers every formula reads, derived from [`Settings`] (the provider's own config type)
//! and the scenario's prediction inputs.

use limiter::crossplane::{RateLimitModel, Settings};

use crate::scenario::{ApiCosts, PredictionInputs};

/// Which work queue the model runs on (budget.md §0 "Queue kind").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// client-go's rate-limiting queue (stale copies exist).
    Classic,
    /// controller-runtime's priority queue (one entry per key).
    Priority,
}

/// budget.md §0's symbols for one provider configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The model.
    pub model: RateLimitModel,
    /// R.
    pub r: f64,
    /// B = 10R.
    pub b: f64,
    /// k: controllers with work.
    pub k: u32,
    /// w: workers per controller.
    pub w: f64,
    /// L̄ (s).
    pub l: f64,
    /// L_min (s).
    pub l_min: f64,
    /// L_max (s); also Δ.
    pub l_max: f64,
    /// c_max.
    pub c_max: f64,
    /// a_r.
    pub api: ApiCosts,
    /// e_create = 1.
    pub self_event: bool,
    /// The queue.
    pub queue: QueueKind,
    /// Poll jitter as a share of each interval (j_i = share·P_i).
    pub jitter_share: f64,
}

impl Params {
    /// From the provider's settings, `k` controllers with work and the prediction inputs.
    /// The queue follows the model as `limiter::crossplane::ProviderRuntime` builds it.
    #[must_use]
    pub fn new(settings: &Settings, k: u32, inputs: &PredictionInputs) -> Params {
        let r = f64::from(settings.rate());
        Params {
            model: settings.model,
            r,
            b: 10.0 * r,
            k: k.max(1),
            w: settings.workers_per_controller() as f64,
            l: inputs.reconcile.as_secs_f64(),
            l_min: inputs.min_reconcile.as_secs_f64(),
            l_max: inputs.max_reconcile.as_secs_f64(),
            c_max: 2.0,
            api: inputs.api,
            self_event: inputs.self_event,
            queue: match settings.model {
                RateLimitModel::ControllerRuntime => QueueKind::Classic,
                _ => QueueKind::Priority,
            },
            jitter_share: f64::from(settings.poll_jitter_percent) / 100.0,
        }
    }

    /// W_tot = k·w.
    #[must_use]
    pub fn w_tot(&self) -> f64 {
        f64::from(self.k) * self.w
    }

    /// Whether a global token bucket limits reconciles.
    #[must_use]
    pub fn has_bucket(&self) -> bool {
        matches!(
            self.model,
            RateLimitModel::Crossplane | RateLimitModel::InQueue
        )
    }

    /// Whether one API-client limiter (QPS 5R, burst 10R) gates every request.
    #[must_use]
    pub fn has_api_limit(&self) -> bool {
        self.model != RateLimitModel::ControllerRuntime
    }

    /// Δ: spread from a reconcile's start to its calls (≤ L_max, Lemma 4).
    #[must_use]
    pub fn delta(&self) -> f64 {
        self.l_max
    }
}

/// The parameters the predict tests start from: R given, B = 10R, 3 controllers with work,
/// R workers each (one for controller-runtime), L = 50 ms, c_max = 2, self-events on.
#[cfg(test)]
pub(crate) fn test_params(model: RateLimitModel, r: f64) -> Params {
    Params {
        model,
        r,
        b: 10.0 * r,
        k: 3,
        w: if model == RateLimitModel::ControllerRuntime {
            1.0
        } else {
            r
        },
        l: 0.05,
        l_min: 0.05,
        l_max: 0.05,
        c_max: 2.0,
        api: ApiCosts::default(),
        self_event: true,
        queue: QueueKind::Priority,
        jitter_share: 0.1,
    }
}
