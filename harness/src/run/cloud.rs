//! The cloud a run measures: mock-cloud in this process, or a mock-cloud reached over HTTP
//! (a cluster run), behind one interface. Both get the scenario's cloud section as the
//! same config document, so the two modes run the same cloud.

use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http::Method;
use mock_cloud::{Action, Collection, Faults, MockCloud};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::remote::{Remote, RemoteError};
use crate::scenario::{ActionClass, Latency, Scenario};

/// The bearer token of a scenario account (the Secret the harness writes holds it).
pub(crate) fn cloud_token(account: &str) -> String {
    format!("token-{account}")
}

/// mock-cloud's class of a scenario action class.
pub(crate) fn mock_cloud_class(c: ActionClass) -> mock_cloud::Class {
    match c {
        ActionClass::Read => mock_cloud::Class::Read,
        ActionClass::List => mock_cloud::Class::List,
        ActionClass::Mutate => mock_cloud::Class::Mutate,
        ActionClass::Delete => mock_cloud::Class::Delete,
    }
}

/// mock-cloud's latency of a scenario latency.
pub(crate) fn cloud_latency(l: &Latency) -> mock_cloud::Latency {
    match *l {
        Latency::Fixed(d) => mock_cloud::Latency::Fixed(d),
        Latency::Uniform { min, max } => mock_cloud::Latency::Uniform { min, max },
        Latency::Lognormal { median, sigma } => mock_cloud::Latency::LogNormal { median, sigma },
    }
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// A latency as the config document writes it.
fn latency_json(l: &mock_cloud::Latency) -> Value {
    match *l {
        mock_cloud::Latency::Fixed(d) => json!({"fixed_ms": millis(d)}),
        mock_cloud::Latency::Uniform { min, max } => {
            json!({"uniform_ms": {"min": millis(min), "max": millis(max)}})
        }
        mock_cloud::Latency::LogNormal { median, sigma } => {
            json!({"lognormal_ms": {"median": millis(median), "sigma": sigma}})
        }
    }
}

/// The scenario's cloud section as a mock-cloud config document (the `--config` file's
/// shape, which `PUT /admin/v1/config` also takes): one account per scenario account with
/// token `token-<name>`, only the scenario's quotas (everything else unlimited), its
/// provisioning times, latency and error rates.
#[must_use]
pub fn cloud_config_document(s: &Scenario) -> Value {
    let p = &s.cloud.provisioning;
    let accounts: Vec<Value> = s
        .cloud
        .accounts
        .iter()
        .map(|account| {
            let mut classes = Map::new();
            for c in ActionClass::ALL {
                if let Some(q) = account.quotas.get(c) {
                    let burst = q.burst.round().max(1.0) as u32;
                    classes.insert(
                        mock_cloud_class(c).as_str().to_owned(),
                        json!({"burst": burst, "per_second": q.per_second}),
                    );
                }
            }
            json!({
                "name": account.name,
                "tokens": [cloud_token(&account.name)],
                "quotas": {"unlimited": true, "classes": classes},
            })
        })
        .collect();
    let mut latency = Map::new();
    let mut errors = Map::new();
    for c in ActionClass::ALL {
        if let Some(l) = s.cloud.latency.get(c) {
            latency.insert(
                mock_cloud_class(c).as_str().to_owned(),
                latency_json(&cloud_latency(l)),
            );
        }
        if let Some(e) = s.cloud.errors.get(c) {
            errors.insert(
                mock_cloud_class(c).as_str().to_owned(),
                json!({"rate": e.rate, "status": e.status}),
            );
        }
    }
    json!({
        "provisioning": {
            "database_create_ms": millis(p.database_create),
            "database_delete_ms": millis(p.database_delete),
        },
        "quotas": {"unlimited": true},
        "accounts": accounts,
        "faults": {"seed": s.seed, "latency": latency, "errors": errors},
    })
}

/// The scenario's cloud document and the config mock-cloud makes of it.
fn scenario_config(s: &Scenario) -> Result<(String, mock_cloud::Config), mock_cloud::ConfigError> {
    let document = cloud_config_document(s).to_string();
    let config = mock_cloud::Config::from_yaml(&document, "the scenario's cloud section")?;
    Ok((document, config))
}

/// mock-cloud's faults as the JSON `PUT /admin/v1/faults` takes.
#[must_use]
pub fn faults_document(f: &Faults) -> Value {
    let mut latency = Map::new();
    for (class, l) in &f.latency {
        latency.insert(class.as_str().to_owned(), latency_json(l));
    }
    let errors: Map<String, Value> = f
        .errors
        .iter()
        .map(|(class, e)| {
            (
                class.as_str().to_owned(),
                json!({"rate": e.probability, "status": e.status}),
            )
        })
        .collect();
    let outages: Vec<Value> = f
        .outages
        .iter()
        .map(|o| {
            json!({"start_s": o.start.as_secs_f64(), "end_s": o.end.as_secs_f64(), "status": o.status})
        })
        .collect();
    json!({"seed": f.seed, "latency": latency, "errors": errors, "outages": outages})
}

/// One call in the cloud's journal, as the harness reads it.
#[derive(Clone, Debug)]
pub struct JournalCall {
    /// Position in the journal.
    pub seq: u64,
    /// µs since the cloud's clock started.
    pub at_us: u64,
    /// The account, empty when not authenticated.
    pub account: String,
    /// The action, if the request matched one.
    pub action: Option<Action>,
    /// The collection, if the request matched one.
    pub collection: Option<Collection>,
    /// The resource name.
    pub name: String,
    /// HTTP status.
    pub status: u16,
    /// Refused by a rate quota.
    pub throttled: bool,
}

impl From<mock_cloud::Call> for JournalCall {
    fn from(c: mock_cloud::Call) -> JournalCall {
        JournalCall {
            seq: c.seq,
            at_us: c.at_us,
            account: c.account,
            action: c.action,
            collection: c.collection,
            name: c.name,
            status: c.status,
            throttled: c.throttled,
        }
    }
}

/// A journal line of `GET /admin/v1/calls`.
#[derive(Deserialize)]
struct WireCall {
    seq: u64,
    at_us: u64,
    account: String,
    action: String,
    collection: String,
    name: String,
    status: u16,
    throttled: bool,
}

impl From<WireCall> for JournalCall {
    fn from(c: WireCall) -> JournalCall {
        JournalCall {
            seq: c.seq,
            at_us: c.at_us,
            account: c.account,
            action: Action::parse(&c.action),
            collection: Collection::parse(&c.collection),
            name: c.name,
            status: c.status,
            throttled: c.throttled,
        }
    }
}

/// A resource in the cloud's inventory.
#[derive(Clone, Debug, Deserialize)]
pub struct InventoryItem {
    /// Owning account.
    pub account: String,
    /// Collection (`buckets`, `databases`, `records`).
    pub collection: String,
    /// Name.
    pub name: String,
}

/// A mock-cloud reached over HTTP.
pub struct RemoteCloud {
    remote: Remote,
    /// The faults the harness last set (there is no endpoint to read them back).
    faults: Mutex<Faults>,
    /// When the cloud's clock started, on the harness's clock (the middle of the
    /// `PUT /admin/v1/config` exchange).
    epoch: Instant,
    /// How long that exchange took: the uncertainty of `epoch`.
    epoch_uncertainty: Duration,
}

/// The cloud of a run.
pub enum Cloud {
    /// mock-cloud in this process.
    Local(MockCloud),
    /// mock-cloud over HTTP.
    Remote(Box<RemoteCloud>),
}

fn decode(url: &str, reason: impl ToString) -> RemoteError {
    RemoteError::Decode {
        url: url.to_owned(),
        reason: reason.to_string(),
    }
}

impl Cloud {
    /// An in-process cloud with the scenario's cloud section.
    ///
    /// # Errors
    /// mock-cloud rejects the section.
    pub fn local(s: &Scenario) -> Result<MockCloud, mock_cloud::ConfigError> {
        MockCloud::new(scenario_config(s)?.1)
    }

    /// Gives the mock-cloud at `url` the scenario's cloud section (`PUT /admin/v1/config`,
    /// which starts it afresh: no resources, an empty journal, its clock at zero).
    ///
    /// # Errors
    /// It cannot be reached, or it rejects the section.
    pub async fn remote(s: &Scenario, url: &str) -> Result<Cloud, RemoteError> {
        let remote = Remote::new(url)?;
        let (document, config) = scenario_config(s).map_err(|e| decode(url, e))?;
        let sent = Instant::now();
        remote
            .send(
                Method::PUT,
                mock_cloud::CONFIG_PATH,
                Some(("application/json", Bytes::from(document))),
            )
            .await?;
        let took = sent.elapsed();
        Ok(Cloud::Remote(Box::new(RemoteCloud {
            remote,
            faults: Mutex::new(config.faults),
            epoch: sent + took / 2,
            epoch_uncertainty: took,
        })))
    }

    /// When the cloud's clock started, on the harness's clock, and how uncertain that is.
    #[must_use]
    pub fn epoch(&self, local_start: Instant) -> (Instant, Duration) {
        match self {
            Cloud::Local(_) => (local_start, Duration::ZERO),
            Cloud::Remote(r) => (r.epoch, r.epoch_uncertainty),
        }
    }

    /// Time on the cloud's clock (outage windows are set on it).
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        match self {
            Cloud::Local(c) => c.elapsed(),
            Cloud::Remote(r) => r.epoch.elapsed(),
        }
    }

    /// The faults in force.
    #[must_use]
    pub fn faults(&self) -> Faults {
        match self {
            Cloud::Local(c) => c.faults(),
            Cloud::Remote(r) => r.faults.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        }
    }

    /// Replaces the faults in force.
    ///
    /// # Errors
    /// The cloud rejects them, or cannot be reached.
    pub async fn set_faults(&self, faults: Faults) -> Result<(), RemoteError> {
        match self {
            Cloud::Local(c) => c.set_faults(faults).map_err(|e| decode("mock-cloud", e)),
            Cloud::Remote(r) => {
                let body = Bytes::from(faults_document(&faults).to_string());
                r.remote
                    .send(
                        Method::PUT,
                        "/admin/v1/faults",
                        Some(("application/json", body)),
                    )
                    .await?;
                *r.faults.lock().unwrap_or_else(|e| e.into_inner()) = faults;
                Ok(())
            }
        }
    }

    /// Journal entries from `since` on, oldest first, and how many the journal dropped.
    ///
    /// # Errors
    /// The remote journal cannot be read.
    pub async fn calls_since(&self, since: u64) -> Result<(Vec<JournalCall>, u64), RemoteError> {
        match self {
            Cloud::Local(c) => Ok((
                c.calls_since(since).into_iter().map(Into::into).collect(),
                c.journal_stats().dropped,
            )),
            Cloud::Remote(r) => {
                let mut calls = Vec::new();
                let mut cursor = since;
                loop {
                    let path = format!("/admin/v1/calls?since={cursor}");
                    let answer = r.remote.send(Method::GET, &path, None).await?;
                    let url = format!("{}{path}", r.remote.base());
                    let header = |name: &str| {
                        answer
                            .headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.parse::<u64>().ok())
                            .ok_or_else(|| decode(&url, format!("no {name} header")))
                    };
                    let (next, dropped) = (header("x-next-seq")?, header("x-dropped")?);
                    let before = calls.len();
                    for line in answer.body.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                        let call: WireCall =
                            serde_json::from_slice(line).map_err(|e| decode(&url, e))?;
                        calls.push(JournalCall::from(call));
                    }
                    if calls.len() == before || next <= cursor {
                        return Ok((calls, dropped));
                    }
                    cursor = next;
                }
            }
        }
    }

    /// The next journal `seq`: calls from now on have this one or later.
    ///
    /// # Errors
    /// The remote summary cannot be read.
    pub async fn next_seq(&self) -> Result<u64, RemoteError> {
        match self {
            Cloud::Local(c) => Ok(c.journal_stats().next_seq),
            Cloud::Remote(r) => {
                let summary: Value = r.remote.get_json("/admin/v1/summary").await?;
                summary
                    .pointer("/journal/next_seq")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| decode(r.remote.base(), "the summary has no journal.next_seq"))
            }
        }
    }

    /// Every live resource in the cloud.
    ///
    /// # Errors
    /// The remote inventory cannot be read.
    pub async fn inventory(&self) -> Result<Vec<InventoryItem>, RemoteError> {
        match self {
            Cloud::Local(c) => Ok(c
                .inventory()
                .into_iter()
                .map(|r| InventoryItem {
                    account: r.account,
                    collection: r.collection.as_str().to_owned(),
                    name: r.name,
                })
                .collect()),
            Cloud::Remote(r) => {
                #[derive(Deserialize)]
                struct Inventory {
                    resources: Vec<InventoryItem>,
                }
                let inventory: Inventory = r.remote.get_json("/admin/v1/inventory").await?;
                Ok(inventory.resources)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_document_is_a_valid_mock_cloud_config_for_every_shipped_scenario() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                let s = crate::scenario::load(&path).unwrap();
                let doc = cloud_config_document(&s).to_string();
                let config = mock_cloud::Config::from_yaml(&doc, "doc")
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(config.accounts.len(), s.cloud.accounts.len());
                for (a, want) in config.accounts.iter().zip(&s.cloud.accounts) {
                    assert_eq!(a.tokens, vec![cloud_token(&want.name)]);
                    assert!(a.quotas.counts.is_empty(), "no count quotas");
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
    fn faults_survive_the_trip_through_the_admin_document() {
        let faults = Faults::none()
            .with_seed(7)
            .with_latency(
                mock_cloud::Class::Read,
                mock_cloud::Latency::Uniform {
                    min: Duration::from_millis(5),
                    max: Duration::from_millis(9),
                },
            )
            .with_errors(
                mock_cloud::Class::Mutate,
                mock_cloud::ErrorRate {
                    probability: 0.25,
                    status: 500,
                },
            )
            .with_outage(mock_cloud::Outage {
                start: Duration::from_secs(3),
                end: Duration::from_millis(4500),
                status: 503,
            });
        let doc = json!({"faults": faults_document(&faults)}).to_string();
        let config = mock_cloud::Config::from_yaml(&doc, "doc").unwrap();
        assert_eq!(config.faults, faults);
    }
}
