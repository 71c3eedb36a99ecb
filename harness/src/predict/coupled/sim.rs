//! The discrete-event run of one hold (the module's semantics).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use limiter::go::GoDuration;
use limiter::workqueue::{Bucket, ItemExponential, RateLimiter};
use tokio::time::Instant;

use super::{Behaviour, Class, Config, MAX_EVENTS, MAX_WARM_UP};
use crate::predict::quota_wave::Policer;

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
pub(super) struct Sim<'a> {
    pub(super) cfg: &'a Config,
    pub(super) class_of: Vec<u32>,
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
    pub(super) calls: Vec<(f64, u32)>,
    pub(super) runs: Vec<(f64, u32)>,
    pub(super) rejected: Vec<u64>,
    pub(super) delayed: Vec<u64>,
    last_success: Vec<f64>,
    pub(super) success_gaps: Vec<(f64, u64)>,
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

/// Runs the hold of `classes` under `cfg` (see the module's semantics): the simulation as
/// it ended, the span it measured (s) and where it stopped at its event bound, if it did.
pub(super) fn run<'a>(cfg: &'a Config, classes: &'a [Class]) -> (Sim<'a>, f64, Option<f64>) {
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
    (sim, span, stopped.map(|t| t - warm))
}
