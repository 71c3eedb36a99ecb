use std::sync::Arc;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::clock::Clock;
use crate::go::GoDuration;
use crate::instant::{add_duration, sub_instants};

/// Events per second; Go's `rate.Limit`. [`Limit::INF`] disables limiting.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Limit(pub f64);

impl Limit {
    /// `rate.Inf`: no limit at all (`math.MaxFloat64`).
    pub const INF: Limit = Limit(f64::MAX);

    /// `n` events per second.
    #[must_use]
    pub const fn per_second(n: f64) -> Self {
        Limit(n)
    }

    /// `rate.Every(d)`: one event every `d`; infinite for `d ≤ 0`.
    #[must_use]
    pub fn every(d: GoDuration) -> Self {
        if d.as_nanos() <= 0 {
            return Limit::INF;
        }
        Limit(1.0 / d.seconds())
    }

    /// Whether this is [`Limit::INF`].
    #[must_use]
    pub fn is_inf(self) -> bool {
        self.0 == f64::MAX
    }

    /// `durationFromTokens`: how long it takes to accumulate `tokens`. Infinite for a limit
    /// ≤ 0; truncated toward zero; capped at `InfDuration` except at exactly 2^63 ns, where Go
    /// (amd64) yields `math.MinInt64`.
    #[must_use]
    pub fn duration_from_tokens(self, tokens: f64) -> GoDuration {
        if self.0 <= 0.0 {
            return GoDuration::INF;
        }
        let nanos = (tokens / self.0) * 1e9;
        if nanos > i64::MAX as f64 {
            return GoDuration::INF;
        }
        GoDuration(crate::go::f64_to_i64_amd64(nanos))
    }

    /// `tokensFromDuration`: tokens accumulated over `d`; 0 for a limit ≤ 0.
    #[must_use]
    pub fn tokens_from_duration(self, d: GoDuration) -> f64 {
        if self.0 <= 0.0 {
            return 0.0;
        }
        d.seconds() * self.0
    }
}

/// The outcome of a reservation: whether it is valid and when its tokens may be used.
///
/// A plain value: cancel it with [`Limiter::cancel_at`] on the limiter that issued it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reservation {
    ok: bool,
    tokens: i64,
    time_to_act: Instant,
    limit: Limit,
}

impl Reservation {
    /// Whether the limiter can provide the tokens within the maximum wait. A reservation that is
    /// not OK changed nothing.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.ok
    }

    /// When the reserved tokens may be used.
    #[must_use]
    pub fn time_to_act(&self) -> Instant {
        self.time_to_act
    }

    /// `DelayFrom(t)`: `InfDuration` if not OK, else how long after `t` the tokens are ready
    /// (never negative).
    #[must_use]
    pub fn delay_from(&self, t: Instant) -> GoDuration {
        if !self.ok {
            return GoDuration::INF;
        }
        sub_instants(self.time_to_act, t).max(GoDuration::ZERO)
    }
}

/// Whole seconds in Go's longest duration (2^63 − 1 ns); at or past it, Go's `Time.Sub`
/// saturates.
const GO_MAX_SECS: u64 = 9_223_372_036;

#[derive(Debug)]
struct State {
    limit: Limit,
    burst: i64,
    tokens: f64,
    /// `None` is Go's zero time: infinitely long ago.
    last: Option<Instant>,
    last_event: Option<Instant>,
}

/// A token bucket shared by everything holding a clone of it (clones share one bucket).
///
/// The methods without an explicit time read the limiter's [`Clock`], and [`Limiter::wait_n`]
/// sleeps on it.
#[derive(Clone, Debug)]
pub struct Limiter {
    state: Arc<Mutex<State>>,
    clock: Clock,
}

impl State {
    /// Go's `advance(t)`: the tokens at `t`, without mutating anything.
    fn advance(&self, t: Instant) -> f64 {
        let delta = match self.last {
            None => self.limit.tokens_from_duration(GoDuration::INF),
            // Time going backwards counts as no time: Go still multiplies, so an IEEE infinite
            // or NaN limit gives NaN here (rate.Inf, `math.MaxFloat64`, gives 0).
            Some(last) if t <= last => self.limit.tokens_from_duration(GoDuration::ZERO),
            Some(last) => {
                // `Duration` keeps whole seconds and nanoseconds apart, which is exactly Go's
                // `d / Second` and `d % Second` for a non-negative duration below 2^63 ns:
                // the same float as `GoDuration::seconds`, without an integer division.
                let elapsed = t - last;
                if self.limit.0 <= 0.0 {
                    0.0
                } else if elapsed.as_secs() >= GO_MAX_SECS {
                    self.limit.tokens_from_duration(GoDuration::INF)
                } else {
                    (elapsed.as_secs() as f64 + f64::from(elapsed.subsec_nanos()) / 1e9)
                        * self.limit.0
                }
            }
        };
        let tokens = self.tokens + delta;
        let burst = self.burst as f64;
        if tokens > burst { burst } else { tokens }
    }

    fn reserve_n(&mut self, t: Instant, n: i64, max_future_reserve: GoDuration) -> Reservation {
        if self.limit.is_inf() {
            // Go leaves the reservation's limit at the zero `Limit` here, which matters if it
            // is cancelled after the limiter went back to a finite limit: nothing is
            // subtracted for later reservations.
            return Reservation {
                ok: true,
                tokens: n,
                time_to_act: t,
                limit: Limit(0.0),
            };
        }
        let tokens = self.advance(t) - n as f64;
        let wait = if tokens < 0.0 {
            self.limit.duration_from_tokens(-tokens)
        } else {
            GoDuration::ZERO
        };
        let ok = n <= self.burst && wait <= max_future_reserve;
        let mut r = Reservation {
            ok,
            tokens: 0,
            time_to_act: t,
            limit: self.limit,
        };
        if ok {
            r.tokens = n;
            r.time_to_act = add_duration(t, wait);
            self.last = Some(t);
            self.tokens = tokens;
            self.last_event = Some(r.time_to_act);
        }
        r
    }
}

impl State {
    /// `reserveN(t, n, 0).ok` without building the reservation: the same state changes.
    fn allow_n(&mut self, t: Instant, n: i64) -> bool {
        if self.limit.is_inf() {
            return true;
        }
        let tokens = self.advance(t) - n as f64;
        // A debt too small to wait a whole nanosecond for truncates to no wait, as in Go.
        let wait = if tokens < 0.0 {
            self.limit.duration_from_tokens(-tokens)
        } else {
            GoDuration::ZERO
        };
        if n > self.burst || wait > GoDuration::ZERO {
            return false;
        }
        self.last = Some(t);
        self.tokens = tokens;
        self.last_event = Some(t);
        true
    }
}

impl Limiter {
    /// `rate.NewLimiter(r, b)`: a full bucket of `burst` tokens refilling at `limit`, on tokio's
    /// clock.
    #[must_use]
    pub fn new(limit: Limit, burst: i64) -> Self {
        Self::with_clock(limit, burst, Clock::tokio())
    }

    /// `rate.NewLimiter(r, b)` on `clock`.
    #[must_use]
    pub fn with_clock(limit: Limit, burst: i64, clock: Clock) -> Self {
        Limiter {
            state: Arc::new(Mutex::new(State {
                limit,
                burst,
                tokens: burst as f64,
                last: None,
                last_event: None,
            })),
            clock,
        }
    }

    /// The clock the methods without an explicit time read.
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The current limit.
    #[must_use]
    pub fn limit(&self) -> Limit {
        self.state.lock().limit
    }

    /// The current burst.
    #[must_use]
    pub fn burst(&self) -> i64 {
        self.state.lock().burst
    }

    /// `TokensAt(t)`: the tokens available at `t` (negative while in debt).
    #[must_use]
    pub fn tokens_at(&self, t: Instant) -> f64 {
        self.state.lock().advance(t)
    }

    /// `Tokens()`: the tokens available now.
    #[must_use]
    pub fn tokens(&self) -> f64 {
        self.tokens_at(self.clock.now())
    }

    /// `AllowN(t, n)`: take `n` tokens if they are there at `t`; false (and no change) otherwise.
    pub fn allow_n_at(&self, t: Instant, n: i64) -> bool {
        self.state.lock().allow_n(t, n)
    }

    /// `AllowN(now, n)`.
    pub fn allow_n(&self, n: i64) -> bool {
        self.allow_n_at(self.clock.now(), n)
    }

    /// `Allow()`: one token, now.
    pub fn allow(&self) -> bool {
        self.allow_n(1)
    }

    /// `ReserveN(t, n)`: never fails for `n ≤ burst` (the bucket goes into debt); fails, changing
    /// nothing, for `n > burst` unless the limit is infinite.
    pub fn reserve_n_at(&self, t: Instant, n: i64) -> Reservation {
        self.state.lock().reserve_n(t, n, GoDuration::INF)
    }

    /// `ReserveN(now, n)`.
    pub fn reserve_n(&self, n: i64) -> Reservation {
        self.reserve_n_at(self.clock.now(), n)
    }

    /// `Reserve()` at `t`: one token.
    pub fn reserve_at(&self, t: Instant) -> Reservation {
        self.reserve_n_at(t, 1)
    }

    /// `Reserve()`: one token, now.
    pub fn reserve(&self) -> Reservation {
        self.reserve_at(self.clock.now())
    }

    /// Reserve with a bound on the wait (what `WaitN` does with a context deadline).
    pub(crate) fn reserve_n_within(&self, t: Instant, n: i64, max_wait: GoDuration) -> Reservation {
        self.state.lock().reserve_n(t, n, max_wait)
    }

    /// `Reservation.CancelAt(t)`: give back the tokens of `r` that no later reservation has
    /// queued behind. A no-op for a reservation that is not OK, for an infinite limit, for zero
    /// tokens, or once `t` is past its time to act.
    pub fn cancel_at(&self, r: &Reservation, t: Instant) {
        if !r.ok {
            return;
        }
        let mut s = self.state.lock();
        if s.limit.is_inf() || r.tokens == 0 || r.time_to_act < t {
            return;
        }
        let later = match s.last_event {
            Some(last_event) => sub_instants(last_event, r.time_to_act),
            None => GoDuration::MIN,
        };
        let restore = r.tokens as f64 - r.limit.tokens_from_duration(later);
        if restore <= 0.0 {
            return;
        }
        let mut tokens = s.advance(t) + restore;
        let burst = s.burst as f64;
        if tokens > burst {
            tokens = burst;
        }
        s.last = Some(t);
        s.tokens = tokens;
        if s.last_event == Some(r.time_to_act) {
            let prev = add_duration(
                r.time_to_act,
                r.limit.duration_from_tokens(-(r.tokens as f64)),
            );
            if prev >= t {
                s.last_event = Some(prev);
            }
        }
    }

    /// `Reservation.Cancel()` now.
    pub fn cancel(&self, r: &Reservation) {
        self.cancel_at(r, self.clock.now());
    }

    /// `SetLimitAt(t, limit)`: settle the tokens at the old limit, then switch.
    pub fn set_limit_at(&self, t: Instant, limit: Limit) {
        let mut s = self.state.lock();
        let tokens = s.advance(t);
        s.last = Some(t);
        s.tokens = tokens;
        s.limit = limit;
    }

    /// `SetLimit(limit)` now.
    pub fn set_limit(&self, limit: Limit) {
        self.set_limit_at(self.clock.now(), limit);
    }

    /// `SetBurstAt(t, burst)`: settle the tokens at the old burst, then switch.
    pub fn set_burst_at(&self, t: Instant, burst: i64) {
        let mut s = self.state.lock();
        let tokens = s.advance(t);
        s.last = Some(t);
        s.tokens = tokens;
        s.burst = burst;
    }

    /// `SetBurst(burst)` now.
    pub fn set_burst(&self, burst: i64) {
        self.set_burst_at(self.clock.now(), burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `allow_n` is `reserveN(t, n, 0).ok` with the same state changes.
        #[test]
        fn allow_is_reserve_with_no_wait(
            rate in prop_oneof![Just(0.0), 0.1f64..1000.0, Just(f64::MAX)],
            burst in 0i64..20,
            steps in proptest::collection::vec((0u64..500_000_000, 0i64..5), 1..100),
        ) {
            let a = Limiter::new(Limit(rate), burst);
            let b = Limiter::new(Limit(rate), burst);
            let mut t = Instant::now();
            for (gap, n) in steps {
                t += std::time::Duration::from_nanos(gap);
                let allowed = a.allow_n_at(t, n);
                let reserved = b.reserve_n_within(t, n, GoDuration::ZERO).ok();
                prop_assert_eq!(allowed, reserved);
                prop_assert_eq!(a.tokens_at(t).to_bits(), b.tokens_at(t).to_bits());
                let (sa, sb) = (a.state.lock(), b.state.lock());
                prop_assert_eq!((sa.last, sa.last_event), (sb.last, sb.last_event));
            }
        }
    }

    #[test]
    fn an_ieee_infinite_limit_is_not_rate_inf_and_multiplies_zero_elapsed_into_nan() {
        // Go: 0 s * +Inf = NaN tokens at the same instant; rate.Inf (MaxFloat64) gives 0.
        let t = Instant::now();
        let ieee = Limiter::new(Limit(f64::INFINITY), 1);
        assert!(ieee.reserve_at(t).ok());
        assert!(ieee.tokens_at(t).is_nan());
        let inf = Limiter::new(Limit(1.0), 1);
        assert!(inf.reserve_at(t).ok());
        inf.set_limit_at(t, Limit::INF);
        assert_eq!(inf.tokens_at(t), 0.0);
    }

    #[test]
    fn every_300ms_is_go_float() {
        assert_eq!(Limit::every(GoDuration(300_000_000)).0, 3.3333333333333335);
        assert!(Limit::every(GoDuration(0)).is_inf());
    }

    #[test]
    fn the_41st_token_of_debt_at_10_per_second_costs_4_099999999s() {
        let lim = Limiter::new(Limit(10.0), 100);
        let t = Instant::now();
        let mut last = GoDuration::ZERO;
        for _ in 0..141 {
            last = lim.reserve_at(t).delay_from(t);
        }
        assert_eq!(last, GoDuration(4_099_999_999));
    }

    #[test]
    fn reserving_more_than_burst_changes_nothing() {
        let lim = Limiter::new(Limit(10.0), 5);
        let t = Instant::now();
        let r = lim.reserve_n_at(t, 6);
        assert!(!r.ok());
        assert_eq!(r.delay_from(t), GoDuration::INF);
        assert_eq!(lim.tokens_at(t), 5.0);
    }

    #[test]
    fn zero_limit_spends_the_burst_then_waits_forever() {
        let lim = Limiter::new(Limit(0.0), 1);
        let t = Instant::now();
        assert_eq!(lim.reserve_at(t).delay_from(t), GoDuration::ZERO);
        let r = lim.reserve_at(t);
        assert!(r.ok());
        assert_eq!(r.delay_from(t), GoDuration::INF);
        assert!(!lim.allow_n_at(t, 1));
    }
}
