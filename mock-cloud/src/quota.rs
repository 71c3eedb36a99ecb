//! Rate quotas: governor token buckets per account, per class or action, and account-wide,
//! and for AWS services per service, class, operation or resource, read on tokio time.
//!
//! # Semantics
//! A generic API request draws one token from the account-wide bucket (if configured),
//! then one from its action's own bucket if it has an override, else from its class's
//! bucket (if configured). An AWS request draws from the account-wide bucket, then the
//! service-wide bucket, then its operation's own bucket if it has one, else its class's:
//! the class's one bucket, the operation's bucket of the class's size, or the resource's
//! (see [`crate::Per`]). It is throttled if any is empty, as Route 53 does; a request
//! throttled by a later bucket has still spent its tokens from the earlier ones. A
//! throttled request spends nothing from the bucket that refused it.
//!
//! The wait reported is the exact time until that bucket admits one request, which the
//! HTTP layer rounds up to whole seconds for `Retry-After`.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::StateInformationMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{NotUntil, Quota, RateLimiter};

use crate::FastMap;
use crate::clock::TokioClock;
use crate::config::{AccountConfig, Per, Rate, ServiceQuotas};
use crate::model::{Action, Class};
use crate::service::{Operation, Service};

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
    /// An AWS service's service-wide bucket.
    Service(Service),
    /// A bucket of an AWS service's quota class (the class's, one of its operations', or
    /// one of its resources').
    ServiceClass(Service, u8),
    /// An AWS operation's own bucket.
    Operation(Operation),
}

impl Layer {
    /// A short name for journals and metrics: `account`, `class:read`, `action:create`,
    /// `service:s3`, `s3:class:read`, `s3:operation:HeadBucket`.
    pub fn name(self) -> String {
        match self {
            Layer::Account => "account".to_owned(),
            Layer::Class(class) => format!("class:{class}"),
            Layer::Action(action) => format!("action:{action}"),
            Layer::Service(service) => format!("service:{service}"),
            Layer::ServiceClass(service, class) => format!(
                "{service}:class:{}",
                service
                    .classes()
                    .get(usize::from(class))
                    .copied()
                    .unwrap_or("")
            ),
            Layer::Operation(op) => format!("{}:operation:{}", op.service(), op.name()),
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
/// from (shared by the actions of a class unless overridden); per AWS service, its own.
struct AccountBuckets {
    account: Option<Arc<Bucket>>,
    by_action: [Option<Arc<Bucket>>; 5],
    services: FastMap<Service, ServiceBuckets>,
}

/// The buckets of one AWS service in one account.
struct ServiceBuckets {
    service: Option<Arc<Bucket>>,
    /// Per operation index: its own bucket, if it has one.
    operations: Vec<Option<Arc<Bucket>>>,
    /// Per class index.
    classes: Vec<Option<ClassBuckets>>,
}

enum ClassBuckets {
    Shared(Arc<Bucket>),
    /// One per operation index.
    PerOperation(Vec<Arc<Bucket>>),
    /// One per resource, made on first use.
    PerResource {
        rate: Rate,
        layer: Layer,
        buckets: RwLock<FastMap<Box<str>, Arc<Bucket>>>,
    },
}

/// At most this many resources have a bucket of their own per class; past it, the
/// buckets start afresh (a resource then gets a full bucket again).
const MAX_RESOURCE_BUCKETS: usize = 100_000;

impl ServiceBuckets {
    fn new(service: Service, quotas: &ServiceQuotas, clock: TokioClock) -> ServiceBuckets {
        let operations = (0..service.operations().len())
            .map(|i| {
                let op = Operation::new(service, i as u8);
                quotas
                    .operations
                    .get(op.name())
                    .map(|&rate| Bucket::new(rate, Layer::Operation(op), clock))
            })
            .collect();
        let classes = service
            .classes()
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let quota = quotas.classes.get(*name)?;
                let layer = Layer::ServiceClass(service, i as u8);
                Some(match quota.per {
                    Per::Class => ClassBuckets::Shared(Bucket::new(quota.rate, layer, clock)),
                    Per::Operation => ClassBuckets::PerOperation(
                        (0..service.operations().len())
                            .map(|_| Bucket::new(quota.rate, layer, clock))
                            .collect(),
                    ),
                    Per::Resource => ClassBuckets::PerResource {
                        rate: quota.rate,
                        layer,
                        buckets: RwLock::new(FastMap::default()),
                    },
                })
            })
            .collect();
        ServiceBuckets {
            service: quotas
                .service
                .map(|rate| Bucket::new(rate, Layer::Service(service), clock)),
            operations,
            classes,
        }
    }

    /// The bucket a request of `op` in `class` on `resource` draws from after the
    /// service-wide one.
    fn bucket(
        &self,
        op: Operation,
        class: u8,
        resource: &str,
        clock: TokioClock,
    ) -> Option<Arc<Bucket>> {
        if let Some(Some(own)) = self.operations.get(usize::from(op.index())) {
            return Some(own.clone());
        }
        match self.classes.get(usize::from(class))?.as_ref()? {
            ClassBuckets::Shared(bucket) => Some(bucket.clone()),
            ClassBuckets::PerOperation(buckets) => buckets.get(usize::from(op.index())).cloned(),
            ClassBuckets::PerResource {
                rate,
                layer,
                buckets,
            } => {
                if let Some(bucket) = buckets.read().get(resource) {
                    return Some(bucket.clone());
                }
                let mut buckets = buckets.write();
                if buckets.len() >= MAX_RESOURCE_BUCKETS {
                    buckets.clear();
                }
                Some(
                    buckets
                        .entry(Box::from(resource))
                        .or_insert_with(|| Bucket::new(*rate, *layer, clock))
                        .clone(),
                )
            }
        }
    }
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
        let services = quotas
            .services
            .iter()
            .map(|(&service, q)| (service, ServiceBuckets::new(service, q, clock)))
            .collect();
        AccountBuckets {
            account,
            by_action,
            services,
        }
    }
}

/// Every account's buckets.
pub(crate) struct QuotaEngine {
    clock: TokioClock,
    accounts: FastMap<String, AccountBuckets>,
}

impl QuotaEngine {
    pub fn new(accounts: &[AccountConfig], clock: TokioClock) -> QuotaEngine {
        let accounts = accounts
            .iter()
            .map(|account| (account.name.clone(), AccountBuckets::new(account, clock)))
            .collect();
        QuotaEngine { clock, accounts }
    }

    /// Checks (and on success spends) the tokens of one generic API request of `account`.
    pub fn check(&self, account: &str, action: Action) -> Verdict {
        let Some(buckets) = self.accounts.get(account) else {
            return Verdict::Admit { budget: None };
        };
        Self::draw(
            &self.clock,
            [&buckets.account, &buckets.by_action[action.index()]],
        )
    }

    /// Checks (and on success spends) the tokens of one AWS request of `account`: its
    /// operation, its quota class and the resource it addresses (for per-resource
    /// classes).
    pub fn check_aws(&self, account: &str, op: Operation, class: u8, resource: &str) -> Verdict {
        let Some(buckets) = self.accounts.get(account) else {
            return Verdict::Admit { budget: None };
        };
        let Some(service) = buckets.services.get(&op.service()) else {
            return Self::draw(&self.clock, [&buckets.account]);
        };
        let own = service.bucket(op, class, resource, self.clock);
        Self::draw(&self.clock, [&buckets.account, &service.service, &own])
    }

    fn draw<const N: usize>(clock: &TokioClock, chain: [&Option<Arc<Bucket>>; N]) -> Verdict {
        let mut budget = None;
        for bucket in chain.into_iter().flatten() {
            match bucket.check(clock) {
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

    #[tokio::test(start_paused = true)]
    async fn aws_classes_count_per_resource_per_operation_or_shared_and_overrides_win() {
        use crate::config::ClassQuota;
        use crate::service::S3Operation;
        let s3 = ServiceQuotas::new()
            .with_class(
                "read",
                Some(ClassQuota::new(Rate::new(1, 1.0), Per::Resource)),
            )
            .with_class(
                "write",
                Some(ClassQuota::new(Rate::new(1, 1.0), Per::Operation)),
            )
            .with_operation("ListBuckets", Some(Rate::new(2, 1.0)));
        let engine = engine(Quotas::unlimited().with_service(Service::S3, Some(s3)));
        let head = Operation::from(S3Operation::HeadBucket);
        let get = Operation::from(S3Operation::GetBucketTagging);
        let admit = |v: Verdict| matches!(v, Verdict::Admit { .. });
        // Per resource: bucket a and bucket b each have their own read bucket, shared by
        // the read operations on them.
        assert!(admit(engine.check_aws("a", head, 0, "a")));
        assert!(admit(engine.check_aws("a", head, 0, "b")));
        let refused = engine.check_aws("a", get, 0, "a");
        assert!(matches!(
            refused,
            Verdict::Throttle {
                layer: Layer::ServiceClass(Service::S3, 0),
                ..
            }
        ));
        assert_eq!(Layer::ServiceClass(Service::S3, 0).name(), "s3:class:read");
        // Per operation: each write operation has its own bucket.
        let put = Operation::from(S3Operation::PutBucketTagging);
        let delete = Operation::from(S3Operation::DeleteBucketTagging);
        assert!(admit(engine.check_aws("a", put, 1, "a")));
        assert!(admit(engine.check_aws("a", delete, 1, "a")));
        assert!(!admit(engine.check_aws("a", put, 1, "b")));
        // An operation's own bucket replaces its class's.
        let list = Operation::from(S3Operation::ListBuckets);
        assert!(admit(engine.check_aws("a", list, 0, "")));
        assert!(admit(engine.check_aws("a", list, 0, "")));
        let third = engine.check_aws("a", list, 0, "");
        assert!(matches!(
            third,
            Verdict::Throttle {
                layer: Layer::Operation(_),
                ..
            }
        ));
        assert_eq!(Layer::Operation(list).name(), "s3:operation:ListBuckets");
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
