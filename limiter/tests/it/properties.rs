//! Property tests of the limiter math and the queue invariants.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use limiter::go::GoDuration;
use limiter::rate::{Limit, Limiter};
use limiter::workqueue::{
    Bucket, ItemExponential, MaxOf, PriorityQueue, Queue, RateLimiter, SharedRateLimiter,
};
use proptest::prelude::*;
use tokio::time::Instant;

proptest! {
    /// Lemma 1 of the budget: reservations granted (time-to-act) in any closed window of W
    /// seconds never exceed burst + rate·W.
    #[test]
    fn a_bucket_never_grants_more_than_burst_plus_rate_times_window(
        rate in 1u32..50,
        burst in 1i64..50,
        gaps_ms in proptest::collection::vec(0u64..400, 1..300),
        window_ms in 1u64..5_000,
    ) {
        let lim = Limiter::new(Limit(f64::from(rate)), burst);
        let t0 = Instant::now();
        let mut t = t0;
        let mut acts = Vec::new();
        for gap in gaps_ms {
            t += Duration::from_millis(gap);
            let r = lim.reserve_at(t);
            prop_assert!(r.ok());
            acts.push(r.time_to_act());
        }
        acts.sort();
        let w = Duration::from_millis(window_ms);
        let bound = (burst as f64 + f64::from(rate) * w.as_secs_f64()).floor() as usize;
        for (i, start) in acts.iter().enumerate() {
            let in_window = acts[i..].iter().take_while(|a| **a <= *start + w).count();
            prop_assert!(in_window <= bound, "{in_window} > {bound}");
        }
    }

    #[test]
    fn allow_never_goes_into_debt(rate in 0.1f64..100.0, burst in 0i64..20, n in 0usize..200) {
        let lim = Limiter::new(Limit(rate), burst);
        let t = Instant::now();
        for _ in 0..n {
            lim.allow_n_at(t, 1);
            prop_assert!(lim.tokens_at(t) >= 0.0);
        }
    }

    #[test]
    fn exponential_delays_are_monotone_and_capped(base_ms in 1u64..1_000, max_s in 1u64..2_000, n in 1usize..100) {
        let r = ItemExponential::new(Duration::from_millis(base_ms), Duration::from_secs(max_s));
        let max = GoDuration::from_std(Duration::from_secs(max_s));
        let mut last = GoDuration::ZERO;
        for _ in 0..n {
            let d = r.when(&"x");
            prop_assert!(d >= last);
            prop_assert!(d <= max);
            last = d;
        }
        prop_assert_eq!(r.num_requeues(&"x"), n);
    }

    #[test]
    fn forget_resets_the_exponential_backoff(n in 1usize..40) {
        let r = ItemExponential::new(Duration::from_millis(5), Duration::from_secs(1000));
        for _ in 0..n {
            r.when(&"x");
        }
        r.forget(&"x");
        prop_assert_eq!(r.num_requeues(&"x"), 0);
        prop_assert_eq!(r.when(&"x"), GoDuration::from_std(Duration::from_millis(5)));
    }

    #[test]
    fn max_of_is_at_least_each_part(items in proptest::collection::vec(0u8..5, 1..60)) {
        let e1 = Arc::new(ItemExponential::new(Duration::from_millis(5), Duration::from_secs(10)));
        let e2 = Arc::new(ItemExponential::new(Duration::from_millis(7), Duration::from_secs(3)));
        let shadow1 = ItemExponential::new(Duration::from_millis(5), Duration::from_secs(10));
        let shadow2 = ItemExponential::new(Duration::from_millis(7), Duration::from_secs(3));
        let parts: Vec<SharedRateLimiter<u8>> = vec![e1, e2, Arc::new(Bucket::new(1e9, 1_000_000))];
        let m = MaxOf::new(parts);
        for i in items {
            let d = m.when(&i);
            prop_assert!(d >= shadow1.when(&i));
            prop_assert!(d >= shadow2.when(&i));
            prop_assert!(d >= GoDuration::ZERO);
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Get,
    Done(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            (0u8..6).prop_map(Op::Add),
            Just(Op::Get),
            (0usize..8).prop_map(Op::Done),
        ],
        1..200,
    )
}

proptest! {
    /// The FIFO queue never hands out an item that is being processed, never loses one, and
    /// de-duplicates.
    #[test]
    fn the_fifo_queue_hands_out_each_item_to_one_worker_and_loses_none(ops in ops()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let q = Queue::new();
            let mut ledger = Ledger::default();
            for op in ops {
                let got = match op {
                    Op::Get => q.try_get(),
                    _ => None,
                };
                ledger.step(&q, op, got)?;
                let queued = q.len();
                let waiting: HashSet<u8> = ledger.owed.difference(&ledger.processing.iter().copied().collect()).copied().collect();
                prop_assert_eq!(queued, waiting.len(), "queue length is the set of owed items not in processing");
            }
            // Drain: every owed item comes out exactly once more.
            for x in ledger.processing.drain(..) {
                q.done(&x);
            }
            let mut seen = HashMap::new();
            while let Some(x) = q.try_get() {
                *seen.entry(x).or_insert(0) += 1;
                q.done(&x);
            }
            prop_assert!(seen.values().all(|n| *n == 1));
            prop_assert_eq!(seen.keys().copied().collect::<HashSet<_>>(), ledger.owed);
            Ok(())
        })?;
    }

    /// The priority queue never hands out a key twice concurrently and de-duplicates.
    #[test]
    fn the_priority_queue_never_hands_out_a_locked_key(ops in ops()) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        rt.block_on(async {
            let q: PriorityQueue<u8> = PriorityQueue::new(Arc::new(ItemExponential::new(Duration::from_millis(5), Duration::from_secs(1))));
            let mut ledger = Ledger::default();
            for op in ops {
                let got = match op {
                    Op::Get if q.is_empty() => continue,
                    Op::Get => tokio::time::timeout(Duration::from_millis(1), q.get()).await.ok().flatten(),
                    _ => None,
                };
                ledger.step(&q, op, got)?;
                prop_assert_eq!(q.len(), ledger.owed.len());
            }
            Ok(())
        })?;
    }
}

/// A work queue under test, as the ledger drives it.
trait WorkQueue {
    fn add(&self, x: u8);
    fn done(&self, x: &u8);
}

impl WorkQueue for Queue<u8> {
    fn add(&self, x: u8) {
        Queue::add(self, x);
    }

    fn done(&self, x: &u8) {
        Queue::done(self, x);
    }
}

impl WorkQueue for PriorityQueue<u8> {
    fn add(&self, x: u8) {
        PriorityQueue::add(self, x);
    }

    fn done(&self, x: &u8) {
        PriorityQueue::done(self, x);
    }
}

/// What a queue owes its workers, as a model of it: the items handed out and not done yet,
/// and the items added and not handed out since their last add.
#[derive(Default)]
struct Ledger {
    processing: Vec<u8>,
    owed: HashSet<u8>,
}

impl Ledger {
    /// Applies `op` to `q` and to the model; `got` is what a `Get` was handed.
    fn step(&mut self, q: &impl WorkQueue, op: Op, got: Option<u8>) -> Result<(), TestCaseError> {
        match op {
            Op::Add(x) => {
                q.add(x);
                self.owed.insert(x);
            }
            Op::Get => {
                if let Some(x) = got {
                    prop_assert!(!self.processing.contains(&x), "{x} handed out twice");
                    self.owed.remove(&x);
                    self.processing.push(x);
                }
            }
            Op::Done(i) => {
                if !self.processing.is_empty() {
                    let x = self.processing.remove(i % self.processing.len());
                    q.done(&x);
                }
            }
        }
        Ok(())
    }
}
