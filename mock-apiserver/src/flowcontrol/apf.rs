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

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::config::{
    LevelKind, LimitResponse, PriorityAndFairness, RequestDigest, deal, hash_flow,
};

/// `requestDurationSecondsBuckets` of `flowcontrol/metrics/metrics.go`.
const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

/// `maxRetryAfter` of `dropped_requests_tracker.go`.
const MAX_RETRY_AFTER: u64 = 32;

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

/// `droppedRequestsStats`: dropped requests per second and the `Retry-After` they call for.
struct Dropped {
    history: Vec<(u64, u64)>,
    current_second: u64,
    current_count: u64,
    retry_after: u64,
    last_increase: u64,
}

impl Dropped {
    fn new() -> Self {
        Self {
            history: Vec::new(),
            current_second: 0,
            current_count: 0,
            retry_after: 1,
            last_increase: 0,
        }
    }

    fn record(&mut self, second: u64) {
        if self.current_second == second {
            self.current_count += 1;
            return;
        }
        self.history.push((self.current_second, self.current_count));
        let keep = (2 * self.retry_after).min(MAX_RETRY_AFTER);
        self.history.retain(|(at, _)| second - at <= keep);
        self.current_second = second;
        self.current_count = 1;
        let retry_after = self.retry_after;
        let dropped: u64 = self
            .history
            .iter()
            .filter(|(at, _)| second - at <= retry_after && *at < second)
            .map(|(_, n)| n)
            .sum();
        if second - self.last_increase >= retry_after && dropped >= 3 * retry_after {
            self.retry_after = (retry_after * 2).min(MAX_RETRY_AFTER);
            self.last_increase = second;
        } else if dropped < retry_after && retry_after > 1 {
            self.retry_after -= 1;
        }
    }
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

#[derive(Default)]
struct Histogram {
    buckets: [u64; WAIT_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(i) = WAIT_BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }
}

#[derive(Default)]
struct Metrics {
    /// (level, schema) → dispatched.
    dispatched: BTreeMap<(usize, usize), u64>,
    /// (level, schema, reason) → rejected.
    rejected: BTreeMap<(usize, usize, &'static str), u64>,
    /// (level, schema) → waiting now.
    in_queue: BTreeMap<(usize, usize), i64>,
    /// (level, schema) → executing now.
    executing: BTreeMap<(usize, usize), i64>,
    /// (level, schema, executed) → wait.
    waits: BTreeMap<(usize, usize, bool), Histogram>,
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

    /// The synchronous part of [`Apf::admit`]: run at once, refuse, or queue.
    fn start(
        &self,
        digest: &RequestDigest<'_>,
        schema: usize,
        level: usize,
    ) -> Result<Start, Rejection> {
        let mut state = self.state.lock();
        let Some(limit) = state.levels[level].limit else {
            *state.metrics.dispatched.entry((level, schema)).or_default() += 1;
            *state.metrics.executing.entry((level, schema)).or_default() += 1;
            state.levels[level].executing += 1;
            return Ok(Start::Running { exempt: true });
        };
        let LimitResponse::Queue {
            hand_size,
            queue_length_limit,
            ..
        } = state.levels[level].response
        else {
            if state.levels[level].executing >= limit {
                return Err(self.reject(
                    &mut state,
                    level,
                    schema,
                    Reason::ConcurrencyLimit,
                    Duration::ZERO,
                ));
            }
            state.levels[level].executing += 1;
            let m = &mut state.metrics;
            *m.dispatched.entry((level, schema)).or_default() += 1;
            *m.executing.entry((level, schema)).or_default() += 1;
            m.waits
                .entry((level, schema, true))
                .or_default()
                .observe(0.0);
            return Ok(Start::Running { exempt: false });
        };
        let flow = &self.config.flow_schemas[schema];
        let hash = hash_flow(&flow.name, flow.distinguisher_of(digest));
        let l = &mut state.levels[level];
        let hand = deal(hash, l.queues.len(), hand_size as usize);
        let offset = l.enqueues % hand.len();
        l.enqueues += 1;
        let queue = (0..hand.len())
            .map(|i| hand[(offset + i) % hand.len()])
            .min_by_key(|q| l.queues[*q].waiting.len())
            .expect("a hand holds at least one queue");
        if l.executing >= limit && l.queues[queue].waiting.len() >= queue_length_limit as usize {
            return Err(self.reject(&mut state, level, schema, Reason::QueueFull, Duration::ZERO));
        }
        let (dispatched, on_dispatch) = oneshot::channel();
        let id = state.next_id;
        state.next_id += 1;
        let l = &mut state.levels[level];
        let virtual_now = l.virtual_now;
        let q = &mut l.queues[queue];
        if q.waiting.is_empty() && q.executing == 0 {
            q.next_dispatch = virtual_now;
        }
        q.waiting.push_back(Waiter {
            id,
            schema,
            arrived: Instant::now(),
            dispatched,
        });
        l.waiting += 1;
        *state.metrics.in_queue.entry((level, schema)).or_default() += 1;
        self.dispatch(&mut state, level);
        Ok(Start::Queued {
            queue,
            on_dispatch,
            id,
        })
    }

    /// Takes a pending request out of its queue; false when it was dispatched already.
    fn eject(&self, state: &mut State, pending: &Pending) -> bool {
        let l = &mut state.levels[pending.level];
        let q = &mut l.queues[pending.queue];
        let Some(at) = q.waiting.iter().position(|w| w.id == pending.id) else {
            return false;
        };
        q.waiting.remove(at);
        l.waiting -= 1;
        *state
            .metrics
            .in_queue
            .entry((pending.level, pending.schema))
            .or_default() -= 1;
        true
    }

    /// A request finished: its seat frees and waiting requests take the free seats.
    fn finish(
        &self,
        state: &mut State,
        level: usize,
        schema: usize,
        queue: Option<usize>,
        exempt: bool,
    ) {
        *state.metrics.executing.entry((level, schema)).or_default() -= 1;
        let l = &mut state.levels[level];
        l.executing -= 1;
        if let Some(q) = queue {
            l.queues[q].executing -= 1;
        }
        if !exempt {
            self.dispatch(state, level);
        }
    }

    /// `dispatchAsMuchAsPossibleLocked`: while seats are free, the head of the queue with
    /// the earliest virtual finish time (round robin from the last one on ties) runs.
    fn dispatch(&self, state: &mut State, level: usize) {
        let State {
            levels, metrics, ..
        } = state;
        let l = &mut levels[level];
        let limit = l.limit.unwrap_or(usize::MAX);
        while l.waiting > 0 && l.executing < limit {
            let n = l.queues.len();
            let mut best: Option<(u64, usize)> = None;
            for k in 1..=n {
                let i = (l.robin + k) % n;
                let q = &l.queues[i];
                if !q.waiting.is_empty() {
                    let finish = q.next_dispatch + 1;
                    if best.is_none_or(|(f, _)| finish < f) {
                        best = Some((finish, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            l.robin = i;
            let q = &mut l.queues[i];
            let waiter = q.waiting.pop_front().expect("the queue is not empty");
            l.virtual_now = l.virtual_now.max(q.next_dispatch);
            q.next_dispatch += 1;
            q.executing += 1;
            l.waiting -= 1;
            l.executing += 1;
            let key = (level, waiter.schema);
            *metrics.in_queue.entry(key).or_default() -= 1;
            *metrics.dispatched.entry(key).or_default() += 1;
            *metrics.executing.entry(key).or_default() += 1;
            metrics
                .waits
                .entry((level, waiter.schema, true))
                .or_default()
                .observe(waiter.arrived.elapsed().as_secs_f64());
            // A receiver gone means its request is being dropped; `Pending::drop` then
            // finds it out of the queue and gives the seat back.
            let _ = waiter.dispatched.send(());
        }
    }

    /// The `apiserver_flowcontrol_*` series, in the Prometheus text format.
    pub fn prometheus_text(&self) -> String {
        use std::fmt::Write as _;
        let state = self.state.lock();
        let m = &state.metrics;
        let names = |level: usize, schema: usize| {
            (
                self.config.flow_schemas[schema].name.as_str(),
                self.config.priority_levels[level].name.as_str(),
            )
        };
        let mut out = String::new();
        out.push_str("# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_dispatched_requests_total counter\n");
        for (&(l, s), n) in &m.dispatched {
            let (fs, pl) = names(l, s);
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_rejected_requests_total counter\n");
        for (&(l, s, reason), n) in &m.rejected {
            let (fs, pl) = names(l, s);
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\",reason=\"{reason}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_flowcontrol_current_inqueue_requests [BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_current_inqueue_requests gauge\n");
        for (&(l, s), n) in &m.in_queue {
            let (fs, pl) = names(l, s);
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_current_inqueue_requests{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_flowcontrol_current_executing_requests [BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_current_executing_requests gauge\n");
        for (&(l, s), n) in &m.executing {
            let (fs, pl) = names(l, s);
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_current_executing_requests{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
            );
        }
        out.push_str("# HELP apiserver_flowcontrol_request_wait_duration_seconds [BETA] Length of time a request spent waiting in its queue\n# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram\n");
        for (&(l, s, executed), h) in &m.waits {
            let (fs, pl) = names(l, s);
            let labels =
                format!("execute=\"{executed}\",flow_schema=\"{fs}\",priority_level=\"{pl}\"");
            let mut cumulative = 0;
            for (bound, n) in WAIT_BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "apiserver_flowcontrol_request_wait_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_request_wait_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\napiserver_flowcontrol_request_wait_duration_seconds_sum{{{labels}}} {}\napiserver_flowcontrol_request_wait_duration_seconds_count{{{labels}}} {}",
                h.count, h.sum, h.count
            );
        }
        out.push_str("# HELP apiserver_flowcontrol_nominal_limit_seats [BETA] Nominal number of execution seats configured for each priority level\n# TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n");
        for level in &state.levels {
            let _ = writeln!(
                out,
                "apiserver_flowcontrol_nominal_limit_seats{{priority_level=\"{}\"}} {}",
                level.name,
                level.limit.unwrap_or(0)
            );
        }
        out
    }
}
