//! Fault settings: injected latency, error rates and outage windows per action class.

use std::collections::BTreeMap;
use std::time::Duration;

use super::ResourceFault;
use crate::model::Class;
use crate::service::Service;

/// How long a request of a class is held before it is answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Latency {
    /// Always the same delay.
    Fixed(Duration),
    /// Uniform in `[min, max]`.
    Uniform {
        /// The shortest delay.
        min: Duration,
        /// The longest delay.
        max: Duration,
    },
    /// Log-normal with the given median and shape `sigma` (the standard deviation of the
    /// delay's natural logarithm), the usual shape of real API latency.
    LogNormal {
        /// The median delay.
        median: Duration,
        /// The spread; 0 gives the median every time.
        sigma: f64,
    },
}

/// A share of a class's requests that fail with a server error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorRate {
    /// The probability in `[0, 1]` that a request fails.
    pub probability: f64,
    /// The status returned: 500 or 503.
    pub status: u16,
}

/// A window, in time since the cloud started (see [`crate::MockCloud::elapsed`]), during
/// which every API request fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    /// When the window opens.
    pub start: Duration,
    /// When it closes (exclusive).
    pub end: Duration,
    /// The status returned during the window: 500 or 503.
    pub status: u16,
}

impl Outage {
    /// Whether `at` (time since start) falls in the window.
    pub fn covers(&self, at: Duration) -> bool {
        self.start <= at && at < self.end
    }
}

/// All faults; the default injects none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// Latency per class; a class absent here is answered at once.
    pub latency: BTreeMap<Class, Latency>,
    /// Error rate per class.
    pub errors: BTreeMap<Class, ErrorRate>,
    /// Scheduled outages.
    pub outages: Vec<Outage>,
    /// The seed of the random draws (latency and errors), for reproducible runs.
    pub seed: u64,
    /// Faults of AWS services, per operation name; the key `*` covers every operation of
    /// the service that has no entry of its own.
    pub services: BTreeMap<Service, BTreeMap<String, OperationFaults>>,
    /// Per-resource rules (generic API), in order.
    pub resources: Vec<ResourceFault>,
}

/// The faults of one AWS operation (or of every operation of a service, under `*`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OperationFaults {
    /// How long its requests are held.
    pub latency: Option<Latency>,
    /// A share of its requests that fail (any status from 400 to 599 when `code` is set,
    /// else 500 or 503).
    pub errors: Option<ErrorRate>,
    /// Windows in which every one of its requests fails.
    pub outages: Vec<Outage>,
    /// The error code its injected errors and outages answer, in the service's envelope
    /// (such as `SlowDown` or `InternalError`); without it, the service's usual code for
    /// the status.
    pub code: Option<String>,
}

impl OperationFaults {
    /// No faults.
    pub fn none() -> OperationFaults {
        OperationFaults::default()
    }

    /// Sets the latency.
    #[must_use]
    pub fn with_latency(mut self, latency: Latency) -> OperationFaults {
        self.latency = Some(latency);
        self
    }

    /// Sets the error rate.
    #[must_use]
    pub fn with_errors(mut self, errors: ErrorRate) -> OperationFaults {
        self.errors = Some(errors);
        self
    }

    /// Adds an outage window.
    #[must_use]
    pub fn with_outage(mut self, outage: Outage) -> OperationFaults {
        self.outages.push(outage);
        self
    }

    /// Sets the error code.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> OperationFaults {
        self.code = Some(code.into());
        self
    }
}

impl Faults {
    /// No faults.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// Sets the latency of a class.
    #[must_use]
    pub fn with_latency(mut self, class: Class, latency: Latency) -> Faults {
        self.latency.insert(class, latency);
        self
    }

    /// Sets the error rate of a class.
    #[must_use]
    pub fn with_errors(mut self, class: Class, errors: ErrorRate) -> Faults {
        self.errors.insert(class, errors);
        self
    }

    /// Adds an outage window.
    #[must_use]
    pub fn with_outage(mut self, outage: Outage) -> Faults {
        self.outages.push(outage);
        self
    }

    /// Sets the seed of the random draws.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Faults {
        self.seed = seed;
        self
    }

    /// Sets the faults of one operation of an AWS service (`*` for all of them).
    #[must_use]
    pub fn with_operation(
        mut self,
        service: Service,
        operation: &str,
        faults: OperationFaults,
    ) -> Faults {
        self.services
            .entry(service)
            .or_default()
            .insert(operation.to_owned(), faults);
        self
    }

    /// Whether any fault is configured (lets the hot path skip the random draws).
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
            && self.errors.is_empty()
            && self.outages.is_empty()
            && self.services.is_empty()
            && self.resources.is_empty()
    }

    /// Adds a per-resource rule.
    #[must_use]
    pub fn with_resource_fault(mut self, fault: ResourceFault) -> Faults {
        self.resources.push(fault);
        self
    }
}
