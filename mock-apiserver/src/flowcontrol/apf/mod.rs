//! API Priority and Fairness, as kube-apiserver runs it
//! (`k8s.io/apiserver/pkg/util/flowcontrol`, `fairqueuing/queueset`), simplified where
//! noted:
//!
//! - a request is classified by the first flow schema that matches it (precedence, then
//!   name) into that schema's priority level; an exempt level runs everything at once;
//! - a limited level has `ceil(server seats × shares ÷ sum of shares)` seats; a `Reject`
//!   level refuses a request when they are all taken (`concurrency-limit`); a `Queue`
//!   level puts every request into one of its queues, picked by shuffle sharding from the
//!   flow's hash (`sha256(schema, distinguisher)`, a hand of `handSize`, the shortest of
//!   them), refuses it when that queue is full and the seats are taken (`queue-full`),
//!   dispatches the head of the queue with the earliest virtual finish time whenever a
//!   seat frees, and refuses a request that waited longer than the wait limit
//!   (`time-out`);
//! - a refusal is a plain-text 429 with `Retry-After` as the dropped-requests tracker
//!   computes it (1 s, doubling while a level keeps dropping, down again when it stops).
//!
//! Simplified: every request takes one seat and one unit of work (no work estimation, no
//! extra seats for lists or for a write's watchers); virtual time advances per dispatch,
//! not with the wall clock; levels do not lend or borrow seats (each has its nominal
//! limit).

mod dropped;
mod metrics;
mod queueing;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::time::Instant;

use self::dropped::Dropped;
use self::metrics::Metrics;
use super::config::{LevelKind, LimitResponse, PriorityAndFairness, RequestDigest};

/// How a request was classified: sent back in the `X-Kubernetes-PF-*` headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The flow schema's name.
    pub flow_schema: String,
    /// Its uid.
    pub flow_schema_uid: String,
    /// The priority level's name.
    pub priority_level: String,
    /// Its uid.
    pub priority_level_uid: String,
}

/// Why a request was refused (`rejected_requests_total`'s `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A `Reject` level with every seat taken.
    ConcurrencyLimit,
    /// The chosen queue was full.
    QueueFull,
    /// It waited longer than the wait limit (or its client went away).
    TimeOut,
}

impl Reason {
    fn label(self) -> &'static str {
        match self {
            Reason::ConcurrencyLimit => "concurrency-limit",
            Reason::QueueFull => "queue-full",
            Reason::TimeOut => "time-out",
        }
    }
}

/// A refusal: the 429's `Retry-After` and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// How the request was classified.
    pub classification: Classification,
    /// Whole seconds for `Retry-After`.
    pub retry_after_secs: u64,
    /// Why.
    pub reason: Reason,
}

struct Waiter {
    id: u64,
    schema: usize,
    arrived: Instant,
    dispatched: oneshot::Sender<()>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    executing: usize,
    next_dispatch: u64,
}

struct Level {
    name: String,
    /// `None` when exempt.
    limit: Option<usize>,
    response: LimitResponse,
    executing: usize,
    queues: Vec<Queue>,
    waiting: usize,
    robin: usize,
    enqueues: usize,
    virtual_now: u64,
    dropped: Dropped,
}

struct State {
    levels: Vec<Level>,
    metrics: Metrics,
    next_id: u64,
}

/// The live API Priority and Fairness filter.
pub struct Apf {
    config: PriorityAndFairness,
    /// Each schema's level index.
    schema_level: Vec<usize>,
    start: Instant,
    state: Mutex<State>,
}

impl std::fmt::Debug for Apf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Apf")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A seat, held while the request executes (a watch until its stream starts).
pub struct Seat {
    apf: Arc<Apf>,
    level: usize,
    schema: usize,
    queue: Option<usize>,
    exempt: bool,
}

impl std::fmt::Debug for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seat")
            .field("level", &self.level)
            .field("schema", &self.schema)
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut state = self.apf.state.lock();
        self.apf
            .finish(&mut state, self.level, self.schema, self.queue, self.exempt);
    }
}

/// What [`Apf::start`] did with a request.
enum Start {
    /// It runs now.
    Running { exempt: bool },
    /// It waits in `queue` for `on_dispatch`.
    Queued {
        queue: usize,
        on_dispatch: oneshot::Receiver<()>,
        id: u64,
    },
}

/// A request in a queue; on drop (its client gone, or it waited too long) it leaves its
/// queue, or gives back the seat it was dispatched to meanwhile.
struct Pending {
    apf: Arc<Apf>,
    id: u64,
    level: usize,
    schema: usize,
    queue: usize,
    armed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.armed {
            let mut state = self.apf.state.lock();
            if !self.apf.eject(&mut state, self) {
                self.apf
                    .finish(&mut state, self.level, self.schema, Some(self.queue), false);
            }
        }
    }
}

impl Apf {
    /// Priority levels with their nominal seats and empty queues.
    pub fn new(config: PriorityAndFairness) -> Self {
        let limits = config.nominal_limits();
        let levels = config
            .priority_levels
            .iter()
            .zip(limits)
            .map(|(level, (_, limit))| {
                let response = match level.kind {
                    LevelKind::Limited { response, .. } => response,
                    LevelKind::Exempt => LimitResponse::Reject,
                };
                let queues = match response {
                    LimitResponse::Queue { queues, .. } => queues as usize,
                    LimitResponse::Reject => 0,
                };
                Level {
                    name: level.name.clone(),
                    limit,
                    response,
                    executing: 0,
                    queues: (0..queues).map(|_| Queue::default()).collect(),
                    waiting: 0,
                    robin: 0,
                    enqueues: 0,
                    virtual_now: 0,
                    dropped: Dropped::new(),
                }
            })
            .collect();
        let schema_level = config
            .flow_schemas
            .iter()
            .map(|s| {
                config
                    .priority_levels
                    .iter()
                    .position(|l| l.name == s.priority_level)
                    .expect("flow schemas name existing levels")
            })
            .collect();
        Self {
            config,
            schema_level,
            start: Instant::now(),
            state: Mutex::new(State {
                levels,
                metrics: Metrics::default(),
                next_id: 0,
            }),
        }
    }

    /// The first matching schema; `catch-all` when none does.
    fn classify(&self, digest: &RequestDigest<'_>) -> usize {
        self.config
            .flow_schemas
            .iter()
            .position(|s| s.matches(digest))
            .or_else(|| {
                self.config
                    .flow_schemas
                    .iter()
                    .position(|s| s.name == "catch-all")
            })
            .unwrap_or(self.config.flow_schemas.len() - 1)
    }

    fn classification(&self, schema: usize) -> Classification {
        let s = &self.config.flow_schemas[schema];
        let l = &self.config.priority_levels[self.schema_level[schema]];
        Classification {
            flow_schema: s.name.clone(),
            flow_schema_uid: s.uid.clone(),
            priority_level: l.name.clone(),
            priority_level_uid: l.uid.clone(),
        }
    }

    fn reject(
        &self,
        state: &mut State,
        level: usize,
        schema: usize,
        reason: Reason,
        waited: Duration,
    ) -> Rejection {
        *state
            .metrics
            .rejected
            .entry((level, schema, reason.label()))
            .or_default() += 1;
        state
            .metrics
            .waits
            .entry((level, schema, false))
            .or_default()
            .observe(waited.as_secs_f64());
        let second = Instant::now()
            .saturating_duration_since(self.start)
            .as_secs();
        let dropped = &mut state.levels[level].dropped;
        dropped.record(second);
        Rejection {
            classification: self.classification(schema),
            retry_after_secs: dropped.retry_after,
            reason,
        }
    }

    /// Admits a request: at once, after a wait in a queue, or not at all.
    pub async fn admit(
        self: &Arc<Self>,
        digest: &RequestDigest<'_>,
    ) -> Result<(Seat, Classification), Rejection> {
        let schema = self.classify(digest);
        let level = self.schema_level[schema];
        let classification = self.classification(schema);
        let seat = |queue, exempt| Seat {
            apf: self.clone(),
            level,
            schema,
            queue,
            exempt,
        };
        let (queue, on_dispatch, id) = match self.start(digest, schema, level)? {
            Start::Running { exempt } => return Ok((seat(None, exempt), classification)),
            Start::Queued {
                queue,
                on_dispatch,
                id,
            } => (queue, on_dispatch, id),
        };
        let mut pending = Pending {
            apf: self.clone(),
            id,
            level,
            schema,
            queue,
            armed: true,
        };
        let arrived = Instant::now();
        let outcome = tokio::time::timeout(self.config.request_wait_limit, on_dispatch).await;
        pending.armed = false;
        if let Ok(Ok(())) = outcome {
            return Ok((seat(Some(queue), false), classification));
        }
        let mut state = self.state.lock();
        if self.eject(&mut state, &pending) {
            Err(self.reject(
                &mut state,
                level,
                schema,
                Reason::TimeOut,
                arrived.elapsed(),
            ))
        } else {
            // Dispatched as the wait ran out: it runs.
            Ok((seat(Some(queue), false), classification))
        }
    }

    /// The `apiserver_flowcontrol_*` series, in the Prometheus text format.
    pub fn prometheus_text(&self) -> String {
        let state = self.state.lock();
        metrics::prometheus_text(
            &state.metrics,
            &self.config,
            state.levels.iter().map(|l| (l.name.as_str(), l.limit)),
        )
    }
}
