//! Quota settings: token-bucket rates and count limits, with defaults modelled on real clouds.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use serde::{Deserialize, Serialize};

use super::ServiceQuotas;
use crate::model::{Action, Class, Collection};
use crate::service::Service;

/// A token bucket: `burst` tokens at most, refilled continuously at `per_second` tokens a
/// second (EC2's "bucket max" and "refill rate"). In a config document,
/// `{burst: 10, per_second: 2}`, checked as [`Rate::try_new`] does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RateFields", into = "RateFields")]
pub struct Rate {
    burst: NonZeroU32,
    per_second: f64,
}

/// A rate as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RateFields {
    burst: u32,
    per_second: f64,
}

impl TryFrom<RateFields> for Rate {
    type Error = String;

    fn try_from(fields: RateFields) -> Result<Rate, String> {
        Rate::try_new(fields.burst, fields.per_second).ok_or_else(|| {
            format!(
                "a rate needs burst >= 1 and per_second from 1/86400 to 1e9, got burst {} and per_second {}",
                fields.burst, fields.per_second
            )
        })
    }
}

impl From<Rate> for RateFields {
    fn from(rate: Rate) -> RateFields {
        RateFields {
            burst: rate.burst.get(),
            per_second: rate.per_second,
        }
    }
}

impl Rate {
    /// The slowest refill: one token a day.
    pub const MIN_PER_SECOND: f64 = 1.0 / 86_400.0;
    /// The fastest refill: one token a nanosecond (the buckets count in nanoseconds).
    pub const MAX_PER_SECOND: f64 = 1e9;

    /// A bucket of `burst` tokens refilled at `per_second`, or `None` if `burst` is zero or
    /// `per_second` is outside [`Rate::MIN_PER_SECOND`]..=[`Rate::MAX_PER_SECOND`].
    pub fn try_new(burst: u32, per_second: f64) -> Option<Rate> {
        let burst = NonZeroU32::new(burst)?;
        let valid = (Rate::MIN_PER_SECOND..=Rate::MAX_PER_SECOND).contains(&per_second);
        valid.then_some(Rate { burst, per_second })
    }

    /// A bucket of `burst` tokens refilled at `per_second`.
    ///
    /// # Panics
    /// If [`Rate::try_new`] would return `None`; use that for untrusted input.
    pub fn new(burst: u32, per_second: f64) -> Rate {
        Rate::try_new(burst, per_second)
            .unwrap_or_else(|| panic!("invalid rate: burst {burst}, {per_second}/s"))
    }

    /// The bucket's capacity.
    pub fn burst(&self) -> NonZeroU32 {
        self.burst
    }

    /// The refill rate in tokens a second.
    pub fn per_second(&self) -> f64 {
        self.per_second
    }
}

/// The quotas of one account.
///
/// A request passes the account-wide bucket (if any), then the bucket of its action if
/// there is an override, else the bucket of its class (if any). A class or count that is
/// absent from the maps is unlimited.
#[derive(Debug, Clone, PartialEq)]
pub struct Quotas {
    /// One bucket shared by every request of the account (Route 53's account bucket).
    pub account: Option<Rate>,
    /// A bucket per action class.
    pub classes: BTreeMap<Class, Rate>,
    /// Actions with a bucket of their own instead of their class's (EC2's uncategorized APIs).
    pub actions: BTreeMap<Action, Rate>,
    /// The most live resources per collection, counting ones still creating or deleting.
    pub counts: BTreeMap<Collection, u32>,
    /// The rate quotas of AWS services (the generic API's are the fields above).
    pub services: BTreeMap<Service, ServiceQuotas>,
}

impl Quotas {
    /// Defaults modelled on real clouds: reads 100/20 per second (EC2 non-mutating), lists
    /// 50/10 (EC2 unpaginated describes), mutations 50/5 (EC2 mutating), deletes 200/10 (ARM
    /// deletes); no account-wide bucket; at most 100 buckets, 40 databases and 10,000 records.
    /// AWS services: S3's per-prefix rates ([`ServiceQuotas::s3_default`]), EC2's request
    /// tokens ([`ServiceQuotas::ec2_default`]); STS and DynamoDB unlimited.
    pub fn cloud_default() -> Quotas {
        Quotas {
            account: None,
            classes: BTreeMap::from([
                (Class::Read, Rate::new(100, 20.0)),
                (Class::List, Rate::new(50, 10.0)),
                (Class::Mutate, Rate::new(50, 5.0)),
                (Class::Delete, Rate::new(200, 10.0)),
            ]),
            actions: BTreeMap::new(),
            counts: BTreeMap::from([
                (Collection::Buckets, 100),
                (Collection::Databases, 40),
                (Collection::Records, 10_000),
            ]),
            services: BTreeMap::from([
                (Service::S3, ServiceQuotas::s3_default()),
                (Service::Ec2, ServiceQuotas::ec2_default()),
            ]),
        }
    }

    /// No limits at all.
    pub fn unlimited() -> Quotas {
        Quotas {
            account: None,
            classes: BTreeMap::new(),
            actions: BTreeMap::new(),
            counts: BTreeMap::new(),
            services: BTreeMap::new(),
        }
    }

    /// Sets (or with `None` lifts) the account-wide bucket.
    #[must_use]
    pub fn with_account(mut self, rate: Option<Rate>) -> Quotas {
        self.account = rate;
        self
    }

    /// Sets (or with `None` lifts) the bucket of a class.
    #[must_use]
    pub fn with_class(mut self, class: Class, rate: Option<Rate>) -> Quotas {
        match rate {
            Some(rate) => self.classes.insert(class, rate),
            None => self.classes.remove(&class),
        };
        self
    }

    /// Gives an action its own bucket (or with `None` sends it back to its class's bucket).
    #[must_use]
    pub fn with_action(mut self, action: Action, rate: Option<Rate>) -> Quotas {
        match rate {
            Some(rate) => self.actions.insert(action, rate),
            None => self.actions.remove(&action),
        };
        self
    }

    /// Sets (or with `None` lifts) the count quota of a collection.
    #[must_use]
    pub fn with_count(mut self, collection: Collection, limit: Option<u32>) -> Quotas {
        match limit {
            Some(limit) => self.counts.insert(collection, limit),
            None => self.counts.remove(&collection),
        };
        self
    }

    /// Sets (or with `None` lifts) the quotas of an AWS service.
    #[must_use]
    pub fn with_service(mut self, service: Service, quotas: Option<ServiceQuotas>) -> Quotas {
        match quotas {
            Some(quotas) => self.services.insert(service, quotas),
            None => self.services.remove(&service),
        };
        self
    }

    /// The bucket an action draws from besides the account-wide one, if any.
    pub fn bucket_for(&self, action: Action) -> Option<Rate> {
        self.actions
            .get(&action)
            .or_else(|| self.classes.get(&action.class()))
            .copied()
    }
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas::cloud_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_needs_a_positive_burst_and_refill() {
        assert!(Rate::try_new(0, 1.0).is_none());
        assert!(Rate::try_new(1, 0.0).is_none());
        assert!(Rate::try_new(1, f64::NAN).is_none());
        assert!(Rate::try_new(1, f64::INFINITY).is_none());
        assert!(Rate::try_new(1, 1e10).is_none());
        assert!(Rate::try_new(u32::MAX, 1e9).is_some());
        assert_eq!(Rate::new(100, 20.0).burst().get(), 100);
    }

    #[test]
    fn an_action_override_replaces_its_class_bucket() {
        let quotas = Quotas::cloud_default().with_action(Action::Create, Some(Rate::new(5, 2.0)));
        assert_eq!(quotas.bucket_for(Action::Create), Some(Rate::new(5, 2.0)));
        assert_eq!(quotas.bucket_for(Action::Update), Some(Rate::new(50, 5.0)));
        assert_eq!(Quotas::unlimited().bucket_for(Action::Get), None);
    }
}
