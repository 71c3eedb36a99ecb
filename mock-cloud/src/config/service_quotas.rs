//! Rate quotas of an AWS service: a service-wide bucket, buckets per quota class (shared by
//! the class, one per operation, or one per resource) and per-operation overrides.

use std::collections::BTreeMap;

use super::Rate;
use crate::service::Service;

/// What a class's rate is counted over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// One bucket shared by every operation of the class (EC2's categories as its older
    /// documentation reads).
    #[default]
    Class,
    /// Each operation of the class has a bucket of its own of this size (EC2's current
    /// text: "each API is evaluated individually").
    Operation,
    /// Each resource has a bucket of its own, shared by the class's operations on it (S3's
    /// per-prefix rates: the bucket for bucket operations, the bucket and the key's
    /// directory for object operations).
    Resource,
}

/// A class's rate and what it is counted over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassQuota {
    /// The token bucket.
    pub rate: Rate,
    /// Shared by the class, per operation, or per resource.
    pub per: Per,
}

impl ClassQuota {
    /// A bucket of `rate` per `per`.
    pub fn new(rate: Rate, per: Per) -> ClassQuota {
        ClassQuota { rate, per }
    }
}

/// The rate quotas of one AWS service in one account.
///
/// A request draws from the account-wide bucket (see [`super::Quotas::account`]), then
/// from the service-wide bucket (if any), then from its operation's own bucket if it has
/// one, else from its class's (if any). Class and operation names are the service's (see
/// [`Service::classes`] and [`Service::operations`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServiceQuotas {
    /// One bucket for every request to the service.
    pub service: Option<Rate>,
    /// Buckets per quota class.
    pub classes: BTreeMap<String, ClassQuota>,
    /// Operations with a bucket of their own instead of their class's.
    pub operations: BTreeMap<String, Rate>,
}

impl ServiceQuotas {
    /// No limits.
    pub fn new() -> ServiceQuotas {
        ServiceQuotas::default()
    }

    /// S3's documented request rates: per prefix, 5,500 GET/HEAD and 3,500
    /// PUT/COPY/POST/DELETE requests a second (burst: one second's worth).
    pub fn s3_default() -> ServiceQuotas {
        ServiceQuotas::new()
            .with_class(
                "read",
                Some(ClassQuota::new(Rate::new(5_500, 5_500.0), Per::Resource)),
            )
            .with_class(
                "write",
                Some(ClassQuota::new(Rate::new(3_500, 3_500.0), Per::Resource)),
            )
    }

    /// EC2's request-token buckets (cloud.md §1.1), each action with a bucket of its own
    /// as the current documentation reads ("each API is evaluated individually"): the
    /// non-mutating category (`Describe*`) 100 tokens refilled at 20 a second, the
    /// mutating category 50 at 5; CreateTags and DeleteTags, uncategorized, 100 at 10.
    pub fn ec2_default() -> ServiceQuotas {
        ServiceQuotas::new()
            .with_class(
                "non-mutating",
                Some(ClassQuota::new(Rate::new(100, 20.0), Per::Operation)),
            )
            .with_class(
                "mutating",
                Some(ClassQuota::new(Rate::new(50, 5.0), Per::Operation)),
            )
            .with_operation("CreateTags", Some(Rate::new(100, 10.0)))
            .with_operation("DeleteTags", Some(Rate::new(100, 10.0)))
    }

    /// Sets (or with `None` lifts) the service-wide bucket.
    #[must_use]
    pub fn with_service(mut self, rate: Option<Rate>) -> ServiceQuotas {
        self.service = rate;
        self
    }

    /// Sets (or with `None` lifts) the bucket of a class.
    #[must_use]
    pub fn with_class(mut self, class: &str, quota: Option<ClassQuota>) -> ServiceQuotas {
        match quota {
            Some(quota) => self.classes.insert(class.to_owned(), quota),
            None => self.classes.remove(class),
        };
        self
    }

    /// Gives an operation its own bucket (or with `None` sends it back to its class's).
    #[must_use]
    pub fn with_operation(mut self, operation: &str, rate: Option<Rate>) -> ServiceQuotas {
        match rate {
            Some(rate) => self.operations.insert(operation.to_owned(), rate),
            None => self.operations.remove(operation),
        };
        self
    }

    /// Checks the class and operation names against the service's; the error names the
    /// offending key.
    pub(crate) fn check(&self, service: Service) -> Result<(), String> {
        if service == Service::Generic {
            return Err(
                "quotas.services.generic: the generic API's quotas are quotas.classes and quotas.actions"
                    .to_owned(),
            );
        }
        for class in self.classes.keys() {
            if service.class(class).is_none() {
                return Err(format!(
                    "quotas.services.{service}.classes: unknown class `{class}`, expected one of {}",
                    service.classes().join(", ")
                ));
            }
        }
        for operation in self.operations.keys() {
            if service.operation(operation).is_none() {
                return Err(format!(
                    "quotas.services.{service}.operations: unknown operation `{operation}`, expected one of {}",
                    service.operations().join(", ")
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_classes_and_operations_are_named() {
        assert!(ServiceQuotas::s3_default().check(Service::S3).is_ok());
        assert!(ServiceQuotas::ec2_default().check(Service::Ec2).is_ok());
        let bad = ServiceQuotas::new()
            .with_class("list", Some(ClassQuota::new(Rate::new(1, 1.0), Per::Class)));
        assert!(
            bad.check(Service::S3)
                .unwrap_err()
                .contains("unknown class `list`")
        );
        let bad = ServiceQuotas::new().with_operation("CreateVpc", Some(Rate::new(1, 1.0)));
        assert!(
            bad.check(Service::S3)
                .unwrap_err()
                .contains("unknown operation `CreateVpc`")
        );
        assert!(ServiceQuotas::new().check(Service::Generic).is_err());
    }
}
