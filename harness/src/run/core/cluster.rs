//! Crossplane core in a cluster (the cluster target with XR groups): core runs there
//! already, as the user installed it; the harness checks its Deployment's flags against
//! the scenario's `core` settings, creates what the scenario declares and the cluster lacks,
//! and reads what core did at the end.
//!
//! # Semantics
//! - Core's Deployment (`--core-deployment`, Crossplane's chart's by default) must run with
//!   the scenario's `core` settings as its flags (`harness core-args`), unless
//!   `--no-settings-check`.
//! - The scenario's Functions, XRDs and Compositions are created when the cluster has none
//!   of that name; one that exists is used as it is (a note says so). Core's definition
//!   controller applies each XRD's XR CRD: the run starts when every one is served (at most
//!   [`CORE_START_TIMEOUT`] after). A core that reads Functions only when it starts (this
//!   workspace's composer, which watches XRDs as Crossplane does) must start after they
//!   exist.
//! - Core's requests are those of mock-apiserver's journal (`/mock/v1/requests`) from the
//!   run's start whose `User-Agent` starts with `--core-user-agent`; an API server without
//!   that journal leaves `coreApiRequests` UNMEASURED (a real API server's metrics do not
//!   say which client sent a request). Core's function calls and latency come from
//!   `--core-metrics-url` (Crossplane's `function_run_function_*` series), at the end and at
//!   every phase's start and end; without it `functionCalls` is UNMEASURED. Its circuit
//!   breakers cannot be read: `breakerOpens` is UNMEASURED, as for a core process.
//! - The clean-up (not with `--keep`) deletes the run's XRs still there, waits until they
//!   are gone (at most the clean-up's timeout), then deletes the Compositions, XRDs and
//!   Functions the run created.

use std::time::Duration;

use composer::api::{CompositeResourceDefinition, Composition, Function};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, PostParams};
use mock_apiserver::{Entry, JOURNAL_PATH, JournalPage};
use tokio::time::Instant;

use super::process::{CORE_START_TIMEOUT, FunctionFigures, wait_for_xr_crds};
use super::xrs::XrLog;
use crate::result::core::CoreReport;
use crate::run::clock::RunClock;
use crate::run::error::RunError;
use crate::run::remote::Remote;
use crate::run::source::api_metrics::scraper::get_text;
use crate::run::source::watches::SeenMap;
use crate::run::target::cluster_core::check_core_deployment;
use crate::scenario::Scenario;

/// The start of the `User-Agent` of Crossplane core's requests: client-go's default, the
/// binary's name (`crossplane`) and its version.
pub const DEFAULT_CORE_USER_AGENT: &str = "crossplane/";

/// What the command line says of core in a cluster.
#[derive(Clone, Debug)]
pub struct CoreOptions {
    /// Core's Deployment: namespace and name.
    pub deployment: (String, String),
    /// Its container whose args are checked (default: the first).
    pub container: Option<String>,
    /// Core's `/metrics` URL, if reachable from here.
    pub metrics_url: Option<String>,
    /// The start of the `User-Agent` of core's requests.
    pub user_agent: String,
}

impl Default for CoreOptions {
    /// Crossplane's chart's Deployment, its first container, no metrics, Crossplane's
    /// `User-Agent`.
    fn default() -> Self {
        let (ns, name) = crate::run::target::cluster_core::DEFAULT_CORE_DEPLOYMENT
            .split_once('/')
            .expect("NAMESPACE/NAME");
        CoreOptions {
            deployment: (ns.to_owned(), name.to_owned()),
            container: None,
            metrics_url: None,
            user_agent: DEFAULT_CORE_USER_AGENT.to_owned(),
        }
    }
}

/// An object the run created, deleted by the clean-up.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Created {
    Function(String),
    Xrd(String),
    Composition(String),
}

/// Core in a cluster, as a run knows it.
pub struct ClusterCore {
    options: CoreOptions,
    /// Core's metrics: where, and its URL for messages.
    metrics: Option<(Remote, String)>,
    /// The journal's last sequence number when the run started; `None`: the API server
    /// has no journal.
    cursor: Option<u64>,
    created: Vec<Created>,
    /// The kinds the scenario's XRs compose.
    composed: Vec<String>,
}

fn setup(what: &str, e: impl std::fmt::Display) -> RunError {
    RunError::CoreSetup(format!("{what}: {e}"))
}

/// Creates `object` through `api` unless one of its name exists; returns whether it
/// created it.
async fn create_missing<K>(api: &Api<K>, object: &K, what: &str) -> Result<bool, RunError>
where
    K: kube::Resource + Clone + serde::Serialize + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
        Err(e) => Err(setup(&format!("cannot create {what}"), e)),
    }
}

impl ClusterCore {
    /// Checks core's Deployment (`settings_check`), creates what the scenario declares and
    /// the cluster lacks, waits for the XR CRDs, and notes where the journal stands; `notes`
    /// gets what the result should say.
    ///
    /// # Errors
    /// Core's Deployment cannot be read or runs with other settings; an object cannot be
    /// created; an XR CRD is not served in time.
    pub async fn start(
        client: &kube::Client,
        s: &Scenario,
        options: CoreOptions,
        settings_check: bool,
        notes: &mut Vec<String>,
    ) -> Result<ClusterCore, RunError> {
        let (ns, name) = &options.deployment;
        let deployment = format!("{ns}/{name}");
        let d = Api::<Deployment>::namespaced(client.clone(), ns)
            .get(name)
            .await
            .map_err(|e| {
                setup(
                    &format!("cannot read Crossplane core's Deployment {deployment} (set --core-deployment)"),
                    e,
                )
            })?;
        if settings_check {
            notes.push(check_core_deployment(
                &s.composites.core,
                &deployment,
                &d,
                options.container.as_deref(),
            )?);
        } else {
            notes.push(format!(
                "Crossplane core's Deployment {deployment}: its args were not compared with the scenario's core settings (--no-settings-check)"
            ));
        }
        let mut created = Vec::new();
        let mut existed = Vec::new();
        let composites = &s.composites;
        for f in &composites.functions {
            let function: Function = serde_json::from_value(f.body.clone())
                .map_err(|e| setup(&format!("Function {}", f.name), e))?;
            let what = format!("Function {}", f.name);
            if create_missing(&Api::all(client.clone()), &function, &what).await? {
                created.push(Created::Function(f.name.clone()));
            } else {
                existed.push(what);
            }
        }
        for xrd in &composites.xrds {
            let name = xrd.metadata.name.clone().unwrap_or_default();
            let what = format!("XRD {name}");
            if create_missing(
                &Api::<CompositeResourceDefinition>::all(client.clone()),
                xrd,
                &what,
            )
            .await?
            {
                created.push(Created::Xrd(name));
            } else {
                existed.push(what);
            }
        }
        for comp in &composites.compositions {
            let name = comp.metadata.name.clone().unwrap_or_default();
            let what = format!("Composition {name}");
            if create_missing(&Api::<Composition>::all(client.clone()), comp, &what).await? {
                created.push(Created::Composition(name));
            } else {
                existed.push(what);
            }
        }
        if !existed.is_empty() {
            notes.push(format!(
                "already in the cluster, used as they are (the scenario's not applied): {}",
                existed.join(", ")
            ));
        }
        wait_for_xr_crds(client, s, Instant::now() + CORE_START_TIMEOUT, || Ok(())).await?;
        let cursor = match get_text(client, &format!("{JOURNAL_PATH}?since={}", u64::MAX)).await {
            Ok(text) => serde_json::from_str::<JournalPage>(&text)
                .ok()
                .map(|p| p.last_seq),
            Err(_) => None,
        };
        let metrics = match &options.metrics_url {
            Some(url) => {
                let (remote, path) = Remote::for_url(url)
                    .map_err(|e| setup(&format!("--core-metrics-url {url}"), e))?;
                Some((remote, path))
            }
            None => None,
        };
        Ok(ClusterCore {
            options,
            metrics,
            cursor,
            created,
            composed: crate::run::objects::composed_kinds(s)
                .into_iter()
                .map(|k| k.name)
                .collect(),
        })
    }

    /// Where core's function metrics are read at each phase's start and end.
    #[must_use]
    pub fn metrics(&self) -> Option<super::phase_state::CoreMetrics> {
        let (remote, path) = self.metrics.as_ref()?;
        Some(super::phase_state::CoreMetrics {
            remote: remote.clone(),
            path: path.clone(),
        })
    }

    /// What core did since the run started (see the module's semantics).
    pub async fn report(
        &self,
        client: &kube::Client,
        clock: RunClock,
        (log, seen): (&XrLog, &SeenMap),
    ) -> CoreReport {
        let functions: Result<FunctionFigures, String> =
            match (&self.metrics, &self.options.metrics_url) {
                (Some((remote, path)), Some(url)) => {
                    super::process::read_function_figures(remote, path, url).await
                }
                _ => Err("no --core-metrics-url: core's function metrics were not read".to_owned()),
            };
        let journal = match self.cursor {
            Some(cursor) => get_text(client, &format!("{JOURNAL_PATH}?since={cursor}"))
                .await
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str::<JournalPage>(&text).map_err(|e| e.to_string())
                })
                .map_err(|e| format!("the API server's journal could not be read at the end: {e}")),
            None => Err("the API server keeps no journal (mock-apiserver's /mock/v1/requests), and its metrics do not say which client sent a request".to_owned()),
        };
        let (entries, epoch, unread): (Vec<Entry>, _, _) = match journal {
            Ok(page) => (page.entries, clock.epoch_of_wall(page.epoch), None),
            Err(why) => (Vec::new(), clock.epoch_of_wall(clock.wall_now()), Some(why)),
        };
        let mut r = super::process::report(
            &self.options.user_agent,
            functions,
            &entries,
            (epoch, clock),
            (log, seen, &self.composed),
        );
        if let Some(why) = unread {
            r.unmeasured
                .insert("coreApiRequests".to_owned(), why.clone());
            r.unmeasured
                .insert("phases/coreApiRequests".to_owned(), why);
        }
        r
    }

    /// Deletes the XRs of `log` still there, waits until they are gone (at most until
    /// `deadline`), then the objects the run created; says what is left.
    pub async fn clean_up(
        &self,
        client: &kube::Client,
        xrs: Vec<(Api<kube::api::DynamicObject>, String)>,
        deadline: Instant,
    ) -> Vec<String> {
        let delete = DeleteParams::foreground();
        for (api, name) in &xrs {
            let _ = api.delete(name, &delete).await;
        }
        let mut left = Vec::new();
        loop {
            left.clear();
            for (api, name) in &xrs {
                if !matches!(api.get_opt(name).await, Ok(None)) {
                    left.push(name.clone());
                }
            }
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let params = DeleteParams::default();
        for c in self.created.iter().rev() {
            let gone = match c {
                Created::Composition(n) => Api::<Composition>::all(client.clone())
                    .delete(n, &params)
                    .await
                    .map(|_| ()),
                Created::Xrd(n) => Api::<CompositeResourceDefinition>::all(client.clone())
                    .delete(n, &params)
                    .await
                    .map(|_| ()),
                Created::Function(n) => Api::<Function>::all(client.clone())
                    .delete(n, &params)
                    .await
                    .map(|_| ()),
            };
            if let Err(e) = gone {
                tracing::warn!(error = %e, object = ?c, "cannot delete what the run created");
            }
        }
        left
    }
}
