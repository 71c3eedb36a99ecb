//! Rate quotas: governor token buckets per account, per class or action, and account-wide,
//! read on tokio time.
//!
//! # Semantics
//! A request draws one token from the account-wide bucket (if configured), then one from
//! its action's own bucket if it has an override, else from its class's bucket (if
//! configured). It is throttled if either is empty, as Route 53 does; a request
//! throttled by the second bucket has still spent its account-wide token. A throttled
//! request spends nothing from the bucket that refused it.
//!
//! The wait reported is the exact time until that bucket admits one request, which the
//! HTTP layer rounds up to whole seconds for `Retry-After`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{NotUntil, Quota, RateLimiter};

use crate::clock::TokioClock;
use crate::config::{AccountConfig, Rate};
use crate::model::{Action, Class};

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, StateInformationMiddleware>;

/// Which bucket refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// The account-wide bucket.
    Account,
    /// The bucket of an action class.
    Class(Class),
    /// An action's own bucket.
    Action(Action),
}

impl Layer {
    /// A short name for journals and metrics: `account`, `class:read`, `action:create`.
    pub fn name(self) -> String {
        match self {
            Layer::Account => "account".to_owned(),
            Layer::Class(class) => format!("class:{class}"),
            Layer::Action(action) => format!("action:{action}"),
        }
    }
}

/// The outcome of a rate-quota check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Let through; `limit`/`remaining` describe the request's own bucket, if it has one.
    Admit { budget: Option<Budget> },
    /// Refused by `layer`, which admits one request again after `wait`.
    Throttle {
        layer: Layer,
        budget: Budget,
        wait: Duration,
    },
}

/// A bucket's capacity and what is left of it after the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    pub limit: u32,
    pub remaining: u32,
}

struct Bucket {
    limiter: Limiter,
    layer: Layer,
}

impl Bucket {
    fn new(rate: Rate, layer: Layer, clock: TokioClock) -> Arc<Bucket> {
        let period = Duration::from_secs_f64(1.0 / rate.per_second());
        let quota = Quota::with_period(period)
            .expect("a valid rate has a non-zero period")
            .allow_burst(rate.burst());
        let limiter = RateLimiter::direct_with_clock(quota, clock)
            .with_middleware::<StateInformationMiddleware>();
        Arc::new(Bucket { limiter, layer })
    }

    fn check(&self, clock: &TokioClock) -> Result<Budget, (Layer, Budget, Duration)> {
        match self.limiter.check() {
            Ok(snapshot) => Ok(Budget {
                limit: snapshot.quota().burst_size().get(),
                remaining: snapshot.remaining_burst_capacity(),
            }),
            Err(not_until) => {
                let budget = Budget {
                    limit: NotUntil::quota(&not_until).burst_size().get(),
                    remaining: 0,
                };
                Err((self.layer, budget, not_until.wait_time_from(clock.now())))
            }
        }
    }
}

/// The buckets of one account: the account-wide one and, per action, the one it draws
/// from (shared by the actions of a class unless overridden).
struct AccountBuckets {
    account: Option<Arc<Bucket>>,
    by_action: [Option<Arc<Bucket>>; 5],
}

impl AccountBuckets {
    fn new(config: &AccountConfig, clock: TokioClock) -> AccountBuckets {
        let quotas = &config.quotas;
        let account = quotas
            .account
            .map(|rate| Bucket::new(rate, Layer::Account, clock));
        let classes: HashMap<Class, Arc<Bucket>> = quotas
            .classes
            .iter()
            .map(|(&class, &rate)| (class, Bucket::new(rate, Layer::Class(class), clock)))
            .collect();
        let by_action = Action::ALL.map(|action| match quotas.actions.get(&action) {
            Some(&rate) => Some(Bucket::new(rate, Layer::Action(action), clock)),
            None => classes.get(&action.class()).cloned(),
        });
        AccountBuckets { account, by_action }
    }
}

/// Every account's buckets.
pub(crate) struct QuotaEngine {
    clock: TokioClock,
    accounts: HashMap<String, AccountBuckets>,
}

impl QuotaEngine {
    pub fn new(accounts: &[AccountConfig], clock: TokioClock) -> QuotaEngine {
        let accounts = accounts
            .iter()
            .map(|account| (account.name.clone(), AccountBuckets::new(account, clock)))
            .collect();
        QuotaEngine { clock, accounts }
    }

    /// Checks (and on success spends) the tokens of one request of `account`.
    pub fn check(&self, account: &str, action: Action) -> Verdict {
        let Some(buckets) = self.accounts.get(account) else {
            return Verdict::Admit { budget: None };
        };
        let mut budget = None;
        for bucket in [&buckets.account, &buckets.by_action[action.index()]]
            .into_iter()
            .flatten()
        {
            match bucket.check(&self.clock) {
                Ok(b) => budget = Some(b),
                Err((layer, budget, wait)) => {
                    return Verdict::Throttle {
                        layer,
                        budget,
                        wait,
                    };
                }
            }
        }
        Verdict::Admit { budget }
    }
}

/// Whole seconds to wait, rounded up, so a client that waits that long is admitted.
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs();
    if wait.subsec_nanos() > 0 || secs == 0 {
        secs + 1
    } else {
        secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Quotas;
    use tokio::time::Instant;

    fn engine(quotas: Quotas) -> QuotaEngine {
        let account = AccountConfig::new("a").with_quotas(quotas);
        QuotaEngine::new(&[account], TokioClock::new(Instant::now()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_bucket_admits_its_burst_then_throttles_until_one_token_refills() {
        let engine = engine(Quotas::unlimited().with_class(Class::Read, Some(Rate::new(3, 2.0))));
        for remaining in [2, 1, 0] {
            let budget = Some(Budget {
                limit: 3,
                remaining,
            });
            assert_eq!(engine.check("a", Action::Get), Verdict::Admit { budget });
        }
        let Verdict::Throttle { layer, wait, .. } = engine.check("a", Action::Get) else {
            panic!("the fourth request must be throttled");
        };
        assert_eq!(layer, Layer::Class(Class::Read));
        assert_eq!(wait, Duration::from_millis(500));
        tokio::time::advance(wait).await;
        assert!(matches!(
            engine.check("a", Action::Get),
            Verdict::Admit { .. }
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn an_action_override_has_its_own_bucket_and_the_account_bucket_binds_all() {
        let quotas = Quotas::unlimited()
            .with_class(Class::Mutate, Some(Rate::new(1, 1.0)))
            .with_action(Action::Create, Some(Rate::new(1, 1.0)))
            .with_account(Some(Rate::new(3, 1.0)));
        let engine = engine(quotas);
        assert!(matches!(
            engine.check("a", Action::Create),
            Verdict::Admit { .. }
        ));
        assert!(matches!(
            engine.check("a", Action::Update),
            Verdict::Admit { .. }
        ));
        let create = engine.check("a", Action::Create);
        assert!(matches!(
            create,
            Verdict::Throttle {
                layer: Layer::Action(Action::Create),
                ..
            }
        ));
        // The refused create spent an account token (Route 53 semantics): one left.
        assert!(matches!(
            engine.check("a", Action::Get),
            Verdict::Throttle {
                layer: Layer::Account,
                ..
            }
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]

        /// Governor's GCRA, read on tokio time, is the token bucket of the spec: in any
        /// closed window of W seconds at most burst + rate·W requests pass, and a request
        /// sent after the rounded-up Retry-After of a refusal passes.
        #[test]
        fn any_window_admits_at_most_burst_plus_rate_times_its_length_and_retry_after_admits(
            burst in 1u32..40,
            per_second in 0.2f64..40.0,
            gaps_ms in proptest::collection::vec(0u64..400, 50..400),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            runtime.block_on(async {
                let rate = Rate::new(burst, per_second);
                let engine = engine(Quotas::unlimited().with_class(Class::Read, Some(rate)));
                let start = Instant::now();
                let mut admitted = Vec::new();
                for gap in &gaps_ms {
                    tokio::time::advance(Duration::from_millis(*gap)).await;
                    match engine.check("a", Action::Get) {
                        Verdict::Admit { .. } => admitted.push(start.elapsed()),
                        Verdict::Throttle { wait, .. } => {
                            let retry_after = Duration::from_secs(retry_after_secs(wait));
                            tokio::time::advance(retry_after).await;
                            let retry = engine.check("a", Action::Get);
                            assert!(matches!(retry, Verdict::Admit { .. }), "throttled after Retry-After");
                            admitted.push(start.elapsed());
                        }
                    }
                }
                for (i, first) in admitted.iter().enumerate() {
                    for (j, last) in admitted.iter().enumerate().skip(i) {
                        let window = (*last - *first).as_secs_f64();
                        let count = (j - i + 1) as f64;
                        // 1 ns of slack per period for governor's integer nanoseconds.
                        let bound = f64::from(burst) + per_second * (window + 1e-9 * count);
                        assert!(count <= bound + 1e-9, "{count} requests in {window} s > {bound}");
                    }
                }
            });
        }
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
        assert_eq!(retry_after_secs(Duration::from_millis(2001)), 3);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
    }
}
