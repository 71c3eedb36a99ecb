//! Assertions: what must hold at the end.

use std::time::Duration;

use crate::error::Pos;

/// An assertion.
#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    /// Name in reports.
    pub name: String,
    /// What is checked.
    pub check: Check,
    /// Index of the phase it is restricted to.
    pub phase: Option<usize>,
    /// Account it is restricted to.
    pub account: Option<String>,
    /// Where it is written.
    pub pos: Pos,
}

/// What an assertion checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// A check of Crossplane core's composite layer.
    Core(crate::composite::CoreCheck),
    /// Windowed maximum of cloud calls ≤ the hard bound (or `max`).
    CloudCalls {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Windowed maximum of API requests ≤ the API bound (or `max`).
    ApiRequests {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Windowed maximum of cloud calls in a hold ≤ the statistical tolerance (or `max`).
    SteadyRate {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Throttled calls ≤ max.
    Throttles {
        /// Limit.
        max: u64,
    },
    /// A time-to-Ready quantile.
    TimeToReady {
        /// q in (0, 1].
        quantile: f64,
        /// The limit.
        limit: TtrLimit,
    },
    /// Orphans ≤ max.
    Orphans {
        /// Limit.
        max: u64,
    },
    /// Duplicates ≤ max.
    Duplicates {
        /// Limit.
        max: u64,
    },
    /// Efficiency ≥ min.
    DrainEfficiency {
        /// Lowest acceptable efficiency.
        min: f64,
    },
    /// Resources with an incomplete create at a phase's end ≤ max.
    Stuck {
        /// Limit.
        max: u64,
        /// Resources whose create a kill interrupted do not count.
        allow_interrupted: bool,
    },
    /// Ready resources whose cloud object vanished, at a phase's end ≤ max.
    Lost {
        /// Limit.
        max: u64,
    },
    /// Growth of each sampled memory measure from the end of the warm-up to the end ≤ max %.
    MemoryGrowth {
        /// Limit, percent.
        max_percent: f64,
    },
    /// The most calls of one resource in a window ≤ the prediction (or `max`).
    PerResourceCalls {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Resources looping hot in a window ≤ max.
    HotLoops {
        /// W.
        window: Duration,
        /// Calls above this many times what the interval allows count as hot.
        factor: f64,
        /// Resources allowed to loop hot.
        max: u64,
    },
    /// Calls for a resource before the retry hint (`Retry-After`) of an earlier answer for
    /// it had passed ≤ max.
    RetryAfterHonoured {
        /// Limit.
        max: u64,
    },
    /// The healthy resources' realised poll period within tolerance of the prediction.
    PollPeriod {
        /// Percent.
        tolerance_percent: f64,
    },
    /// Windowed maximum of one operation's (or service's) calls ≤ its bound (or `max`).
    OperationCalls {
        /// `service:Operation`, or a service.
        operation: String,
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Mean calls per reconcile per kind and path ≤ the calibration's most, plus `extra`.
    CallsPerReconcile {
        /// Only this kind (as reports name it).
        kind: Option<String>,
        /// Only this path.
        path: Option<String>,
        /// Calls allowed above the calibration.
        extra: f64,
    },
}

/// The limit of a time-to-Ready assertion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TtrLimit {
    /// The prediction plus this many percent.
    Predicted {
        /// Percent.
        tolerance_percent: f64,
    },
    /// A fixed duration.
    Fixed(Duration),
}
