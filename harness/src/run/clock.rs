//! One clock for a run: a tokio instant and the wall time at the start, read once. Every
//! time the harness records is [`Micros`] since that start; every measurement source states
//! once, as an [`Epoch`], how its own times map onto it.
//!
//! This is the only place in `run/` that reads the wall clock, and only to place the
//! journals of other processes (which publish their epochs as wall times) and for the
//! report (when the run started, and how much wall time it took: on a paused clock the
//! run's own time is virtual).

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use tokio::time::Instant;

/// Microseconds since the start of a run (or of a source's own epoch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Micros(pub u64);

impl Micros {
    /// A duration in whole microseconds, saturating at `u64::MAX` (585,000 years).
    #[must_use]
    pub fn of(d: Duration) -> Micros {
        Micros(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    /// The same time as a duration.
    #[must_use]
    pub fn as_duration(self) -> Duration {
        Duration::from_micros(self.0)
    }
}

/// Where a source's time zero lies on the run's clock, and how well that is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Epoch {
    /// The source's time zero minus the run's, in µs (negative when the source started
    /// first).
    pub offset_us: i64,
    /// How far off `offset_us` may be (the round trip it was measured with, or zero when
    /// both clocks are this process's).
    pub uncertainty: Duration,
}

impl Epoch {
    /// The run's own clock.
    pub const RUN: Epoch = Epoch {
        offset_us: 0,
        uncertainty: Duration::ZERO,
    };

    /// A source time on the run's clock; `None` for a time before the run started.
    #[must_use]
    pub fn to_run(self, source_us: u64) -> Option<Micros> {
        let at = i128::from(source_us) + i128::from(self.offset_us);
        u64::try_from(at).ok().map(Micros)
    }
}

/// The run's clock.
#[derive(Clone, Copy, Debug)]
pub struct RunClock {
    start: Instant,
    wall_start: Timestamp,
    wall_timer: std::time::Instant,
}

impl RunClock {
    /// Starts the clock now.
    #[must_use]
    pub fn start() -> RunClock {
        RunClock {
            start: Instant::now(),
            wall_start: Timestamp::now(),
            wall_timer: std::time::Instant::now(),
        }
    }

    /// The wall time since the start, for the report only: in virtual time it is how long
    /// the run took, not how much time passed in it.
    #[must_use]
    pub fn wall_elapsed(&self) -> Duration {
        self.wall_timer.elapsed()
    }

    /// The wall time now: for labels a person reads (such as the restart annotation), never
    /// for a decision.
    #[must_use]
    pub fn wall_now(&self) -> Timestamp {
        Timestamp::now()
    }

    /// The tokio instant of the start.
    #[must_use]
    pub fn start_instant(&self) -> Instant {
        self.start
    }

    /// The wall time of the start (for the report, and to place wall-dated epochs).
    #[must_use]
    pub fn wall_start(&self) -> Timestamp {
        self.wall_start
    }

    /// The wall time of the start truncated to the second: the epoch on which in-process
    /// components stamp objects (`metav1.Time` has whole seconds, so stamps from a whole
    /// second agree however each component rounds).
    #[must_use]
    pub fn wall_start_second(&self) -> Timestamp {
        Timestamp::from_second(self.wall_start.as_second()).unwrap_or(self.wall_start)
    }

    /// Time since the start.
    #[must_use]
    pub fn now(&self) -> Micros {
        self.at(Instant::now())
    }

    /// `instant` on the run's clock (zero for an instant before the start).
    #[must_use]
    pub fn at(&self, instant: Instant) -> Micros {
        Micros::of(instant.saturating_duration_since(self.start))
    }

    /// The epoch of a source whose time zero is `instant` of this process.
    #[must_use]
    pub fn epoch_at(&self, instant: Instant, uncertainty: Duration) -> Epoch {
        let offset_us = if instant >= self.start {
            i64::try_from(Micros::of(instant - self.start).0).unwrap_or(i64::MAX)
        } else {
            -i64::try_from(Micros::of(self.start - instant).0).unwrap_or(i64::MAX)
        };
        Epoch {
            offset_us,
            uncertainty,
        }
    }

    /// The epoch of a source whose time zero was set during an exchange of this process,
    /// `mid` its middle and `round_trip` its length, and which also publishes that time
    /// zero as a wall time: the wall time where it lies within the exchange, as the source
    /// journals are placed that publish only a wall time (mock-apiserver's), so that their
    /// times and this source's compare as the two servers' clocks do; the exchange's
    /// middle otherwise (the wall clocks are further apart than the round trip). Either
    /// way the epoch is known to within the round trip. Also returns how far the wall time
    /// lies from the middle, µs, and whether it was used.
    #[must_use]
    pub fn epoch_within(
        &self,
        mid: Instant,
        round_trip: Duration,
        wall: Timestamp,
    ) -> (Epoch, i64, bool) {
        let middle = self.epoch_at(mid, round_trip);
        let walled = Epoch {
            uncertainty: round_trip,
            ..self.epoch_of_wall(wall)
        };
        let from_middle = walled.offset_us - middle.offset_us;
        let half = i64::try_from(Micros::of(round_trip / 2).0).unwrap_or(i64::MAX);
        if from_middle.abs() <= half {
            (walled, from_middle, true)
        } else {
            (middle, from_middle, false)
        }
    }

    /// Where `epoch` (a source's time zero) lies on this process's clock: the inverse of
    /// [`RunClock::epoch_at`], to the microsecond.
    #[must_use]
    pub fn instant_of(&self, epoch: Epoch) -> Instant {
        let offset = Duration::from_micros(epoch.offset_us.unsigned_abs());
        if epoch.offset_us >= 0 {
            self.start + offset
        } else {
            self.start.checked_sub(offset).unwrap_or(self.start)
        }
    }

    /// The epoch of a source that publishes its time zero as a wall time (another
    /// process, maybe on another machine: the two wall clocks' skew is not known here).
    #[must_use]
    pub fn epoch_of_wall(&self, wall: Timestamp) -> Epoch {
        let offset_us = wall.as_microsecond() - self.wall_start.as_microsecond();
        Epoch {
            offset_us,
            uncertainty: Duration::ZERO,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_times_before_the_run_are_not_on_its_clock() {
        let e = Epoch {
            offset_us: -1_000,
            uncertainty: Duration::ZERO,
        };
        assert_eq!(e.to_run(999), None);
        assert_eq!(e.to_run(1_500), Some(Micros(500)));
        assert_eq!(Epoch::RUN.to_run(7), Some(Micros(7)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wall_dated_epoch_within_its_round_trip_is_taken_and_one_outside_is_not() {
        let clock = RunClock::start();
        tokio::time::advance(Duration::from_millis(10)).await;
        let mid = Instant::now();
        let trip = Duration::from_millis(4);
        // The run's wall start plus 10 ms is the middle; 2 ms either side is the exchange.
        let wall = |us: i64| {
            clock
                .wall_start()
                .checked_add(k8s_openapi::jiff::SignedDuration::from_micros(us))
                .unwrap()
        };
        let (e, off, used) = clock.epoch_within(mid, trip, wall(11_500));
        assert_eq!((e.offset_us, off, used), (11_500, 1_500, true));
        assert_eq!(e.uncertainty, trip);
        let (e, off, used) = clock.epoch_within(mid, trip, wall(8_000));
        assert_eq!((e.offset_us, off, used), (8_000, -2_000, true));
        let (e, off, used) = clock.epoch_within(mid, trip, wall(12_001));
        assert_eq!((e.offset_us, off, used), (10_000, 2_001, false));
        assert_eq!(e.uncertainty, trip);
        assert_eq!(clock.instant_of(e), mid);
        let earlier = mid - Duration::from_millis(12);
        assert_eq!(
            clock.instant_of(clock.epoch_at(earlier, Duration::ZERO)),
            earlier
        );
    }

    #[tokio::test(start_paused = true)]
    async fn instants_map_to_microseconds_since_the_start_in_both_directions() {
        let before = Instant::now();
        tokio::time::advance(Duration::from_millis(3)).await;
        let clock = RunClock::start();
        tokio::time::advance(Duration::from_micros(1_500)).await;
        assert_eq!(clock.now(), Micros(1_500));
        assert_eq!(clock.at(before), Micros(0));
        assert_eq!(clock.epoch_at(before, Duration::ZERO).offset_us, -3_000);
        assert_eq!(
            clock.epoch_at(Instant::now(), Duration::ZERO).offset_us,
            1_500
        );
    }

    #[test]
    fn wall_dated_epochs_are_placed_by_the_difference_of_wall_times() {
        let clock = RunClock {
            start: Instant::now(),
            wall_start: "2026-11-23T10:00:00Z".parse().unwrap(),
            wall_timer: std::time::Instant::now(),
        };
        let e = clock.epoch_of_wall("2026-11-23T09:59:59.25Z".parse().unwrap());
        assert_eq!(e.offset_us, -750_000);
    }

    #[test]
    fn micros_saturate_instead_of_wrapping() {
        assert_eq!(Micros::of(Duration::MAX), Micros(u64::MAX));
        assert_eq!(
            Micros::of(Duration::from_nanos(2_999)).as_duration(),
            Duration::from_micros(2)
        );
    }
}
