//! The provider's random draws (poll jitter, the critical annotation updater's retry
//! jitter), from one seeded source so that a run can be repeated draw for draw.

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A source of uniform draws in [0, 1), shared by the reconcilers of one provider.
///
/// On a single-threaded runtime the reconciles run in a fixed order, so a seeded source
/// gives every reconcile the same draw on every run.
#[derive(Debug)]
pub struct Draws {
    rng: Mutex<StdRng>,
}

impl Draws {
    /// Draws repeatable for `seed`.
    #[must_use]
    pub fn seeded(seed: u64) -> Self {
        Draws {
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
        }
    }

    /// Draws seeded by the operating system (the `provider` binary).
    #[must_use]
    pub fn from_os() -> Self {
        Draws {
            rng: Mutex::new(StdRng::from_os_rng()),
        }
    }

    /// The next draw, uniform in [0, 1).
    pub fn unit(&self) -> f64 {
        self.rng.lock().random::<f64>()
    }

    /// The next draw, uniform in `0..n`, as Go's `rand.Intn(n)` is used (a pick among `n`
    /// things). `n` must be at least 1.
    pub fn below(&self, n: usize) -> usize {
        self.rng.lock().random_range(0..n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_its_draws_and_they_stay_in_the_unit_interval() {
        let (a, b) = (Draws::seeded(7), Draws::seeded(7));
        let first: Vec<f64> = (0..100).map(|_| a.unit()).collect();
        let second: Vec<f64> = (0..100).map(|_| b.unit()).collect();
        assert_eq!(first, second);
        assert!(first.iter().all(|u| (0.0..1.0).contains(u)));
        let other = Draws::seeded(8);
        assert_ne!(first, (0..100).map(|_| other.unit()).collect::<Vec<_>>());
    }

    #[test]
    fn picks_below_n_repeat_for_a_seed_and_reach_every_index() {
        let (a, b) = (Draws::seeded(3), Draws::seeded(3));
        let first: Vec<usize> = (0..200).map(|_| a.below(4)).collect();
        assert_eq!(first, (0..200).map(|_| b.below(4)).collect::<Vec<_>>());
        for i in 0..4 {
            assert!(first.contains(&i), "index {i} never drawn");
        }
        assert!(first.iter().all(|&i| i < 4));
        assert_eq!(Draws::seeded(9).below(1), 0);
    }
}
