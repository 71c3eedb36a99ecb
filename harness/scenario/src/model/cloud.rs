//! The mock cloud: accounts, quotas, latencies, injected errors, provisioning times.

use std::time::Duration;

/// Cloud action classes (quotas are per class).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum ActionClass {
    /// get
    Read,
    /// list
    List,
    /// create, update
    Mutate,
    /// delete
    Delete,
}

impl ActionClass {
    /// All classes.
    pub const ALL: [ActionClass; 4] = [
        ActionClass::Read,
        ActionClass::List,
        ActionClass::Mutate,
        ActionClass::Delete,
    ];

    /// Lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ActionClass::Read => "read",
            ActionClass::List => "list",
            ActionClass::Mutate => "mutate",
            ActionClass::Delete => "delete",
        }
    }
}

/// A value per action class.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub struct Classes<T> {
    pub read: Option<T>,
    pub list: Option<T>,
    pub mutate: Option<T>,
    pub delete: Option<T>,
}

impl<T> Default for Classes<T> {
    fn default() -> Self {
        Classes {
            read: None,
            list: None,
            mutate: None,
            delete: None,
        }
    }
}

impl<T> Classes<T> {
    /// The value of a class.
    #[must_use]
    pub fn get(&self, class: ActionClass) -> Option<&T> {
        match class {
            ActionClass::Read => self.read.as_ref(),
            ActionClass::List => self.list.as_ref(),
            ActionClass::Mutate => self.mutate.as_ref(),
            ActionClass::Delete => self.delete.as_ref(),
        }
    }
}

/// The mock cloud.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cloud {
    /// Accounts (at least one).
    pub accounts: Vec<Account>,
    /// Latency per class.
    pub latency: Classes<Latency>,
    /// Injected errors per class.
    pub errors: Classes<ErrorFault>,
    /// Provisioning times.
    pub provisioning: Provisioning,
}

impl Cloud {
    /// An account by name.
    #[must_use]
    pub fn account(&self, name: &str) -> Option<&Account> {
        self.accounts.iter().find(|a| a.name == name)
    }
}

/// A cloud account and its effective quotas.
#[derive(Clone, Debug, PartialEq)]
pub struct Account {
    /// Name.
    pub name: String,
    /// Quotas per class (cloud-wide ones with this account's overrides).
    pub quotas: Classes<Quota>,
}

/// A token-bucket quota.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quota {
    /// Bucket size b.
    pub burst: f64,
    /// Refill r per second.
    pub per_second: f64,
}

/// A latency distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    /// Always this.
    Fixed(Duration),
    /// Uniform on [min, max].
    Uniform {
        /// Shortest.
        min: Duration,
        /// Longest.
        max: Duration,
    },
    /// Log-normal.
    Lognormal {
        /// Median.
        median: Duration,
        /// Shape.
        sigma: f64,
    },
}

impl Latency {
    /// The mean.
    #[must_use]
    pub fn mean(&self) -> Duration {
        match *self {
            Latency::Fixed(d) => d,
            Latency::Uniform { min, max } => (min + max) / 2,
            Latency::Lognormal { median, sigma } => median.mul_f64((sigma * sigma / 2.0).exp()),
        }
    }
}

/// Injected errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorFault {
    /// Share of calls failed.
    pub rate: f64,
    /// Status (500 or 503).
    pub status: u16,
}

/// Provisioning times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Provisioning {
    /// A new Database is `creating` this long.
    pub database_create: Duration,
    /// A deleted Database is `deleting` this long.
    pub database_delete: Duration,
}

impl Default for Provisioning {
    fn default() -> Self {
        Provisioning {
            database_create: Duration::from_secs(5),
            database_delete: Duration::from_secs(3),
        }
    }
}
