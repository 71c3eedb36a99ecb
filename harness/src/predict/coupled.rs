//! The coupled regime (docs/budget.md §9.7), simulated: a hold under the `crossplane` model
//! where the global bucket, the per-item backoff and the cloud's quotas act on one another.
//!
//! When the bucket binds, crossplane-runtime's middleware answers a reconcile it delays with
//! `RequeueAfter`, which makes controller-runtime forget the item's failures: a failing
//! resource falls back to the start of its backoff ramp after every delay, and comes back at
//! the bucket's pace instead of the ramp's A(t) (§9.1). A call the cloud answers 429 fails
//! its reconcile, which then retries on that same backoff. No closed form covers the
//! feedback (more failing reconciles bind the bucket harder, which resets more ramps), so
//! this module runs the model step by step, independently of the provider's code.
//!
//! # Semantics
//! A deterministic discrete-event model of one hold, in virtual seconds:
//! - every resource is an item of one controller (its kind's); it is ready once at a time
//!   (the priority queue's one entry per key); the controller's `w` workers take ready items
//!   in the order they became ready;
//! - a pass of an item that is not flagged takes a token of the global bucket: the
//!   `x/time/rate` reservation of `limiter::workqueue::Bucket` (rate R, burst B, full at
//!   the start). A pass that would wait is not run: the item is flagged, its per-item
//!   failures are forgotten (`RequeueAfter` resets the backoff) and it is ready again after
//!   the wait; the next pass of a flagged item runs without a token (crossplane-runtime's
//!   `ratelimiter.Reconciler`, `limiter::crossplane::GlobalRateLimited`);
//! - a pass that runs makes its calls at its start and ends L̄ later. A healthy resource
//!   reads (its kind's c_poll reads, each through its account's read quota); a drifting one
//!   reads, then updates through the mutate quota; a resource with a lasting error reads and
//!   fails (AccessDenied), or reads, tries to create through the mutate quota, and fails
//!   (Conflict, Validation); an observe-only one whose cloud resource is absent reads and
//!   requeues after its interval (or fails, with the pre-#1088 requeue). A call the quota
//!   rejects is answered 429 and fails the reconcile at once (its later calls are not
//!   made). Quotas are check-then-commit buckets, full at the start; a rejected call takes
//!   no token;
//! - a reconcile that fails is requeued on the per-item backoff, `limiter::workqueue::
//!   ItemExponential` (base b doubling to d_max, counted since the item was last
//!   forgotten); one that succeeds is forgotten and requeued after its interval P_i with a
//!   uniform jitter in [−j_i, j_i] (a fixed pseudo-random sequence, so the outcome is
//!   reproducible);
//! - the hold starts with every polled resource at a uniform phase of its interval and every
//!   failing one at a uniform phase of the first backoff step; a warm-up of one longest
//!   interval (at most 10 minutes) is simulated before the measured span, which is the
//!   hold's duration.
//!
//! It does not model the API client's limiter, watch events (a hold has none), or the cloud's
//! latency beyond L̄. The simulation stops after [`MAX_EVENTS`] events; the measured span is
//! then shorter than the hold, and what it measured continues as a fluid: rates are
//! per-second figures of the span simulated, and a window longer than that span gets the
//! busiest per-second rate seen, times W ([`Outcome::truncated_at`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use limiter::crossplane::{ErrorRequeue, ObserveOnlyAbsent, RateLimitModel};
use limiter::go::GoDuration;
use limiter::workqueue::{Bucket, ItemExponential, RateLimiter};
use tokio::time::Instant;

use super::params::Params;
use super::quota_wave::Quota;
use crate::scenario::{Calls, GroupFault, Scenario};

/// Simulated events at the most: a few tenths of a second of a debug build, hundredths of a
/// release one. A larger hold is finished by the fluid continuation.
pub const MAX_EVENTS: usize = 100_000;

/// The longest warm-up before the measured span (s).
const MAX_WARM_UP: f64 = 600.0;

/// How a resource of a class behaves on each reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Reads and requeues after its interval.
    Healthy,
    /// Reads, updates (a diff that never converges) and requeues after its interval.
    Drift,
    /// Reads and fails: a lasting error on Observe (AccessDenied), or an observe-only
    /// resource whose cloud resource is absent under the pre-#1088 requeue.
    FailObserve,
    /// Reads, tries to create and fails (Conflict, Validation).
    FailCreate,
}

impl Behaviour {
    /// Whether every reconcile fails (a lasting error).
    #[must_use]
    pub fn fails(self) -> bool {
        matches!(self, Behaviour::FailObserve | Behaviour::FailCreate)
    }

    /// The most calls one reconcile makes, given `reads` read calls.
    #[must_use]
    pub fn calls(self, reads: u32) -> u32 {
        match self {
            Behaviour::Healthy | Behaviour::FailObserve => reads,
            Behaviour::Drift | Behaviour::FailCreate => reads + 1,
        }
    }
}

/// Resources that behave alike: one share of one group at one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Class {
    /// `group/label`: a faulted share's id (`b/Conflict`, `b/observe-only-absent`), or
    /// `group/poll-P` for the healthy resources polled every P seconds.
    pub label: String,
    /// How many.
    pub n: usize,
    /// P_i (s).
    pub interval: f64,
    /// j_i (s).
    pub jitter: f64,
    /// What each reconcile does.
    pub behaviour: Behaviour,
    /// Read calls per reconcile (the kind's c_poll).
    pub reads: u32,
    /// Index of its account in [`Config::quotas`].
    pub account: usize,
    /// Index of its controller (kind).
    pub controller: usize,
}

/// The settings of one simulated hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The global bucket: rate R and burst B.
    pub bucket: (f64, f64),
    /// Per-item backoff: base b and cap d_max (s).
    pub backoff: (f64, f64),
    /// Workers per controller.
    pub workers: usize,
    /// Controllers.
    pub controllers: usize,
    /// L̄ (s).
    pub reconcile: f64,
    /// Per account: the read and mutate quotas.
    pub quotas: Vec<(Option<Quota>, Option<Quota>)>,
    /// The hold's duration (s).
    pub duration: f64,
    /// Windows (s) whose busiest counts are measured.
    pub windows: Vec<f64>,
}

/// What one class did in the measured span.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassOutcome {
    /// The class's label.
    pub label: String,
    /// Its resources.
    pub n: usize,
    /// Reconciles run per resource per second.
    pub reconciles: f64,
    /// Cloud calls per resource per second (429s included).
    pub calls: f64,
    /// Calls answered 429, per resource per second.
    pub rejected: f64,
    /// Passes the bucket delayed (not run), per resource per second.
    pub delayed: f64,
    /// Per window: the most calls of one resource of the class in some window.
    pub busiest_calls: Vec<f64>,
    /// Per window: the most reconciles of one resource of the class in some window.
    pub busiest_reconciles: Vec<f64>,
    /// Mean gap between two successful reconciles of a resource, s (NaN without any).
    pub success_gap: f64,
}

/// What the simulated hold did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Per class, in the order given.
    pub classes: Vec<ClassOutcome>,
    /// Cloud calls per second, every class.
    pub calls: f64,
    /// Reconciles run per second.
    pub reconciles: f64,
    /// Passes the bucket delayed per second.
    pub delayed: f64,
    /// Calls answered 429 per second.
    pub rejected: f64,
    /// Per window: the most calls of all resources in some window.
    pub busiest_calls: Vec<f64>,
    /// The span measured (s): the hold's duration unless the simulation stopped early.
    pub span: f64,
    /// Where the simulation stopped at its event bound (s into the measured span), if it did.
    pub truncated_at: Option<f64>,
}

impl Outcome {
    /// The class labelled `label`.
    #[must_use]
    pub fn class(&self, label: &str) -> Option<&ClassOutcome> {
        self.classes.iter().find(|c| c.label == label)
    }
}

/// A check-then-commit token bucket, full at the start (the mock cloud's quota).
struct Policer {
    quota: Quota,
    tokens: f64,
    at: f64,
}

impl Policer {
    fn new(quota: Quota) -> Policer {
        Policer {
            quota,
            tokens: quota.burst,
            at: 0.0,
        }
    }

    fn admit(&mut self, t: f64) -> bool {
        let t = t.max(self.at);
        self.tokens = (self.tokens + (t - self.at) * self.quota.per_second).min(self.quota.burst);
        self.at = t;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The item becomes ready.
    Ready(u32),
    /// The item's reconcile ends (it failed, or succeeded).
    Done(u32, bool),
}

fn nanos(t: f64) -> u64 {
    (t.max(0.0) * 1e9).round() as u64
}

/// The state of the simulation.
struct Sim<'a> {
    cfg: &'a Config,
    class_of: Vec<u32>,
    classes: &'a [Class],
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    bucket: Bucket,
    items: ItemExponential<u32>,
    start: Instant,
    flagged: Vec<bool>,
    free: Vec<usize>,
    waiting: Vec<VecDeque<u32>>,
    reads: Vec<Option<Policer>>,
    mutates: Vec<Option<Policer>>,
    /// A fixed pseudo-random sequence for phases and jitter.
    rng: crate::rng::SplitMix64,
    from: f64,
    /// Measured: each call (time, item), each reconcile run (time, item).
    calls: Vec<(f64, u32)>,
    runs: Vec<(f64, u32)>,
    rejected: Vec<u64>,
    delayed: Vec<u64>,
    last_success: Vec<f64>,
    success_gaps: Vec<(f64, u64)>,
}

impl Sim<'_> {
    fn push(&mut self, t: f64, e: Event) {
        self.seq += 1;
        self.heap.push(Reverse((nanos(t), self.seq, e)));
    }

    fn instant(&self, t: f64) -> Instant {
        self.start + Duration::from_nanos(nanos(t))
    }

    /// A pass of item `i` handed to a worker at `t`; returns whether the worker is busy
    /// until the reconcile ends.
    fn pass(&mut self, i: u32, t: f64) -> bool {
        let k = self.class_of[i as usize] as usize;
        let measured = t >= self.from;
        if self.flagged[i as usize] {
            self.flagged[i as usize] = false;
        } else {
            let d = self.bucket.when_at(self.instant(t));
            if d > GoDuration::ZERO {
                self.flagged[i as usize] = true;
                self.items.forget(&i);
                if measured {
                    self.delayed[k] += 1;
                }
                self.push(t + d.seconds(), Event::Ready(i));
                return false;
            }
        }
        let class = &self.classes[k];
        let account = class.account;
        let mut ok = true;
        let mut made = 0u32;
        for _ in 0..class.reads.max(1) {
            made += 1;
            if !self.reads[account].as_mut().is_none_or(|q| q.admit(t)) {
                ok = false;
                break;
            }
        }
        if ok && matches!(class.behaviour, Behaviour::Drift | Behaviour::FailCreate) {
            made += 1;
            ok = self.mutates[account].as_mut().is_none_or(|q| q.admit(t));
        }
        let rejected = !ok;
        ok &= !class.behaviour.fails();
        if measured {
            self.runs.push((t, i));
            self.calls
                .extend(std::iter::repeat_n((t, i), made as usize));
            if rejected {
                self.rejected[k] += 1;
            }
        }
        self.push(t + self.cfg.reconcile, Event::Done(i, ok));
        true
    }

    fn done(&mut self, i: u32, ok: bool, t: f64) {
        let k = self.class_of[i as usize] as usize;
        let next = if ok {
            self.items.forget(&i);
            if t >= self.from {
                let last = self.last_success[i as usize];
                if last.is_finite() {
                    let g = &mut self.success_gaps[k];
                    g.0 += t - last;
                    g.1 += 1;
                }
            }
            self.last_success[i as usize] = t;
            let c = &self.classes[k];
            let u = 2.0 * crate::rng::unit(&mut self.rng) - 1.0;
            t + (c.interval + u * c.jitter).max(1e-3)
        } else {
            t + self.items.when(&i).seconds().max(0.0)
        };
        self.push(next, Event::Ready(i));
    }
}

/// Runs the hold of `classes` under `cfg` (see the module's semantics).
#[must_use]
pub fn simulate(cfg: &Config, classes: &[Class]) -> Outcome {
    let (r, b) = cfg.bucket;
    let (base, max) = cfg.backoff;
    let class_of: Vec<u32> = classes
        .iter()
        .enumerate()
        .flat_map(|(k, c)| std::iter::repeat_n(k as u32, c.n))
        .collect();
    let n = class_of.len();
    let longest = classes
        .iter()
        .filter(|c| c.n > 0)
        .map(|c| if c.behaviour.fails() { max } else { c.interval })
        .fold(0.0, f64::max);
    // A population whose first passes alone would use most of the event bound is measured
    // from the start: a warm-up would leave nothing to measure.
    let warm = if 4 * n > MAX_EVENTS {
        0.0
    } else {
        longest.min(MAX_WARM_UP)
    };
    let accounts = cfg.quotas.len().max(1);
    let mut sim = Sim {
        cfg,
        class_of,
        classes,
        heap: BinaryHeap::with_capacity(n + 16),
        seq: 0,
        bucket: Bucket::with_clock(r, b.floor() as i64, limiter::clock::Clock::tokio()),
        items: ItemExponential::new(
            Duration::from_secs_f64(base.max(1e-9)),
            Duration::from_secs_f64(max.max(base).max(1e-9)),
        ),
        start: Instant::now(),
        flagged: vec![false; n],
        free: vec![cfg.workers.max(1); cfg.controllers.max(1)],
        waiting: vec![VecDeque::new(); cfg.controllers.max(1)],
        reads: (0..accounts)
            .map(|a| cfg.quotas.get(a).and_then(|q| q.0).map(Policer::new))
            .collect(),
        mutates: (0..accounts)
            .map(|a| cfg.quotas.get(a).and_then(|q| q.1).map(Policer::new))
            .collect(),
        rng: crate::rng::seeded(0x5EED_C0DE),
        from: warm,
        calls: Vec::new(),
        runs: Vec::new(),
        rejected: vec![0; classes.len()],
        delayed: vec![0; classes.len()],
        last_success: vec![f64::NAN; n],
        success_gaps: vec![(0.0, 0); classes.len()],
    };
    for i in 0..n {
        let c = &classes[sim.class_of[i] as usize];
        let phase = if c.behaviour.fails() {
            base
        } else {
            c.interval
        };
        let at = crate::rng::unit(&mut sim.rng) * phase;
        sim.push(at, Event::Ready(i as u32));
    }
    let end = warm + cfg.duration;
    let mut events = 0usize;
    let mut stopped = None;
    while let Some(Reverse((at, _, e))) = sim.heap.pop() {
        let t = at as f64 / 1e9;
        if t > end {
            break;
        }
        events += 1;
        if events > MAX_EVENTS {
            stopped = Some(t);
            break;
        }
        match e {
            Event::Ready(i) => {
                let c = classes[sim.class_of[i as usize] as usize].controller;
                if sim.free[c] > 0 {
                    sim.free[c] -= 1;
                    if !sim.pass(i, t) {
                        sim.free[c] += 1;
                    }
                } else {
                    sim.waiting[c].push_back(i);
                }
            }
            Event::Done(i, ok) => {
                let c = classes[sim.class_of[i as usize] as usize].controller;
                sim.free[c] += 1;
                sim.done(i, ok, t);
                // Hand the freed worker the items that waited, in order; a delayed pass
                // frees it again at once.
                while sim.free[c] > 0 {
                    let Some(next) = sim.waiting[c].pop_front() else {
                        break;
                    };
                    sim.free[c] -= 1;
                    if !sim.pass(next, t) {
                        sim.free[c] += 1;
                    }
                }
            }
        }
    }
    let span = match stopped {
        Some(t) => (t - warm).max(0.0),
        None => cfg.duration,
    };
    measure(&sim, classes, span, stopped.map(|t| t - warm))
}

/// Per window, the most events of one item in some closed window, per class; and of all.
fn busiest(events: &[(f64, u32)], class_of: &[u32], classes: usize, w: f64) -> (Vec<f64>, f64) {
    let mut per_item: Vec<Vec<f64>> = vec![Vec::new(); class_of.len()];
    for &(t, i) in events {
        per_item[i as usize].push(t);
    }
    let mut out = vec![0.0f64; classes];
    for (i, times) in per_item.iter().enumerate() {
        let most = most_in_window(times, w);
        let k = class_of[i] as usize;
        out[k] = out[k].max(most as f64);
    }
    let all: Vec<f64> = events.iter().map(|e| e.0).collect();
    (out, most_in_window(&all, w) as f64)
}

/// The most of the sorted `times` in some closed window of `w`.
fn most_in_window(times: &[f64], w: f64) -> usize {
    let (mut lo, mut most) = (0, 0);
    for hi in 0..times.len() {
        while times[hi] - times[lo] > w + 1e-9 {
            lo += 1;
        }
        most = most.max(hi + 1 - lo);
    }
    most
}

fn measure(sim: &Sim<'_>, classes: &[Class], span: f64, truncated_at: Option<f64>) -> Outcome {
    let per = |count: u64, n: usize| {
        if span > 0.0 && n > 0 {
            count as f64 / n as f64 / span
        } else {
            0.0
        }
    };
    let mut calls = vec![0u64; classes.len()];
    for &(_, i) in &sim.calls {
        calls[sim.class_of[i as usize] as usize] += 1;
    }
    let mut runs = vec![0u64; classes.len()];
    for &(_, i) in &sim.runs {
        runs[sim.class_of[i as usize] as usize] += 1;
    }
    let mut busiest_calls = vec![Vec::new(); classes.len()];
    let mut busiest_runs = vec![Vec::new(); classes.len()];
    let mut total = Vec::new();
    for &w in &sim.cfg.windows {
        let (c, all) = busiest(&sim.calls, &sim.class_of, classes.len(), w);
        let (r, _) = busiest(&sim.runs, &sim.class_of, classes.len(), w);
        // A window longer than the span simulated: the fluid continuation.
        let stretch = if w > span && span > 0.0 {
            w / span
        } else {
            1.0
        };
        for k in 0..classes.len() {
            busiest_calls[k].push((c[k] * stretch).ceil());
            busiest_runs[k].push((r[k] * stretch).ceil());
        }
        total.push((all * stretch).ceil());
    }
    let sum = |v: &[u64]| v.iter().sum::<u64>();
    let total_rate = |count: u64| if span > 0.0 { count as f64 / span } else { 0.0 };
    Outcome {
        classes: classes
            .iter()
            .enumerate()
            .map(|(k, c)| ClassOutcome {
                label: c.label.clone(),
                n: c.n,
                reconciles: per(runs[k], c.n),
                calls: per(calls[k], c.n),
                rejected: per(sim.rejected[k], c.n),
                delayed: per(sim.delayed[k], c.n),
                busiest_calls: busiest_calls[k].clone(),
                busiest_reconciles: busiest_runs[k].clone(),
                success_gap: if sim.success_gaps[k].1 > 0 {
                    sim.success_gaps[k].0 / sim.success_gaps[k].1 as f64
                } else {
                    f64::NAN
                },
            })
            .collect(),
        calls: total_rate(sum(&calls)),
        reconciles: total_rate(sum(&runs)),
        delayed: total_rate(sum(&sim.delayed)),
        rejected: total_rate(sum(&sim.rejected)),
        busiest_calls: total,
        span,
        truncated_at,
    }
}

/// The label of resource `index` of group `g`: its faulted share's id, or its interval's
/// healthy class.
#[must_use]
pub fn class_label(s: &Scenario, g: usize, index: u32) -> String {
    let group = &s.groups[g];
    if group.observe_only() {
        return format!("{}/observe-only-absent", group.name);
    }
    match group.fault(index) {
        Some(f @ (GroupFault::Error { .. } | GroupFault::Drift { .. })) => {
            format!("{}/{}", group.name, f.label())
        }
        _ => format!(
            "{}/poll-{}",
            group.name,
            super::fmt_num(
                group
                    .poll_interval_of(index, &s.settings, &s.name)
                    .as_secs_f64()
            )
        ),
    }
}

/// The classes of the groups `alive` marks in a hold of `s`.
#[must_use]
pub fn classes(s: &Scenario, p: &Params, alive: &[bool]) -> Vec<Class> {
    let kinds: Vec<_> = s
        .groups
        .iter()
        .map(|g| g.kind.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let accounts: Vec<&str> = s.cloud.accounts.iter().map(|a| a.name.as_str()).collect();
    let mut out: Vec<Class> = Vec::new();
    for (gi, g) in s.groups.iter().enumerate() {
        if !alive.get(gi).copied().unwrap_or(false) {
            continue;
        }
        let reads = s
            .calls
            .get(&g.kind)
            .copied()
            .unwrap_or(Calls::SAMPLE)
            .poll();
        let controller = kinds.iter().position(|k| *k == g.kind).unwrap_or(0);
        let account = accounts.iter().position(|a| *a == g.account).unwrap_or(0);
        // A group with neither faults nor annotations is one class: no need to visit each
        // resource (a hundred thousand of them).
        let uniform = !g.observe_only() && g.faults.is_empty() && g.annotations.is_empty();
        if uniform && g.count > 0 {
            let interval = s.settings.poll_interval.as_secs_f64();
            let label = class_label(s, gi, 0);
            match out.iter_mut().find(|c| c.label == label) {
                Some(c) => c.n += g.count as usize,
                None => out.push(Class {
                    label,
                    n: g.count as usize,
                    interval,
                    jitter: p.jitter_of(interval),
                    behaviour: Behaviour::Healthy,
                    reads,
                    account,
                    controller,
                }),
            }
            continue;
        }
        for i in 0..g.count {
            let label = class_label(s, gi, i);
            if let Some(c) = out.iter_mut().find(|c| c.label == label) {
                c.n += 1;
                continue;
            }
            let interval = g.poll_interval_of(i, &s.settings, &s.name).as_secs_f64();
            let behaviour = if g.observe_only() {
                if s.settings.observe_only_absent == ObserveOnlyAbsent::Backoff {
                    Behaviour::FailObserve
                } else {
                    Behaviour::Healthy
                }
            } else {
                match g.fault(i) {
                    Some(GroupFault::Error { error, .. }) => match error {
                        mock_cloud::LastingError::AccessDenied => Behaviour::FailObserve,
                        mock_cloud::LastingError::Conflict
                        | mock_cloud::LastingError::Validation => Behaviour::FailCreate,
                    },
                    Some(GroupFault::Drift { .. }) => Behaviour::Drift,
                    _ => Behaviour::Healthy,
                }
            };
            out.push(Class {
                label,
                n: 1,
                interval,
                jitter: p.jitter_of(interval),
                behaviour,
                reads,
                account,
                controller,
            });
        }
    }
    out
}

/// The simulated hold of `t` seconds of the groups `alive` marks, with the busiest counts of
/// `windows`; `None` where the model does not apply (not the `crossplane` model, or errors
/// requeued at once).
#[must_use]
pub fn hold(s: &Scenario, p: &Params, alive: &[bool], t: f64, windows: &[f64]) -> Option<Outcome> {
    if p.model != RateLimitModel::Crossplane || s.settings.error_requeue == ErrorRequeue::Immediate
    {
        return None;
    }
    let classes = classes(s, p, alive);
    let quotas = s
        .cloud
        .accounts
        .iter()
        .map(|a| {
            let q = |x: Option<crate::scenario::Quota>| {
                x.map(|q| Quota {
                    burst: q.burst,
                    per_second: q.per_second,
                })
            };
            (q(a.quotas.read), q(a.quotas.mutate))
        })
        .collect();
    let controllers = classes.iter().map(|c| c.controller + 1).max().unwrap_or(1);
    let cfg = Config {
        bucket: (p.r, p.b),
        backoff: p.backoff,
        workers: p.w.max(1.0) as usize,
        controllers,
        reconcile: p.l,
        quotas,
        duration: t,
        windows: windows.to_vec(),
    };
    Some(simulate(&cfg, &classes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::error_paths::backoff_attempts;

    fn cfg(r: f64, t: f64, windows: &[f64]) -> Config {
        Config {
            bucket: (r, 10.0 * r),
            backoff: (1.0, 60.0),
            workers: r as usize,
            controllers: 1,
            reconcile: 0.05,
            quotas: vec![(None, None)],
            duration: t,
            windows: windows.to_vec(),
        }
    }

    fn class(label: &str, n: usize, interval: f64, behaviour: Behaviour) -> Class {
        Class {
            label: label.into(),
            n,
            interval,
            jitter: interval / 10.0,
            behaviour,
            reads: 1,
            account: 0,
            controller: 0,
        }
    }

    #[test]
    fn a_failing_share_under_a_bucket_with_room_follows_the_backoff_to_its_cap() {
        let out = simulate(
            &cfg(100.0, 3600.0, &[600.0]),
            &[
                class("b/poll-60", 190, 60.0, Behaviour::Healthy),
                class("b/AccessDenied", 10, 60.0, Behaviour::FailObserve),
            ],
        );
        let f = out.class("b/AccessDenied").expect("class");
        // At the cap: one reconcile every d_max + L̄.
        assert!((f.reconciles * 60.05 - 1.0).abs() < 0.01, "{f:?}");
        assert_eq!(out.delayed, 0.0);
        // After the warm-up the ramp is over: no window of 10 minutes holds more than A(600).
        assert!(
            f.busiest_calls[0] <= backoff_attempts(600.0, 1.0, 60.0),
            "{f:?}"
        );
        let h = out.class("b/poll-60").expect("class");
        assert!((h.reconciles * 60.05 - 1.0).abs() < 0.02, "{h:?}");
    }

    /// docs/budget.md §9.1's measurement: 50 observe-only buckets failing on the pre-#1088
    /// requeue beside 50 healthy ones, R = 10, P = 10 min: the provider made 714 calls per
    /// failing resource-hour in an hour's hold (the ramp at its cap: 60); with 5 failing, 60.
    #[test]
    fn the_bucket_resets_the_backoff_of_a_large_failing_share_as_measured_on_the_provider() {
        let large = simulate(
            &cfg(10.0, 3600.0, &[600.0]),
            &[
                class("h/poll-600", 50, 600.0, Behaviour::Healthy),
                class("f/observe-only-absent", 50, 600.0, Behaviour::FailObserve),
            ],
        );
        let f = large.class("f/observe-only-absent").expect("class");
        let per_hour = f.calls * 3600.0;
        assert!(
            (per_hour - 714.0).abs() < 0.05 * 714.0,
            "{per_hour} calls per failing resource-hour: {f:?}"
        );
        assert!(large.delayed > 0.0);
        let small = simulate(
            &cfg(10.0, 3600.0, &[600.0]),
            &[
                class("h/poll-600", 95, 600.0, Behaviour::Healthy),
                class("f/observe-only-absent", 5, 600.0, Behaviour::FailObserve),
            ],
        );
        let f = small.class("f/observe-only-absent").expect("class");
        assert!((f.calls * 3600.0 - 60.0).abs() < 2.0, "{f:?}");
    }

    #[test]
    fn a_read_quota_below_the_polls_fails_some_polls_which_retry_on_the_backoff() {
        let mut c = cfg(100.0, 1800.0, &[60.0]);
        c.quotas = vec![(
            Some(Quota {
                burst: 10.0,
                per_second: 4.0,
            }),
            None,
        )];
        let out = simulate(&c, &[class("b/poll-60", 300, 60.0, Behaviour::Healthy)]);
        let h = &out.classes[0];
        // 5 polls a second asked, 4 admitted: the rest are 429s, retried within seconds.
        assert!(out.rejected > 0.5, "{out:?}");
        assert!(h.reconciles * 300.0 > 5.0, "{h:?}");
        // Every admitted read is at most the quota's refill.
        assert!((h.calls - h.rejected) * 300.0 <= 4.0 + 0.1, "{h:?}");
    }

    #[test]
    fn a_hold_of_a_hundred_thousand_resources_stops_at_its_event_bound() {
        let out = simulate(
            &cfg(10.0, 86_400.0, &[10.0, 3600.0]),
            &[class("b/poll-1", 100_000, 1.0, Behaviour::Healthy)],
        );
        assert!(out.truncated_at.is_some());
        assert!(out.calls > 0.0 && out.calls.is_finite());
        assert!(out.busiest_calls.iter().all(|v| v.is_finite()));
    }
}
