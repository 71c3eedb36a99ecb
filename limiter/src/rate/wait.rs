use tokio::time::Instant;

use super::{Limiter, Reservation};
use crate::go::GoDuration;

/// Why [`Limiter::wait_n`] returned without the tokens. The messages are Go's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    /// More tokens than the bucket can ever hold.
    #[error("rate: Wait(n={n}) exceeds limiter's burst {burst}")]
    ExceedsBurst {
        /// Tokens asked for.
        n: i64,
        /// The limiter's burst.
        burst: i64,
    },
    /// The tokens would come after the deadline; nothing was consumed.
    #[error("rate: Wait(n={n}) would exceed context deadline")]
    WouldExceedDeadline {
        /// Tokens asked for.
        n: i64,
    },
    /// The deadline passed while waiting; the reservation was cancelled.
    #[error("context deadline exceeded")]
    DeadlineExceeded,
}

/// Cancels the reservation if the wait is dropped before it completes, as Go's `WaitN` does
/// when its context ends.
struct CancelOnDrop<'a> {
    limiter: &'a Limiter,
    reservation: Option<Reservation>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(r) = self.reservation.take() {
            self.limiter.cancel_at(&r, self.limiter.clock().now());
        }
    }
}

impl Limiter {
    /// `WaitN(ctx, n)`: wait until `n` tokens are available, sleeping on the limiter's clock.
    ///
    /// The wait ends at the reservation's exact time to act on a virtual clock. On tokio's
    /// clock it may end later (timer resolution, scheduling); the tokens are booked at the time
    /// to act all the same, so a late wake-up costs the next waiter nothing.
    ///
    /// `deadline` plays the context deadline: if the tokens would come later, return
    /// [`WaitError::WouldExceedDeadline`] at once without consuming anything.
    ///
    /// # Errors
    /// See [`WaitError`].
    ///
    /// # Cancellation
    /// Dropping the future while it sleeps cancels the reservation, returning the tokens that no
    /// later reservation depends on.
    pub async fn wait_n(&self, n: i64, deadline: Option<Instant>) -> Result<(), WaitError> {
        let clock = self.clock();
        let now = clock.now();
        let (burst, limit) = (self.burst(), self.limit());
        if n > burst && !limit.is_inf() {
            return Err(WaitError::ExceedsBurst { n, burst });
        }
        if let Some(d) = deadline
            && d <= now
        {
            return Err(WaitError::DeadlineExceeded);
        }
        let max_wait = deadline.map_or(GoDuration::INF, |d| crate::instant::sub_instants(d, now));
        let r = self.reserve_n_within(now, n, max_wait);
        if !r.ok() {
            return Err(WaitError::WouldExceedDeadline { n });
        }
        let delay = r.delay_from(now);
        if delay == GoDuration::ZERO {
            return Ok(());
        }
        let mut guard = CancelOnDrop {
            limiter: self,
            reservation: Some(r),
        };
        let ready = r.time_to_act();
        match deadline {
            Some(d) if d < ready => {
                clock.sleep_until(d).await;
                // Dropping the guard cancels the reservation.
                drop(guard);
                Err(WaitError::DeadlineExceeded)
            }
            _ => {
                clock.sleep_until(ready).await;
                guard.reservation = None;
                Ok(())
            }
        }
    }

    /// `Wait(ctx)`: one token, no deadline.
    ///
    /// # Errors
    /// Only [`WaitError::ExceedsBurst`] when the burst is below 1.
    pub async fn wait(&self) -> Result<(), WaitError> {
        self.wait_n(1, None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::Limit;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn wait_sleeps_until_the_token_is_due() {
        let lim = Limiter::new(Limit(1.0), 1);
        let start = Instant::now();
        lim.wait().await.unwrap();
        lim.wait().await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn late_wake_ups_on_tokios_millisecond_ticks_cost_no_tokens() {
        let lim = Limiter::new(Limit(7.5), 1);
        let start = Instant::now();
        lim.wait().await.unwrap();
        lim.wait().await.unwrap();
        // Due at 133.333333ms; tokio's timer wheel wakes it on the next millisecond tick.
        assert_eq!(start.elapsed(), Duration::from_millis(134));
        for _ in 2..451 {
            lim.wait().await.unwrap();
        }
        // Grant 451 is due at 450 / 7.5 = 60s (to the nanosecond, truncated): the pace holds,
        // where booking each token at its late wake-up would have taken about 60.3s.
        let elapsed = start.elapsed();
        assert!(
            elapsed >= Duration::from_millis(59_999) && elapsed <= Duration::from_millis(60_001),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn on_a_virtual_clock_a_wait_ends_at_its_exact_nanosecond() {
        let clock = crate::clock::VirtualClock::new();
        let lim = Limiter::with_clock(Limit(7.5), 1, crate::clock::Clock::from(&clock));
        let start = clock.now();
        let waits = async {
            for _ in 0..3 {
                lim.wait().await.unwrap();
            }
        };
        clock.run_until(waits, None).await.unwrap();
        assert_eq!(clock.now() - start, Duration::from_nanos(266_666_666));
        assert_eq!(lim.tokens_at(clock.now()), -4.999_999_969_612_645e-9);
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_past_the_deadline_fails_at_once_and_consumes_nothing() {
        let lim = Limiter::new(Limit(1.0), 1);
        let _ = lim.reserve();
        let deadline = Instant::now() + Duration::from_millis(500);
        assert_eq!(
            lim.wait_n(1, Some(deadline)).await,
            Err(WaitError::WouldExceedDeadline { n: 1 })
        );
        assert_eq!(lim.tokens(), 0.0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_wait_gives_its_tokens_back() {
        let lim = Limiter::new(Limit(1.0), 1);
        let _ = lim.reserve();
        let wait = lim.wait();
        let timed_out = tokio::time::timeout(Duration::from_millis(100), wait).await;
        assert!(timed_out.is_err());
        // The cancelled reservation was the latest, so its token is restored.
        assert!((lim.tokens() - 0.1).abs() < 1e-9);
    }
}
