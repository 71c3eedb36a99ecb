//! A clock whose time moves only when told, waking every sleeper at its exact instant.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How long a virtual clock starts after the process's monotonic clock: far enough that
/// explicit instants years in the past (x/time/rate's `*At` calls) are still representable.
const ORIGIN_OFFSET: Duration = Duration::from_secs(1_000 * 365 * 86_400);

/// How much tokio time one [`settle`] sleeps; under paused time it passes only once every task
/// is blocked.
const SETTLE_PROBE: Duration = Duration::from_millis(1);

/// A timer: its deadline, then the order it was registered in (ties wake first-come).
type TimerKey = (Instant, u64);

struct State {
    now: Instant,
    timers: BTreeMap<TimerKey, Waker>,
    next_seq: u64,
}

struct Inner {
    state: Mutex<State>,
    /// Wakes the [`VirtualClock::auto_advance`] task when a timer is registered.
    timer_added: Notify,
}

/// A clock for the conformance replay and for tests: nanosecond instants, time that moves only
/// when it is advanced, and sleepers woken at their exact instant, first-come for equal
/// instants. Clones share the clock.
///
/// Give it to limiters and queues as a [`Clock`](super::Clock) (`Clock::from(&virtual_clock)`),
/// then drive it with [`advance`](Self::advance), [`run_until`](Self::run_until) or
/// [`auto_advance`](Self::auto_advance). See the [module documentation](super) for what
/// driving needs.
///
/// ```
/// use std::time::Duration;
/// use limiter::clock::{Clock, VirtualClock};
/// use limiter::rate::{Limit, Limiter};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = VirtualClock::new();
/// let lim = Limiter::with_clock(Limit(3.0), 1, Clock::from(&clock));
/// let start = clock.now();
/// let waits = async {
///     lim.wait().await.unwrap();
///     lim.wait().await.unwrap();
/// };
/// clock.run_until(waits, None).await.unwrap();
/// // Exactly a third of a second (truncated to the nanosecond, as Go does), not 334 ms.
/// assert_eq!(clock.now() - start, Duration::from_nanos(333_333_333));
/// # }
/// ```
#[derive(Clone)]
pub struct VirtualClock {
    inner: Arc<Inner>,
}

impl fmt::Debug for VirtualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.inner.state.lock();
        f.debug_struct("VirtualClock")
            .field("now", &s.now)
            .field("timers", &s.timers.len())
            .finish()
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        Self::new()
    }
}

/// Why [`VirtualClock::run_until`] gave up on its future.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stalled {
    /// The time limit passed first; the clock stands at the limit.
    #[error("the time limit of {0:?} passed first")]
    Limit(Duration),
    /// Every task is blocked and no timer is pending: nothing can ever wake the future.
    #[error("every task is blocked and no timer is pending")]
    Deadlock,
}

impl VirtualClock {
    /// A virtual clock standing still, far from the monotonic clock's origin.
    #[must_use]
    pub fn new() -> Self {
        let now = Instant::now();
        Self::starting_at(now.checked_add(ORIGIN_OFFSET).unwrap_or(now))
    }

    /// A virtual clock standing still at `start`.
    #[must_use]
    pub fn starting_at(start: Instant) -> Self {
        VirtualClock {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    now: start,
                    timers: BTreeMap::new(),
                    next_seq: 0,
                }),
                timer_added: Notify::new(),
            }),
        }
    }

    /// The current virtual instant.
    #[must_use]
    pub fn now(&self) -> Instant {
        self.inner.state.lock().now
    }

    /// A future that completes once the clock reaches `deadline`.
    pub fn sleep_until(&self, deadline: Instant) -> VirtualSleep {
        VirtualSleep {
            clock: self.clone(),
            deadline,
            seq: None,
        }
    }

    /// A future that completes once `d` of virtual time has passed.
    pub fn sleep(&self, d: Duration) -> VirtualSleep {
        self.sleep_until(crate::instant::add_std(self.now(), d))
    }

    /// The earliest pending timer, if any.
    #[must_use]
    pub fn next_timer(&self) -> Option<Instant> {
        self.inner.state.lock().timers.keys().next().map(|k| k.0)
    }

    /// How many sleepers are waiting.
    #[must_use]
    pub fn pending_timers(&self) -> usize {
        self.inner.state.lock().timers.len()
    }

    /// Moves the clock to `t` (never back) and wakes every sleeper due by then, earliest first,
    /// first-come among equal instants. It does not wait for the woken tasks to run; the
    /// driving methods below do.
    pub fn set(&self, t: Instant) {
        let woken: Vec<Waker> = {
            let mut s = self.inner.state.lock();
            if t > s.now {
                s.now = t;
            }
            let now = s.now;
            let mut woken = Vec::new();
            while let Some(entry) = s.timers.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                woken.push(entry.remove());
            }
            woken
        };
        for w in woken {
            w.wake();
        }
    }

    /// Sleeps `d` of virtual time the way a goroutine sleeps in a synctest bubble: every timer
    /// due within the window fires at its own instant, with every task run until all are
    /// blocked before time moves on; then the clock stands at the end of the window and the
    /// tasks are settled once more.
    pub async fn advance(&self, d: Duration) {
        let target = crate::instant::add_std(self.now(), d);
        loop {
            settle().await;
            match self.next_timer() {
                Some(t) if t <= target => self.set(t),
                _ => break,
            }
        }
        self.set(target);
        settle().await;
    }

    /// Runs `fut` to completion, moving time to the next timer whenever every task (`fut`
    /// included) is blocked, as a blocking call on a synctest bubble's main goroutine does.
    ///
    /// # Errors
    /// [`Stalled::Limit`] if `limit` of virtual time passes first (the clock then stands at the
    /// limit); [`Stalled::Deadlock`] if every task is blocked with no timer pending.
    pub async fn run_until<F: Future>(
        &self,
        fut: F,
        limit: Option<Duration>,
    ) -> Result<F::Output, Stalled> {
        let deadline = limit.map(|l| crate::instant::add_std(self.now(), l));
        let mut fut = pin!(fut);
        loop {
            tokio::select! {
                biased;
                out = &mut fut => return Ok(out),
                () = settle() => {}
            }
            match (self.next_timer(), deadline) {
                (Some(t), Some(d)) if t > d => {
                    self.set(d);
                    return Err(Stalled::Limit(limit.unwrap_or_default()));
                }
                (None, Some(d)) => {
                    self.set(d);
                    return Err(Stalled::Limit(limit.unwrap_or_default()));
                }
                (Some(t), _) => self.set(t),
                (None, None) => return Err(Stalled::Deadlock),
            }
        }
    }

    /// Spawns a task that, whenever every task is blocked, moves time to the next timer: tokio's
    /// auto-advance, exact to the nanosecond. The task stops when the returned handle is
    /// dropped.
    ///
    /// # Panics
    /// Outside a tokio runtime.
    #[must_use = "auto-advance stops when the handle is dropped"]
    pub fn auto_advance(&self) -> AutoAdvance {
        let clock = self.clone();
        AutoAdvance(tokio::spawn(async move {
            loop {
                settle().await;
                match clock.next_timer() {
                    Some(t) => clock.set(t),
                    None => clock.inner.timer_added.notified().await,
                }
            }
        }))
    }
}

/// Lets every task of the runtime run until all are blocked, without moving any virtual clock:
/// Go's `synctest.Wait`. It sleeps a millisecond of tokio time, which under tokio's paused
/// clock passes only once the runtime has nothing left to run (see the
/// [module documentation](super)).
pub async fn settle() {
    tokio::time::sleep(SETTLE_PROBE).await;
}

/// The task of [`VirtualClock::auto_advance`]; dropping it stops the task.
#[derive(Debug)]
pub struct AutoAdvance(JoinHandle<()>);

impl Drop for AutoAdvance {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The future of [`VirtualClock::sleep_until`].
///
/// # Cancellation
/// Dropping it removes its timer.
#[must_use = "futures do nothing unless polled"]
pub struct VirtualSleep {
    clock: VirtualClock,
    deadline: Instant,
    /// Registration order of its timer, once registered.
    seq: Option<u64>,
}

impl fmt::Debug for VirtualSleep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VirtualSleep")
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Future for VirtualSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let mut s = this.clock.inner.state.lock();
        if s.now >= this.deadline {
            if let Some(seq) = this.seq.take() {
                s.timers.remove(&(this.deadline, seq));
            }
            return Poll::Ready(());
        }
        match this.seq {
            Some(seq) => {
                // Only `set` removes a timer, and only once the clock reached its deadline.
                let waker = s
                    .timers
                    .entry((this.deadline, seq))
                    .or_insert_with(|| cx.waker().clone());
                if !waker.will_wake(cx.waker()) {
                    waker.clone_from(cx.waker());
                }
            }
            None => {
                let seq = s.next_seq;
                s.next_seq += 1;
                s.timers.insert((this.deadline, seq), cx.waker().clone());
                this.seq = Some(seq);
                drop(s);
                this.clock.inner.timer_added.notify_one();
            }
        }
        Poll::Pending
    }
}

impl Drop for VirtualSleep {
    fn drop(&mut self) {
        if let Some(seq) = self.seq.take() {
            self.clock
                .inner
                .state
                .lock()
                .timers
                .remove(&(self.deadline, seq));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    fn at(clock: &VirtualClock, start: Instant) -> Duration {
        clock.now() - start
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleeper_wakes_at_its_exact_nanosecond() {
        let clock = VirtualClock::new();
        let start = clock.now();
        let woke = Arc::new(StdMutex::new(None));
        let (c, w) = (clock.clone(), Arc::clone(&woke));
        tokio::spawn(async move {
            c.sleep_until(start + Duration::from_nanos(133_333_333))
                .await;
            *w.lock().unwrap() = Some(c.now());
        });
        clock.advance(Duration::from_millis(200)).await;
        let woke = woke.lock().unwrap().expect("the sleeper woke");
        assert_eq!(woke - start, Duration::from_nanos(133_333_333));
        assert_eq!(at(&clock, start), Duration::from_millis(200));
    }

    #[tokio::test(start_paused = true)]
    async fn advancing_one_nanosecond_moves_the_clock_one_nanosecond() {
        let clock = VirtualClock::new();
        let start = clock.now();
        for _ in 0..3 {
            clock.advance(Duration::from_nanos(1)).await;
        }
        assert_eq!(at(&clock, start), Duration::from_nanos(3));
    }

    #[tokio::test(start_paused = true)]
    async fn sleepers_wake_instant_by_instant_and_first_come_at_one_instant() {
        let clock = VirtualClock::new();
        let start = clock.now();
        let log = Arc::new(StdMutex::new(Vec::new()));
        for (name, nanos) in [("late", 20), ("a", 10), ("b", 10), ("c", 10)] {
            let (c, l) = (clock.clone(), Arc::clone(&log));
            tokio::spawn(async move {
                c.sleep_until(start + Duration::from_nanos(nanos)).await;
                l.lock().unwrap().push((name, c.now() - start));
            });
            settle().await;
        }
        clock.advance(Duration::from_secs(1)).await;
        let ns = Duration::from_nanos;
        assert_eq!(
            *log.lock().unwrap(),
            [
                ("a", ns(10)),
                ("b", ns(10)),
                ("c", ns(10)),
                ("late", ns(20))
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_set_by_a_woken_task_inside_the_window_fires_in_it() {
        let clock = VirtualClock::new();
        let start = clock.now();
        let c = clock.clone();
        let task = tokio::spawn(async move {
            c.sleep(Duration::from_millis(1)).await;
            c.sleep(Duration::from_nanos(500)).await;
            c.now() - start
        });
        clock.advance(Duration::from_millis(2)).await;
        assert_eq!(task.await.unwrap(), Duration::from_nanos(1_000_500));
    }

    #[tokio::test(start_paused = true)]
    async fn run_until_jumps_to_each_timer_while_everything_is_blocked() {
        let clock = VirtualClock::new();
        let start = clock.now();
        let c = clock.clone();
        let out = clock
            .run_until(
                async move {
                    c.sleep(Duration::from_nanos(7)).await;
                    c.sleep(Duration::from_secs(3)).await;
                    "done"
                },
                None,
            )
            .await;
        assert_eq!(out, Ok("done"));
        assert_eq!(at(&clock, start), Duration::from_nanos(3_000_000_007));
    }

    #[tokio::test(start_paused = true)]
    async fn run_until_stops_at_its_limit_or_reports_a_deadlock() {
        let clock = VirtualClock::new();
        let start = clock.now();
        let c = clock.clone();
        let slow = async move { c.sleep(Duration::from_secs(10)).await };
        let limit = Duration::from_secs(1);
        assert_eq!(
            clock.run_until(slow, Some(limit)).await,
            Err(Stalled::Limit(limit))
        );
        assert_eq!(at(&clock, start), limit);
        let never = std::future::pending::<()>();
        assert_eq!(clock.run_until(never, None).await, Err(Stalled::Deadlock));
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_sleep_leaves_no_timer_behind() {
        let clock = VirtualClock::new();
        let mut sleep = Box::pin(clock.sleep(Duration::from_secs(1)));
        assert!(futures_poll(sleep.as_mut()).is_pending());
        assert_eq!(clock.pending_timers(), 1);
        drop(sleep);
        assert_eq!(clock.pending_timers(), 0);
    }

    fn futures_poll<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
        let mut cx = Context::from_waker(Waker::noop());
        f.poll(&mut cx)
    }

    #[tokio::test(start_paused = true)]
    async fn auto_advance_drives_sleepers_like_tokios_paused_clock_but_exactly() {
        let clock = VirtualClock::new();
        let _driver = clock.auto_advance();
        let start = clock.now();
        clock.sleep(Duration::from_nanos(1_500_001)).await;
        assert_eq!(at(&clock, start), Duration::from_nanos(1_500_001));
    }
}
