//! The scenario's cloud section as mock-cloud's own typed config, built directly (no
//! document to parse back), and the mapping of the scenario's action classes and latencies
//! to mock-cloud's. Both targets give the cloud this config, so both run the same cloud.

use std::time::Duration;

use mock_cloud::{AccountConfig, Config, ErrorRate, Faults, Quotas, Rate};

use crate::scenario::{ActionClass, FaultShare, Latency, Scenario};

/// A scenario quota mock-cloud cannot enforce.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error(
    "account {account}: the {class} quota (burst {burst}, {per_second}/s) is outside what mock-cloud takes (burst ≥ 1, 1/86400 to 1e9 per second)"
)]
pub struct QuotaError {
    /// The account.
    pub account: String,
    /// The action class.
    pub class: &'static str,
    /// The burst, rounded.
    pub burst: u32,
    /// The refill rate.
    pub per_second: f64,
}

/// The bearer token of a scenario account (the Secret the harness writes holds it).
#[must_use]
pub fn cloud_token(account: &str) -> String {
    format!("token-{account}")
}

/// mock-cloud's class of a scenario action class.
#[must_use]
pub fn class(c: ActionClass) -> mock_cloud::Class {
    match c {
        ActionClass::Read => mock_cloud::Class::Read,
        ActionClass::List => mock_cloud::Class::List,
        ActionClass::Mutate => mock_cloud::Class::Mutate,
        ActionClass::Delete => mock_cloud::Class::Delete,
    }
}

/// Whole milliseconds: what the config document carries, so the in-process cloud and a
/// remote one configured through the admin API run the same times.
fn whole_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// mock-cloud's latency of a scenario latency.
#[must_use]
pub fn latency(l: &Latency) -> mock_cloud::Latency {
    match *l {
        Latency::Fixed(d) => mock_cloud::Latency::Fixed(whole_ms(d)),
        Latency::Uniform { min, max } => mock_cloud::Latency::Uniform {
            min: whole_ms(min),
            max: whole_ms(max),
        },
        Latency::Lognormal { median, sigma } => mock_cloud::Latency::LogNormal {
            median: whole_ms(median),
            sigma,
        },
    }
}

/// Whether the run's cloud takes AWS requests: the provider's AWS flavour runs, or a
/// profile's provider does, which may speak AWS whatever its kinds are named (the harness
/// cannot tell; without keys, mock-cloud refuses every signed request as an unknown key).
fn answers_aws(s: &Scenario) -> bool {
    s.uses_aws() || s.profile.is_some()
}

/// The scenario's cloud: one account per scenario account with token `token-<name>`, only
/// the scenario's quotas (everything else unlimited), its provisioning times, latency and
/// error rates, and the scenario's seed.
///
/// # Errors
/// A quota mock-cloud cannot enforce.
pub fn config(s: &Scenario) -> Result<Config, QuotaError> {
    let mut accounts = Vec::with_capacity(s.cloud.accounts.len());
    for (i, account) in s.cloud.accounts.iter().enumerate() {
        let mut quotas = Quotas::unlimited();
        for c in ActionClass::ALL {
            if let Some(q) = account.quotas.get(c) {
                let burst = q.burst.round().max(1.0) as u32;
                let rate = Rate::try_new(burst, q.per_second).ok_or_else(|| QuotaError {
                    account: account.name.clone(),
                    class: class(c).as_str(),
                    burst,
                    per_second: q.per_second,
                })?;
                quotas = quotas.with_class(class(c), Some(rate));
            }
        }
        let mut config = AccountConfig::new(&account.name)
            .with_token(cloud_token(&account.name))
            .with_quotas(quotas);
        // The AWS front ends: the first account signs with mock-cloud's default keys
        // (access key `default`, secret `default`, account ID 000000000000).
        if i == 0 && answers_aws(s) {
            config = config.with_aws(mock_cloud::AwsIdentity::default_account());
        }
        accounts.push(config);
    }
    let mut faults = Faults::none().with_seed(s.seed);
    for c in ActionClass::ALL {
        if let Some(l) = s.cloud.latency.get(c) {
            faults = faults.with_latency(class(c), latency(l));
        }
        if let Some(e) = s.cloud.errors.get(c) {
            faults = faults.with_errors(
                class(c),
                ErrorRate {
                    probability: e.rate,
                    status: e.status,
                },
            );
        }
    }
    faults.resources = resource_faults(s);
    let p = &s.cloud.provisioning;
    Ok(Config {
        accounts,
        database_create: whole_ms(p.database_create),
        database_delete: whole_ms(p.database_delete),
        faults,
        ..Config::default()
    })
}

/// mock-cloud's per-resource rules for the groups' fault shares: one rule per faulted
/// resource and effect (a lasting error with a retry hint has two), selecting it by
/// collection and exact name.
#[must_use]
pub fn resource_faults(s: &Scenario) -> Vec<mock_cloud::ResourceFault> {
    let own: Vec<Vec<FaultShare>> = s.groups.iter().map(|g| g.faults.clone()).collect();
    resource_faults_of(s, &own)
}

/// mock-cloud's per-resource rules for `faults`, the fault shares of each group in force
/// (the groups' own, or as a `cloudFault` phase changed them).
#[must_use]
pub fn resource_faults_of(
    s: &Scenario,
    faults: &[Vec<FaultShare>],
) -> Vec<mock_cloud::ResourceFault> {
    let mut rules = Vec::new();
    for (group, shares) in s.groups.iter().zip(faults) {
        // Groups of the AWS kinds have no collection and no fault shares (validated).
        let collection = group
            .kind
            .collection()
            .and_then(mock_cloud::Collection::parse);
        for share in shares {
            let effects = share.fault.effects();
            for index in share.start..share.end {
                let name = group.resource_name(index, &s.name);
                for effect in &effects {
                    rules.push(mock_cloud::ResourceFault {
                        select: mock_cloud::ResourceSelector {
                            collection: collection.map(mock_cloud::ResourceKind::from),
                            name: Some(name.clone()),
                            ..mock_cloud::ResourceSelector::default()
                        },
                        effect: effect.clone(),
                    });
                }
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_gives_a_cloud_with_only_its_own_quotas() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let s = crate::scenario::load(&path).unwrap();
                let config = config(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                mock_cloud::MockCloud::new(config.clone())
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(config.accounts.len(), s.cloud.accounts.len());
                assert_eq!(config.faults.seed, s.seed);
                for (a, want) in config.accounts.iter().zip(&s.cloud.accounts) {
                    assert_eq!(a.tokens, vec![cloud_token(&want.name)]);
                    assert!(a.quotas.counts.is_empty(), "no count quotas");
                    assert!(a.quotas.account.is_none() && a.quotas.actions.is_empty());
                    let limited = ActionClass::ALL
                        .iter()
                        .filter(|c| want.quotas.get(**c).is_some())
                        .count();
                    assert_eq!(a.quotas.classes.len(), limited);
                }
                checked += 1;
            }
        }
        assert!(checked >= 5);
    }

    #[test]
    fn a_profiles_provider_can_sign_aws_requests_with_the_default_keys() {
        let s = crate::scenario::parse(
            "apiVersion: harness/v1
name: t
profile:
  flags: loadtest
  command: [provider]
  kinds: [{apiVersion: s3.example.org/v1, kind: Bucket, scope: Cluster}]
resources:
  - {name: b, apiVersion: s3.example.org/v1, kind: Bucket, count: 1}
calls:
  - {apiVersion: s3.example.org/v1, kind: Bucket, observe: 1, create: 1, update: 1, delete: 1}
phases:
  - {name: c, action: create}
",
            "t.yaml",
        )
        .expect("valid");
        let config = config(&s).unwrap();
        let aws = config.accounts[0].aws.as_ref().expect("AWS keys");
        assert_eq!(aws, &mock_cloud::AwsIdentity::default_account());
    }
}
