//! Drawing faults: the latency, injected error or outage a request gets.

use std::time::Duration;

use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::{Rng as _, SeedableRng as _};

use crate::config::{Faults, Latency, OperationFaults, ResourceFault};
use crate::model::Class;
use crate::service::Operation;

/// What the faults decided for one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FaultDecision {
    /// How long to hold the request.
    pub latency: Duration,
    /// A status to fail with, if any.
    pub error: Option<u16>,
    /// The error code to answer with (AWS services), if the faults name one.
    pub code: Option<String>,
}

/// The active faults and their seeded random source.
#[derive(Debug)]
pub(crate) struct FaultState {
    faults: Faults,
    rules: std::sync::Arc<[ResourceFault]>,
    rng: SplitMix64,
}

impl FaultState {
    pub fn new(faults: Faults) -> FaultState {
        let rng = SplitMix64::seed_from_u64(faults.seed);
        let rules = faults.resources.clone().into();
        FaultState { faults, rules, rng }
    }

    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// The per-resource rules and the seed that picks their shares.
    pub fn resource_rules(&self) -> (std::sync::Arc<[ResourceFault]>, u64) {
        (self.rules.clone(), self.faults.seed)
    }

    /// Draws the faults of a request of `class` arriving at `at` (time since start).
    pub fn decide(&mut self, class: Class, at: Duration) -> FaultDecision {
        let latency = self.draw_latency(self.faults.latency.get(&class).copied());
        let outage = self
            .faults
            .outages
            .iter()
            .find(|o| o.covers(at))
            .map(|o| o.status);
        let error = outage.or_else(|| {
            let rate = self.faults.errors.get(&class)?;
            (unit(&mut self.rng) < rate.probability).then_some(rate.status)
        });
        FaultDecision {
            latency,
            error,
            code: None,
        }
    }

    /// Draws the faults of an AWS request of `op` arriving at `at`: the cloud's outages,
    /// then the faults of the operation (or else of `*` in its service).
    pub fn decide_operation(&mut self, op: Operation, at: Duration) -> FaultDecision {
        let own: Option<OperationFaults> = self
            .faults
            .services
            .get(&op.service())
            .and_then(|ops| ops.get(op.name()).or_else(|| ops.get("*")))
            .cloned();
        let Some(own) = own else {
            let error = self.global_outage(at);
            return FaultDecision {
                error,
                ..FaultDecision::default()
            };
        };
        let latency = self.draw_latency(own.latency);
        let outage = self
            .global_outage(at)
            .map(|status| (status, None))
            .or_else(|| {
                own.outages
                    .iter()
                    .find(|o| o.covers(at))
                    .map(|o| (o.status, own.code.clone()))
            });
        let error = outage.or_else(|| {
            let rate = own.errors?;
            (unit(&mut self.rng) < rate.probability).then(|| (rate.status, own.code.clone()))
        });
        FaultDecision {
            latency,
            error: error.as_ref().map(|e| e.0),
            code: error.and_then(|e| e.1),
        }
    }

    fn global_outage(&self, at: Duration) -> Option<u16> {
        self.faults
            .outages
            .iter()
            .find(|o| o.covers(at))
            .map(|o| o.status)
    }

    fn draw_latency(&mut self, latency: Option<Latency>) -> Duration {
        match latency {
            None => Duration::ZERO,
            Some(Latency::Fixed(d)) => d,
            Some(Latency::Uniform { min, max }) => min + (max - min).mul_f64(unit(&mut self.rng)),
            Some(Latency::LogNormal { median, sigma }) => {
                let factor = (sigma * standard_normal(&mut self.rng)).exp();
                Duration::try_from_secs_f64(median.as_secs_f64() * factor).unwrap_or(Duration::MAX)
            }
        }
    }
}

/// A number in `[0, 1)` fixed by the seed and the name alone: which share a resource falls
/// in (FNV-1a of the name, mixed with the seed by one SplitMix64 step).
pub(crate) fn share_unit(seed: u64, name: &str) -> f64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    unit(&mut SplitMix64::seed_from_u64(seed ^ hash))
}

/// Uniform in `[0, 1)`, from the draws' generator: SplitMix64 (Steele, Lea and Flood,
/// 2014), seeded with the state itself, so a seed gives the same faults in every run.
fn unit(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Standard normal, by the Box–Muller transform.
fn standard_normal(rng: &mut SplitMix64) -> f64 {
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ErrorRate, Outage};

    #[test]
    fn an_outage_fails_every_request_inside_its_window_only() {
        let outage = Outage {
            start: Duration::from_secs(10),
            end: Duration::from_secs(20),
            status: 503,
        };
        let mut state = FaultState::new(Faults::none().with_outage(outage));
        assert_eq!(
            state.decide(Class::Read, Duration::from_secs(9)).error,
            None
        );
        assert_eq!(
            state.decide(Class::Read, Duration::from_secs(10)).error,
            Some(503)
        );
        assert_eq!(
            state.decide(Class::Mutate, Duration::from_secs(19)).error,
            Some(503)
        );
        assert_eq!(
            state.decide(Class::Read, Duration::from_secs(20)).error,
            None
        );
    }

    #[test]
    fn an_error_rate_fails_about_that_share_and_only_its_class() {
        let errors = ErrorRate {
            probability: 0.25,
            status: 500,
        };
        let mut state = FaultState::new(
            Faults::none()
                .with_errors(Class::Mutate, errors)
                .with_seed(1),
        );
        let failed = (0..10_000)
            .filter(|_| state.decide(Class::Mutate, Duration::ZERO).error == Some(500))
            .count();
        assert!((2_300..2_700).contains(&failed), "{failed}");
        assert_eq!(state.decide(Class::Read, Duration::ZERO).error, None);
    }

    #[test]
    fn an_operation_gets_its_own_faults_or_its_services_star_and_the_cloud_outages() {
        use crate::service::{S3Operation, Service};
        let head = Operation::from(S3Operation::HeadBucket);
        let list = Operation::from(S3Operation::ListBuckets);
        let faults = Faults::none()
            .with_operation(
                Service::S3,
                "HeadBucket",
                OperationFaults::none()
                    .with_errors(ErrorRate {
                        probability: 1.0,
                        status: 503,
                    })
                    .with_code("SlowDown"),
            )
            .with_operation(
                Service::S3,
                "*",
                OperationFaults::none().with_latency(Latency::Fixed(Duration::from_millis(5))),
            )
            .with_outage(Outage {
                start: Duration::from_secs(10),
                end: Duration::from_secs(20),
                status: 500,
            });
        let mut state = FaultState::new(faults);
        let d = state.decide_operation(head, Duration::ZERO);
        assert_eq!((d.error, d.code.as_deref()), (Some(503), Some("SlowDown")));
        let d = state.decide_operation(list, Duration::ZERO);
        assert_eq!((d.error, d.latency), (None, Duration::from_millis(5)));
        let d = state.decide_operation(list, Duration::from_secs(15));
        assert_eq!((d.error, d.code), (Some(500), None));
        let sts = Operation::from(crate::service::StsOperation::AssumeRole);
        assert_eq!(
            state.decide_operation(sts, Duration::ZERO),
            FaultDecision::default()
        );
    }

    #[test]
    fn latency_draws_stay_in_range_and_repeat_for_a_seed() {
        let (min, max) = (Duration::from_millis(10), Duration::from_millis(20));
        let faults = Faults::none()
            .with_latency(Class::Read, Latency::Uniform { min, max })
            .with_latency(
                Class::List,
                Latency::LogNormal {
                    median: Duration::from_millis(100),
                    sigma: 0.5,
                },
            )
            .with_seed(42);
        let draw = |faults: &Faults| {
            let mut state = FaultState::new(faults.clone());
            (0..1_000)
                .map(|i| {
                    state
                        .decide(
                            if i % 2 == 0 { Class::Read } else { Class::List },
                            Duration::ZERO,
                        )
                        .latency
                })
                .collect::<Vec<_>>()
        };
        let first = draw(&faults);
        assert_eq!(first, draw(&faults));
        assert!(first.iter().step_by(2).all(|d| (min..=max).contains(d)));
        let mut lognormal: Vec<_> = first.iter().skip(1).step_by(2).copied().collect();
        lognormal.sort();
        let median = lognormal[lognormal.len() / 2].as_secs_f64();
        assert!((0.085..0.115).contains(&median), "median {median}");
    }
}
