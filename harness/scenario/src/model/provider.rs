//! The provider's prediction inputs: what the settings do not give.

use std::time::Duration;

/// The CPU time of one reconcile of the sample provider on the embedded stack, measured in
/// real time (scenarios/README.md, "Virtual time").
pub const DEFAULT_RECONCILE_CPU: Duration = Duration::from_micros(300);

/// Prediction inputs (docs/budget.md §0).
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionInputs {
    /// Mean reconcile duration L̄.
    pub reconcile: Duration,
    /// Shortest reconcile L_min.
    pub min_reconcile: Duration,
    /// Longest reconcile L_max (also the call spread Δ).
    pub max_reconcile: Duration,
    /// CPU time of one reconcile, slept by the provider in virtual time.
    pub reconcile_cpu: Duration,
    /// e_create = 1.
    pub self_event: bool,
    /// Level of the statistical tolerances.
    pub alpha: f64,
    /// API requests per reconcile type.
    pub api: ApiCosts,
    /// The API client's QPS and burst, when a profile gives them (default 5R and 10R).
    pub client: Option<crate::flags::ClientLimits>,
    /// a: attempts the cloud SDK makes of one call when the cloud throttles or fails it.
    pub sdk_attempts: u32,
}

impl Default for PredictionInputs {
    fn default() -> Self {
        PredictionInputs {
            reconcile: Duration::from_millis(50),
            min_reconcile: Duration::from_millis(50),
            max_reconcile: Duration::from_millis(50),
            reconcile_cpu: DEFAULT_RECONCILE_CPU,
            self_event: true,
            alpha: 0.001,
            api: ApiCosts::default(),
            client: None,
            sdk_attempts: 1,
        }
    }
}

/// API requests per reconcile type (a_r, budget.md §0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ApiCosts {
    pub poll: u32,
    pub resync: u32,
    pub create: u32,
    pub observe: u32,
    pub update: u32,
    pub delete: u32,
    pub error: u32,
    pub before_create: u32,
}

impl Default for ApiCosts {
    /// crossplane-runtime v2.4.0's write sequences.
    fn default() -> Self {
        ApiCosts {
            poll: 1,
            resync: 2,
            create: 5,
            observe: 1,
            update: 2,
            delete: 2,
            error: 2,
            before_create: 2,
        }
    }
}

impl ApiCosts {
    /// The fewest requests any call-making reconcile waits for (a_min).
    #[must_use]
    pub fn min(&self) -> u32 {
        [
            self.poll,
            self.resync,
            self.create,
            self.observe,
            self.update,
            self.delete,
        ]
        .into_iter()
        .min()
        .unwrap_or(1)
        .max(1)
    }
}
