//! The config document: the `--config` file and the body of `PUT /admin/v1/config`, as
//! serde structs that reject unknown keys. [`Config::from_yaml`] and `Config::try_from`
//! read it (see `load.rs`); `ConfigDocument::from(&config)` writes a config as one.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;

use serde::{Deserialize, Serialize};
use serde_saphyr::{Location, Spanned};

use super::faults_document::FaultsDocument;
use super::parts::{ByClass, millis};
use super::{
    AccessKey, AccountConfig, AwsIdentity, AwsSettings, ClassQuota, Config, Flavor, Per, Quotas,
    Rate, ServiceQuotas,
};
use crate::model::{Action, Collection};
use crate::service::Service;

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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) aws: Option<AwsDoc>,
}

/// The cloud-wide AWS settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AwsDoc {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_clock_skew_s: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_header: Option<bool>,
}

impl AwsDoc {
    pub fn apply_to(&self, settings: &mut AwsSettings) {
        if let Some(s) = self.max_clock_skew_s {
            settings.max_clock_skew = std::time::Duration::from_secs(s);
        }
        if let Some(r) = self.retry_after_header {
            settings.retry_after_header = r;
        }
    }
}

/// An account's AWS identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AwsIdentityDoc {
    pub account_id: Spanned<String>,
    #[serde(default)]
    pub access_keys: Vec<AccessKeyDoc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AccessKeyDoc {
    pub id: Spanned<String>,
    pub secret: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// One AWS service's quotas.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ServiceQuotasDoc {
    /// Start from no limits instead of the quotas this block overrides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlimited: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<Rate>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub classes: BTreeMap<String, ClassQuotaDoc>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub operations: BTreeMap<String, Rate>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClassQuotaDoc {
    pub burst: u32,
    pub per_second: f64,
    #[serde(default)]
    pub per: Per,
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
    pub aws: Option<AwsIdentityDoc>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<Spanned<BTreeMap<Service, ServiceQuotasDoc>>>,
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
    /// Applies every key that is set over `quotas`; keys not set keep their value. A
    /// problem with the `services` block comes back with that block's place.
    pub fn apply_to(&self, quotas: &mut Quotas) -> Result<(), (Location, String)> {
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
        if let Some(services) = &self.services {
            for (service, doc) in &services.value {
                let current = quotas.services.entry(*service).or_default();
                doc.apply_to(current)
                    .map_err(|problem| (services.referenced, problem))?;
                current
                    .check(*service)
                    .map_err(|problem| (services.referenced, problem))?;
            }
        }
        Ok(())
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
            services: (!quotas.services.is_empty()).then(|| {
                unplaced(
                    quotas
                        .services
                        .iter()
                        .map(|(service, q)| (*service, ServiceQuotasDoc::exactly(q)))
                        .collect(),
                )
            }),
        }
    }
}

impl ServiceQuotasDoc {
    fn apply_to(&self, quotas: &mut ServiceQuotas) -> Result<(), String> {
        if self.unlimited == Some(true) {
            *quotas = ServiceQuotas::new();
        }
        if let Some(rate) = self.service {
            quotas.service = Some(rate);
        }
        for (class, doc) in &self.classes {
            let rate = Rate::try_new(doc.burst, doc.per_second).ok_or_else(|| {
                format!(
                    "classes.{class}: a rate needs burst >= 1 and per_second from 1/86400 to 1e9, got burst {} and per_second {}",
                    doc.burst, doc.per_second
                )
            })?;
            quotas
                .classes
                .insert(class.clone(), ClassQuota::new(rate, doc.per));
        }
        for (operation, rate) in &self.operations {
            quotas.operations.insert(operation.clone(), *rate);
        }
        Ok(())
    }

    fn exactly(quotas: &ServiceQuotas) -> ServiceQuotasDoc {
        ServiceQuotasDoc {
            unlimited: Some(true),
            service: quotas.service,
            classes: quotas
                .classes
                .iter()
                .map(|(name, q)| {
                    let doc = ClassQuotaDoc {
                        burst: q.rate.burst().get(),
                        per_second: q.rate.per_second(),
                        per: q.per,
                    };
                    (name.clone(), doc)
                })
                .collect(),
            operations: quotas.operations.clone(),
        }
    }
}

impl From<&AwsIdentity> for AwsIdentityDoc {
    fn from(aws: &AwsIdentity) -> AwsIdentityDoc {
        AwsIdentityDoc {
            account_id: unplaced(aws.account_id.clone()),
            access_keys: aws
                .access_keys
                .iter()
                .map(|k| AccessKeyDoc {
                    id: unplaced(k.id.clone()),
                    secret: k.secret.clone(),
                    user: k.user.clone(),
                })
                .collect(),
        }
    }
}

impl AwsIdentityDoc {
    pub fn identity(&self) -> AwsIdentity {
        AwsIdentity {
            account_id: self.account_id.value.clone(),
            access_keys: self
                .access_keys
                .iter()
                .map(|k| AccessKey {
                    id: k.id.value.clone(),
                    secret: k.secret.clone(),
                    user: k.user.clone(),
                })
                .collect(),
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
            aws: account.aws.as_ref().map(AwsIdentityDoc::from),
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
            aws: Some(AwsDoc {
                max_clock_skew_s: Some(config.aws.max_clock_skew.as_secs()),
                retry_after_header: Some(config.aws.retry_after_header),
            }),
        }
    }
}
