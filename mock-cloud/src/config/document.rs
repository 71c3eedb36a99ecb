//! The config document: the `--config` file and the body of `PUT /admin/v1/config`, as
//! serde structs that reject unknown keys. [`Config::from_yaml`] and `Config::try_from`
//! read it (see `load.rs`); `ConfigDocument::from(&config)` writes a config as one.

use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};

use super::faults_document::FaultsDocument;
use super::parts::{ByClass, millis};
use super::{AccountConfig, Config, Flavor, Quotas, Rate};
use crate::model::{Action, Collection};

/// A whole config as written: the `--config` file (YAML) and the body of
/// `PUT /admin/v1/config` (YAML or JSON).
///
/// Every key is optional; keys not set keep their defaults, and `quotas` blocks override
/// the quotas below them key by key. Unknown keys are errors. Durations are whole
/// milliseconds (`provisioning`, latency) or seconds as a number (outage windows).
///
/// The document is the wire form of a [`Config`]: make one with
/// `ConfigDocument::from(&config)` (which writes every account's quotas in full, so the
/// defaults of the reader do not matter; durations finer than a millisecond are
/// truncated) and read one with `Config::try_from(document)` or [`Config::from_yaml`].
///
/// ```
/// use mock_cloud::admin::ConfigDocument;
/// use mock_cloud::{AccountConfig, Config};
///
/// let config = Config::empty().with_account(AccountConfig::new("acme").with_token("t"));
/// let json = serde_json::to_string(&ConfigDocument::from(&config)).unwrap();
/// let back: ConfigDocument = serde_json::from_str(&json).unwrap();
/// assert_eq!(Config::try_from(back).unwrap(), config);
/// assert_eq!(Config::from_yaml(&json, "json").unwrap(), config);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigDocument {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) flavor: Option<Flavor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) shadow: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) journal_cap: Option<NonZeroUsize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) provisioning: Option<ProvisioningDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) quotas: Option<QuotasDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) accounts: Option<Vec<AccountDoc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) faults: Option<Spanned<FaultsDocument>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProvisioningDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_create_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_delete_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AccountDoc {
    pub name: Spanned<String>,
    #[serde(default)]
    pub tokens: Vec<Spanned<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quotas: Option<QuotasDoc>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QuotasDoc {
    /// Start from no limits at all instead of the quotas this block overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlimited: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<ByClass<Rate>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<ActionsDoc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<CountsDoc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ActionsDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub create: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<Rate>,
}

impl ActionsDoc {
    fn entries(&self) -> [(Action, Option<Rate>); 5] {
        [
            (Action::Create, self.create),
            (Action::Get, self.get),
            (Action::Update, self.update),
            (Action::Delete, self.delete),
            (Action::List, self.list),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CountsDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buckets: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub databases: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub records: Option<u32>,
}

impl CountsDoc {
    fn entries(&self) -> [(Collection, Option<u32>); 3] {
        [
            (Collection::Buckets, self.buckets),
            (Collection::Databases, self.databases),
            (Collection::Records, self.records),
        ]
    }
}

impl QuotasDoc {
    /// Applies every key that is set over `quotas`; keys not set keep their value.
    pub fn apply_to(&self, quotas: &mut Quotas) {
        if self.unlimited == Some(true) {
            *quotas = Quotas::unlimited();
        }
        if let Some(rate) = self.account {
            quotas.account = Some(rate);
        }
        if let Some(classes) = &self.classes {
            for (class, rate) in classes.entries() {
                quotas.classes.insert(class, rate);
            }
        }
        if let Some(actions) = &self.actions {
            for (action, rate) in actions.entries() {
                if let Some(rate) = rate {
                    quotas.actions.insert(action, rate);
                }
            }
        }
        if let Some(counts) = &self.counts {
            for (collection, limit) in counts.entries() {
                if let Some(limit) = limit {
                    quotas.counts.insert(collection, limit);
                }
            }
        }
    }

    /// `quotas` in full: unlimited, then every bucket and count it has.
    fn exactly(quotas: &Quotas) -> QuotasDoc {
        let action = |action| quotas.actions.get(&action).copied();
        let count = |collection| quotas.counts.get(&collection).copied();
        QuotasDoc {
            unlimited: Some(true),
            account: quotas.account,
            classes: ByClass::from_map(&quotas.classes, |rate| *rate),
            actions: (!quotas.actions.is_empty()).then(|| ActionsDoc {
                create: action(Action::Create),
                get: action(Action::Get),
                update: action(Action::Update),
                delete: action(Action::Delete),
                list: action(Action::List),
            }),
            counts: (!quotas.counts.is_empty()).then(|| CountsDoc {
                buckets: count(Collection::Buckets),
                databases: count(Collection::Databases),
                records: count(Collection::Records),
            }),
        }
    }
}

/// A value written by a program rather than read from a file: it has no location.
pub(super) fn unplaced<T>(value: T) -> Spanned<T> {
    Spanned::new(value, Location::UNKNOWN, Location::UNKNOWN)
}

impl From<&AccountConfig> for AccountDoc {
    fn from(account: &AccountConfig) -> AccountDoc {
        AccountDoc {
            name: unplaced(account.name.clone()),
            tokens: account.tokens.iter().cloned().map(unplaced).collect(),
            quotas: Some(QuotasDoc::exactly(&account.quotas)),
        }
    }
}

impl From<&Config> for ConfigDocument {
    /// Every setting of `config`, each account's quotas in full.
    fn from(config: &Config) -> ConfigDocument {
        ConfigDocument {
            flavor: Some(config.flavor),
            shadow: Some(config.shadow),
            journal_cap: Some(config.journal_cap),
            provisioning: Some(ProvisioningDoc {
                database_create_ms: Some(millis(config.database_create)),
                database_delete_ms: Some(millis(config.database_delete)),
            }),
            quotas: None,
            accounts: Some(config.accounts.iter().map(AccountDoc::from).collect()),
            faults: Some(unplaced(FaultsDocument::from(&config.faults))),
        }
    }
}
