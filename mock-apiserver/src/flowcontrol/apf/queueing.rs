//! The queue set of a priority level: running, refusing or queueing a request, taking
//! it out of its queue, and dispatching waiting requests as seats free.

use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{Apf, Pending, Reason, Rejection, Start, State, Waiter};
use crate::flowcontrol::config::{LimitResponse, RequestDigest, deal, hash_flow};

impl Apf {
    /// The synchronous part of [`Apf::admit`]: run at once, refuse, or queue.
    pub(super) fn start(
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
    pub(super) fn eject(&self, state: &mut State, pending: &Pending) -> bool {
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
    pub(super) fn finish(
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
}
