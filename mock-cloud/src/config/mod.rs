//! The validated configuration of a [`crate::MockCloud`], with defaults.
//!
//! Build one in code (`Config::default().with_account(...)`) or load a YAML file with
//! [`Config::load`]; both end in the same validated type.

mod aws;
mod document;
mod faults;
mod faults_document;
mod load;
mod parts;
mod quotas;
mod resource_faults;
mod service_quotas;

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

pub(crate) use aws::is_account_id;
pub use aws::{AccessKey, AwsIdentity, AwsSettings, DEFAULT_ACCOUNT_ID};
pub use document::ConfigDocument;
pub use faults::{ErrorRate, Faults, Latency, OperationFaults, Outage};
pub use faults_document::FaultsDocument;
pub use quotas::{Quotas, Rate};
pub use resource_faults::{
    LastingError, ResourceEffect, ResourceFault, ResourceKind, ResourceSelector,
};
pub use service_quotas::{ClassQuota, Per, ServiceQuotas};

use crate::service::Service;

/// How throttles and count-quota rejections look on the wire; in a config document,
/// `generic`, `aws-json` or `aws-ec2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flavor {
    /// 429 with `Retry-After` and `RateLimit-*` headers; count quota 403 `QuotaExceeded`.
    #[default]
    Generic,
    /// AWS JSON services: 400 `ThrottlingException` with `x-amz-retry-after` (ms); count
    /// quota 400 `LimitExceededException`.
    AwsJson,
    /// EC2: 503 `RequestLimitExceeded` with `x-amz-retry-after` (ms); count quota 400
    /// `ResourceLimitExceeded`.
    AwsEc2,
}

/// One account: its name (the `{account}` path segment), the bearer tokens that act for
/// it, its AWS identity, and its quotas.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountConfig {
    /// The account name.
    pub name: String,
    /// Bearer tokens that authenticate as this account.
    pub tokens: Vec<String>,
    /// Its AWS account ID and access keys, if AWS requests may act as it.
    pub aws: Option<AwsIdentity>,
    /// The account's quotas.
    pub quotas: Quotas,
}

impl AccountConfig {
    /// An account with no token yet, no AWS identity and the [`Quotas::cloud_default`]
    /// quotas.
    pub fn new(name: impl Into<String>) -> AccountConfig {
        AccountConfig {
            name: name.into(),
            tokens: Vec::new(),
            aws: None,
            quotas: Quotas::cloud_default(),
        }
    }

    /// Gives the account an AWS identity.
    #[must_use]
    pub fn with_aws(mut self, aws: AwsIdentity) -> AccountConfig {
        self.aws = Some(aws);
        self
    }

    /// Adds a bearer token.
    #[must_use]
    pub fn with_token(mut self, token: impl Into<String>) -> AccountConfig {
        self.tokens.push(token.into());
        self
    }

    /// Replaces the quotas.
    #[must_use]
    pub fn with_quotas(mut self, quotas: Quotas) -> AccountConfig {
        self.quotas = quotas;
        self
    }
}

/// Everything a [`crate::MockCloud`] needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The accounts; the default is one account `default` with token `default`.
    pub accounts: Vec<AccountConfig>,
    /// How throttles look on the wire.
    pub flavor: Flavor,
    /// Shadow mode: evaluate rate quotas and record would-be throttles, but let every
    /// request through.
    pub shadow: bool,
    /// The most journal entries kept; older ones are dropped and counted.
    pub journal_cap: NonZeroUsize,
    /// How long a database stays `creating`.
    pub database_create: Duration,
    /// How long a database stays `deleting`.
    pub database_delete: Duration,
    /// Faults injected from the start.
    pub faults: Faults,
    /// Settings of the AWS endpoints.
    pub aws: AwsSettings,
}

/// The default journal cap: one million entries, 32 MB.
pub const DEFAULT_JOURNAL_CAP: usize = 1_000_000;

impl Default for Config {
    fn default() -> Config {
        Config {
            accounts: vec![
                AccountConfig::new("default")
                    .with_token("default")
                    .with_aws(AwsIdentity::default_account()),
            ],
            flavor: Flavor::Generic,
            shadow: false,
            journal_cap: NonZeroUsize::new(DEFAULT_JOURNAL_CAP).expect("non-zero constant"),
            database_create: Duration::from_secs(5),
            database_delete: Duration::from_secs(3),
            faults: Faults::none(),
            aws: AwsSettings::default(),
        }
    }
}

impl Config {
    /// A config with no account; add some with [`Config::with_account`].
    pub fn empty() -> Config {
        Config {
            accounts: Vec::new(),
            ..Config::default()
        }
    }

    /// Adds an account.
    #[must_use]
    pub fn with_account(mut self, account: AccountConfig) -> Config {
        self.accounts.push(account);
        self
    }

    /// Sets the flavor of throttle responses.
    #[must_use]
    pub fn with_flavor(mut self, flavor: Flavor) -> Config {
        self.flavor = flavor;
        self
    }

    /// Turns shadow mode on or off.
    #[must_use]
    pub fn with_shadow(mut self, shadow: bool) -> Config {
        self.shadow = shadow;
        self
    }

    /// Sets the journal cap.
    #[must_use]
    pub fn with_journal_cap(mut self, cap: NonZeroUsize) -> Config {
        self.journal_cap = cap;
        self
    }

    /// Sets how long databases take to create and to delete.
    #[must_use]
    pub fn with_provisioning(mut self, create: Duration, delete: Duration) -> Config {
        self.database_create = create;
        self.database_delete = delete;
        self
    }

    /// Sets the AWS endpoints' settings.
    #[must_use]
    pub fn with_aws(mut self, aws: AwsSettings) -> Config {
        self.aws = aws;
        self
    }

    /// Sets the faults injected from the start.
    #[must_use]
    pub fn with_faults(mut self, faults: Faults) -> Config {
        self.faults = faults;
        self
    }

    /// Checks what the types cannot: account names are unique path segments, tokens are
    /// unique, AWS account IDs are 12 digits and unique, access key IDs are unique,
    /// service quotas name the service's classes and operations, faults are in range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |problem: String| Err(ConfigError::Invalid { problem });
        let mut names = HashSet::new();
        let mut tokens = HashSet::new();
        let mut account_ids = HashSet::new();
        let mut access_keys = HashSet::new();
        for account in &self.accounts {
            if let Some(aws) = &account.aws
                && let Err(problem) = aws::check_identity(aws, &mut account_ids, &mut access_keys)
            {
                return invalid(format!("account {:?}: {problem}", account.name));
            }
            for (service, quotas) in &account.quotas.services {
                if let Err(problem) = quotas.check(*service) {
                    return invalid(format!("account {:?}: {problem}", account.name));
                }
            }
            if !is_path_segment(&account.name) {
                return invalid(format!(
                    "account name {:?} must be 1 to 64 of a-z, A-Z, 0-9, '-', '_', '.'",
                    account.name
                ));
            }
            if !names.insert(account.name.as_str()) {
                return invalid(format!("account {:?} is defined twice", account.name));
            }
            for token in &account.tokens {
                if token.is_empty() || !tokens.insert(token.as_str()) {
                    return invalid(format!(
                        "token {token:?} of account {:?} is empty or used twice",
                        account.name
                    ));
                }
            }
        }
        validate_faults(&self.faults).map_err(|problem| ConfigError::Invalid { problem })
    }
}

/// Checks probabilities, statuses and windows; the error is a sentence naming the field.
pub(crate) fn validate_faults(faults: &Faults) -> Result<(), String> {
    for (service, operations) in &faults.services {
        if *service == Service::Generic {
            return Err(
                "services.generic: the generic API's faults are latency, errors and outages".into(),
            );
        }
        for (name, op) in operations {
            let at = format!("services.{service}.{name}");
            if name != "*" && service.operation(name).is_none() {
                return Err(format!(
                    "{at}: unknown operation, expected `*` or one of {}",
                    service.operations().join(", ")
                ));
            }
            let statuses_ok = |status: u16| match op.code {
                Some(_) => (400..=599).contains(&status),
                None => matches!(status, 500 | 503),
            };
            if let Some(errors) = &op.errors {
                if !(0.0..=1.0).contains(&errors.probability) {
                    return Err(format!("{at}.errors.rate must be within 0 and 1"));
                }
                if !statuses_ok(errors.status) {
                    return Err(format!(
                        "{at}.errors.status must be 500 or 503, or 400 to 599 with a code"
                    ));
                }
            }
            if let Some(code) = &op.code
                && (code.is_empty()
                    || !code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'))
            {
                return Err(format!("{at}.code must be letters, digits and dots"));
            }
            for (i, outage) in op.outages.iter().enumerate() {
                if outage.start >= outage.end {
                    return Err(format!("{at}.outages[{i}]: start must be before end"));
                }
                if !statuses_ok(outage.status) {
                    return Err(format!(
                        "{at}.outages[{i}].status must be 500 or 503, or 400 to 599 with a code"
                    ));
                }
            }
            check_latency(&at, op.latency.as_ref())?;
        }
    }
    for (class, errors) in &faults.errors {
        if !(0.0..=1.0).contains(&errors.probability) {
            return Err(format!("errors.{class}.rate must be within 0 and 1"));
        }
        if !matches!(errors.status, 500 | 503) {
            return Err(format!("errors.{class}.status must be 500 or 503"));
        }
    }
    for (class, latency) in &faults.latency {
        check_latency(&format!("latency.{class}"), Some(latency))?;
    }
    for (i, rule) in faults.resources.iter().enumerate() {
        if let Some(p) = rule.select.percent
            && !(0.0..=100.0).contains(&p)
        {
            return Err(format!("resources[{i}].percent must be within 0 and 100"));
        }
        if rule.select.name.as_deref() == Some("") {
            return Err(format!("resources[{i}].name must not be empty"));
        }
        if rule.select.collection == Some(ResourceKind::S3Buckets)
            && matches!(rule.effect, ResourceEffect::SlowCreate { .. })
        {
            return Err(format!(
                "resources[{i}]: slow_create_s cannot select s3/buckets: S3 has no creating state (a bucket exists once CreateBucket answers); use not_found_after_create_s for a bucket that reads as absent after its create"
            ));
        }
        if let ResourceEffect::Error {
            code: Some(code), ..
        } = &rule.effect
            && (code.is_empty() || !code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.'))
        {
            return Err(format!(
                "resources[{i}].code must be letters, digits and dots"
            ));
        }
    }
    for (i, outage) in faults.outages.iter().enumerate() {
        if outage.start >= outage.end {
            return Err(format!("outages[{i}]: start must be before end"));
        }
        if !matches!(outage.status, 500 | 503) {
            return Err(format!("outages[{i}].status must be 500 or 503"));
        }
    }
    Ok(())
}

fn check_latency(at: &str, latency: Option<&Latency>) -> Result<(), String> {
    match latency {
        Some(Latency::Uniform { min, max }) if min > max => {
            Err(format!("{at}.uniform_ms: min is above max"))
        }
        Some(Latency::LogNormal { sigma, .. }) if !(sigma.is_finite() && *sigma >= 0.0) => {
            Err(format!("{at}.lognormal_ms.sigma must be >= 0"))
        }
        _ => Ok(()),
    }
}

/// Whether `s` can be an account name: a path segment with no escaping needed.
pub(crate) fn is_path_segment(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A config that cannot be read, parsed or validated.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The YAML is malformed, has an unknown key or a value out of range.
    #[error("invalid config {file}:{line}:{column}: {message}")]
    Parse {
        /// The file name, as given.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// The parser's message, without the location.
        message: String,
    },
    /// The config parsed but is inconsistent.
    #[error("invalid config: {problem}")]
    Invalid {
        /// What is wrong.
        problem: String,
    },
    /// The config file has a problem at a known place that the parser could not see.
    #[error("invalid config {file}:{line}:{column}: {problem}")]
    InvalidAt {
        /// The file name, as given.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong.
        problem: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_config_has_one_account_named_default_with_token_default() {
        let config = Config::default();
        assert_eq!(config.accounts.len(), 1);
        assert_eq!(config.accounts[0].name, "default");
        assert_eq!(config.accounts[0].tokens, ["default"]);
        config.validate().expect("the default config is valid");
    }

    #[test]
    fn validation_rejects_a_token_used_by_two_accounts() {
        let config = Config::empty()
            .with_account(AccountConfig::new("a").with_token("t"))
            .with_account(AccountConfig::new("b").with_token("t"));
        let err = config.validate().unwrap_err().to_string();
        assert!(err.contains("used twice"), "{err}");
    }

    #[test]
    fn validation_rejects_account_names_that_are_not_path_segments() {
        for name in ["", "a/b", "a b", "ü"] {
            let config = Config::empty().with_account(AccountConfig::new(name));
            assert!(config.validate().is_err(), "{name:?}");
        }
    }

    #[test]
    fn validation_rejects_an_error_rate_above_one_and_odd_statuses() {
        let bad_rate = Faults::none().with_errors(
            crate::Class::Read,
            ErrorRate {
                probability: 1.5,
                status: 503,
            },
        );
        assert!(
            validate_faults(&bad_rate)
                .unwrap_err()
                .contains("errors.read.rate")
        );
        let bad_status = Faults::none().with_outage(Outage {
            start: Duration::ZERO,
            end: Duration::from_secs(1),
            status: 404,
        });
        assert!(validate_faults(&bad_status).unwrap_err().contains("status"));
    }
}
