//! The one time source of limiters, queues and controllers: nanosecond instants and ordered
//! timers, either tokio's clock or a [`VirtualClock`].
//!
//! Everything in this crate that reads the time or sleeps does it through a [`Clock`]: a
//! [`Limiter`](crate::rate::Limiter) refilling and waiting, the delaying and priority queues
//! deciding when an entry is ready, the in-queue gate of a controller, queue metrics. Every
//! constructor without a clock argument takes [`Clock::tokio`].
//!
//! # Semantics
//!
//! Instants are [`tokio::time::Instant`]s on both clocks: nanosecond resolution, and the Go
//! arithmetic of the rest of the crate (signed, saturating durations) applies unchanged.
//!
//! **Tokio's clock** ([`Clock::tokio`], the default) reads [`tokio::time::Instant::now`] and
//! sleeps with [`tokio::time::sleep_until`]. Reading is exact; waking is not: tokio's timer
//! wheel has a resolution of one millisecond and wakes a sleep at the first tick at or after its
//! deadline, so a wait of 133.333333 ms ends at 134 ms, later still on a busy machine. No
//! budget is lost to that: a reservation books its tokens at the exact instant it may act
//! (Go's `timeToAct`), not at the instant its waiter woke, so the next reservation's wait is
//! computed from the booked instant and the long-run rate stays exact. The `pacing` benchmark
//! (`cargo bench -p limiter --bench pacing`) shows it in real time: at 7.5 grants per second
//! every single wake is late, and 60 s of `wait` loops still grant 7.5/s within 0.1 %.
//!
//! The same holds under tokio's *paused* clock with auto-advance
//! (`#[tokio::test(start_paused = true)]`, [`tokio::time::pause`]): the runtime jumps to the
//! next timer whenever every task is blocked, deterministically, and the jumps land on whole
//! milliseconds. This is why the provider uses tokio's clock, and must: a provider run in
//! virtual time shares one paused tokio clock with everything else in the process (mock
//! servers, the harness, tokio's own timeouts), so the provider's limiters and queues have to
//! sleep on the clock that everyone else's auto-advance drives. Budgets, rates and backlogs
//! stay exact there; individual wake-ups may be up to a millisecond late.
//!
//! **A [`VirtualClock`]** is exact to the nanosecond: its time moves only when its owner moves
//! it, and every sleeper wakes at its own instant. That is what the conformance replay needs,
//! because it reproduces Go's `testing/synctest` bubble, where time jumps from one timer's
//! instant to the next whenever every goroutine is durably blocked. The virtual clock does the
//! same:
//! - [`VirtualClock::advance`] moves through the timers due within the window one instant at a
//!   time, wakes the sleepers of that instant, and lets every task run until all are blocked
//!   before it moves on, so effects at an earlier instant always complete before anything at a
//!   later one, and everything due by the end of the window (inclusive) has fired when it
//!   returns;
//! - [`VirtualClock::run_until`] drives a future the way a blocking call on a bubble's main
//!   goroutine is driven: whenever every task is blocked, time jumps to the next timer;
//! - [`VirtualClock::auto_advance`] does that in the background, for tests.
//!
//! Sleepers due at the same instant wake in the order they started sleeping. Go defines no
//! order there: synctest fires equal timers in runtime timer-heap order and the scheduler then
//! runs the woken goroutines in its own order; k8s.io/utils's `FakeClock` fires its waiters in
//! the order they were registered, as we do. Where Go does define an order at one instant (the
//! delaying queue's `container/heap` order for equal ready times, the priority queue's FIFO),
//! the queues reproduce it themselves, whatever the clock.
//!
//! Driving a virtual clock needs to know when every task is blocked. The driving methods learn
//! it from tokio's own paused clock: they sleep a millisecond of tokio time, which under
//! auto-advance completes only once the runtime has nothing left to run. So drive a virtual
//! clock on a current-thread runtime whose tokio time is paused, and let nothing else on that
//! runtime sleep on tokio's clock; tokio's time there moves a millisecond per step and means
//! nothing. [`replay::run`](crate::replay::run) builds exactly such a runtime.

mod virtual_clock;

use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

pub use virtual_clock::{AutoAdvance, Stalled, VirtualClock, VirtualSleep, settle};

/// A time source: tokio's clock or a [`VirtualClock`]. Cheap to clone; clones of a virtual
/// clock share it.
#[derive(Clone, Debug, Default)]
pub struct Clock(Source);

#[derive(Clone, Debug, Default)]
enum Source {
    #[default]
    Tokio,
    Virtual(VirtualClock),
}

impl Clock {
    /// Tokio's clock: [`tokio::time::Instant::now`] and [`tokio::time::sleep_until`], in real
    /// or paused time.
    #[must_use]
    pub const fn tokio() -> Self {
        Clock(Source::Tokio)
    }

    /// The current instant.
    #[must_use]
    #[inline]
    pub fn now(&self) -> Instant {
        match &self.0 {
            Source::Tokio => Instant::now(),
            Source::Virtual(v) => v.now(),
        }
    }

    /// Sleeps until `deadline` (returns at once if it has passed).
    ///
    /// # Cancellation
    /// Cancel-safe: dropping the future forgets the timer.
    pub async fn sleep_until(&self, deadline: Instant) {
        match &self.0 {
            Source::Tokio => tokio::time::sleep_until(deadline).await,
            Source::Virtual(v) => v.sleep_until(deadline).await,
        }
    }

    /// Sleeps for `d`.
    pub async fn sleep(&self, d: Duration) {
        let deadline = crate::instant::add_std(self.now(), d);
        self.sleep_until(deadline).await;
    }

    /// Sleeps until `next` (if any) or until `wake` is notified, whichever comes first: how the
    /// queues' timer tasks wait.
    pub(crate) async fn sleep_until_or_notified(&self, wake: &Notify, next: Option<Instant>) {
        match next {
            Some(at) => {
                tokio::select! {
                    () = wake.notified() => {}
                    () = self.sleep_until(at) => {}
                }
            }
            None => wake.notified().await,
        }
    }

    /// The virtual clock behind this one, if it is one.
    #[must_use]
    pub fn as_virtual(&self) -> Option<&VirtualClock> {
        match &self.0 {
            Source::Tokio => None,
            Source::Virtual(v) => Some(v),
        }
    }
}

impl From<VirtualClock> for Clock {
    fn from(v: VirtualClock) -> Self {
        Clock(Source::Virtual(v))
    }
}

impl From<&VirtualClock> for Clock {
    fn from(v: &VirtualClock) -> Self {
        Clock(Source::Virtual(v.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_sleeps_on_paused_tokio_time() {
        let clock = Clock::tokio();
        let start = clock.now();
        clock.sleep(Duration::from_millis(250)).await;
        assert_eq!(clock.now() - start, Duration::from_millis(250));
    }

    #[tokio::test(start_paused = true)]
    async fn a_virtual_clock_reads_its_own_time() {
        let v = VirtualClock::new();
        let clock = Clock::from(&v);
        let start = clock.now();
        v.advance(Duration::from_nanos(1)).await;
        assert_eq!(clock.now() - start, Duration::from_nanos(1));
        assert!(clock.as_virtual().is_some());
        assert!(Clock::tokio().as_virtual().is_none());
    }
}
