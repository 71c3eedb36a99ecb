//! Driving the phases: the writes each action makes (paced at its rate), its `until`
//! condition, and its timeout.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use limiter::crossplane::RECONCILE_REQUESTED_AT_ANNOTATION;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::RunError;
use super::cloud::{cloud_latency, mock_cloud_class};
use super::objects::{self, Seeded, api_resource, kind_name};
use super::progress::Progress;
use super::stack::Stack;
use super::tracker::{Key, Tracker};
use crate::result::PhaseSpan;
use crate::scenario::{Action, ActionClass, Phase, Scenario, Until};

/// Writes in flight at once, whatever the rate.
const MAX_IN_FLIGHT: usize = 64;

/// Shortest time between two counts of a phase's `until`.
const RECOUNT: Duration = Duration::from_millis(50);

/// What the harness did to one resource.
#[derive(Clone, Debug)]
pub struct Record {
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
    /// Group name.
    pub group: String,
    /// Phase that created it.
    pub created_in: String,
    /// When the harness created it, µs.
    pub created_us: u64,
    /// When the harness deleted it, µs.
    pub deleted_us: Option<u64>,
    /// Its expected poll interval, s.
    pub expected_poll_s: f64,
    /// Create failed (the harness's own request).
    pub create_failed: bool,
}

impl Record {
    /// Created (successfully) and not deleted.
    fn is_live(&self) -> bool {
        self.deleted_us.is_none() && !self.create_failed
    }
}

/// Runs phases and keeps what they did.
pub struct Driver<'s> {
    scenario: &'s Scenario,
    client: kube::Client,
    namespace: String,
    pub(crate) tracker: Tracker,
    pub(crate) records: BTreeMap<(usize, u32), Record>,
    pub(crate) spans: Vec<PhaseSpan>,
    /// Reconcile-request tokens expected per resource (resync phases).
    requested: BTreeMap<Key, String>,
    /// The namespace, Secrets and ProviderConfigs the run created.
    seeded: Vec<Seeded>,
    start: Instant,
}

/// Sets the cloud's faults; a failure is logged (the run goes on, and the cloud's journal
/// shows what really happened).
async fn set_faults(stack: &Stack, faults: mock_cloud::Faults) {
    if let Err(e) = stack.cloud.set_faults(faults).await {
        tracing::error!(error = %e, "cannot change the cloud's faults");
    }
}

fn kinds(s: &Scenario) -> Vec<&'static str> {
    let mut k: Vec<&'static str> = s.groups.iter().map(|g| kind_name(g.kind)).collect();
    k.sort_unstable();
    k.dedup();
    k
}

impl<'s> Driver<'s> {
    /// Seeds the namespace, Secrets and ProviderConfigs, and starts the watches.
    ///
    /// # Errors
    /// Seeding failed.
    pub async fn new(scenario: &'s Scenario, stack: &Stack) -> Result<Self, RunError> {
        let client = stack.client();
        let seeded = objects::seed(&client, scenario, stack.secret_namespace()).await?;
        let namespace = objects::namespace(scenario);
        let tracker = Tracker::start(&client, &namespace, &kinds(scenario), stack.start);
        Ok(Driver {
            scenario,
            client,
            namespace,
            tracker,
            records: BTreeMap::new(),
            spans: Vec::new(),
            requested: BTreeMap::new(),
            seeded,
            start: stack.start,
        })
    }

    fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn api(&self, kind: &str) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.namespace, &api_resource(kind))
    }

    /// The resources of `groups` (all groups when `None`), as (group, index).
    fn targets(&self, groups: Option<&[usize]>) -> Vec<(usize, u32)> {
        let all: Vec<usize> = (0..self.scenario.groups.len()).collect();
        let groups = groups.unwrap_or(&all);
        groups
            .iter()
            .flat_map(|&g| (0..self.scenario.groups[g].count).map(move |i| (g, i)))
            .collect()
    }

    /// Created (successfully) and not deleted.
    fn is_live(&self, k: &(usize, u32)) -> bool {
        self.records.get(k).is_some_and(Record::is_live)
    }

    fn key(&self, g: usize, i: u32) -> Key {
        let group = &self.scenario.groups[g];
        (
            kind_name(group.kind).to_owned(),
            group.resource_name(i, &self.scenario.name),
        )
    }

    pub(crate) fn record(&mut self, span: PhaseSpan) {
        self.spans.push(span);
    }

    pub(crate) fn record_interrupted(&mut self, i: usize, phase: &Phase) {
        let _ = i;
        let start_us = self.spans.last().map_or(0, |s: &PhaseSpan| s.end_us);
        self.spans.push(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us: self.now_us(),
            completed: false,
        });
    }

    pub(crate) async fn shut_down(&mut self) {
        self.tracker.shut_down().await;
    }

    /// Runs one phase: its writes, then waits for its `until` within its timeout.
    ///
    /// # Errors
    /// None so far: failed writes are counted, not fatal.
    pub async fn run_phase(
        &mut self,
        index: usize,
        phase: &Phase,
        stack: &mut Stack,
        progress: &Progress,
    ) -> Result<PhaseSpan, RunError> {
        let start_us = self.now_us();
        let deadline = Instant::now() + phase.timeout;
        let targets = self.targets(phase.action.groups());
        let bar = progress.phase(index, &phase.name, phase.action.name(), targets.len());
        match &phase.action {
            Action::Create { rate, groups } => {
                let targets = self.targets(Some(groups));
                self.create(&phase.name, &targets, *rate).await;
            }
            Action::Hold { duration } => tokio::time::sleep(*duration).await,
            Action::Resync { rate, groups } => {
                let token = format!("{}-{}", phase.name, self.now_us());
                let targets = self.targets(Some(groups));
                self.resync(&targets, &token, *rate).await;
            }
            Action::Update { rate, groups, spec } => {
                let targets = self.targets(Some(groups));
                let body = json!({"spec": {"forProvider": spec}});
                self.patch_all(&targets, &body, *rate).await;
            }
            Action::CloudOutage { duration, status } => {
                let mut faults = stack.cloud.faults();
                let from = stack.cloud.elapsed();
                faults.outages.push(mock_cloud::Outage {
                    start: from,
                    end: from + *duration,
                    status: *status,
                });
                set_faults(stack, faults).await;
                tokio::time::sleep(*duration).await;
            }
            Action::CloudLatency { latency, duration } => {
                let before = stack.cloud.faults();
                let mut faults = before.clone();
                for c in ActionClass::ALL {
                    if let Some(l) = latency.get(c) {
                        faults.latency.insert(mock_cloud_class(c), cloud_latency(l));
                    }
                }
                set_faults(stack, faults).await;
                if let Some(d) = duration {
                    tokio::time::sleep(*d).await;
                    set_faults(stack, before).await;
                }
            }
            Action::Restart => {
                let from = match stack.cloud.next_seq().await {
                    Ok(seq) => seq,
                    Err(e) => {
                        tracing::error!(error = %e, "cannot read the cloud's journal");
                        0
                    }
                };
                stack.restart_provider(deadline).await?;
                let completed = self.wait_observed(stack, from, deadline, &bar).await;
                bar.finish(completed);
                return Ok(PhaseSpan {
                    name: phase.name.clone(),
                    start_us,
                    end_us: self.now_us(),
                    completed,
                });
            }
            Action::Delete { rate, groups } => {
                let targets = self.targets(Some(groups));
                self.delete(&targets, *rate).await;
            }
        }
        let completed = self.wait_until(phase.until, &targets, deadline, &bar).await;
        bar.finish(completed);
        Ok(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us: self.now_us(),
            completed,
        })
    }

    /// How many of `keys` meet `until` now.
    fn met(&self, until: Until, keys: &[Key]) -> usize {
        let seen = self.tracker.lock();
        keys.iter()
            .filter(|key| {
                let s = seen.get(*key);
                match until {
                    Until::AllReady => s.is_some_and(|s| s.ready),
                    Until::AllHandled => {
                        let want = self.requested.get(*key);
                        want.is_none() || s.and_then(|s| s.handled.as_ref()) == want
                    }
                    Until::AllGone => s.is_some_and(|s| s.gone_us.is_some()),
                    Until::Elapsed => true,
                }
            })
            .count()
    }

    async fn wait_until(
        &self,
        until: Until,
        targets: &[(usize, u32)],
        deadline: Instant,
        bar: &super::progress::PhaseBar,
    ) -> bool {
        // Only resources that exist can become Ready; deleted ones count for AllGone.
        let relevant: Vec<(usize, u32)> = targets
            .iter()
            .copied()
            .filter(|k| match until {
                Until::AllReady | Until::AllHandled => self.is_live(k),
                Until::AllGone => self.records.get(k).is_some_and(|r| r.deleted_us.is_some()),
                Until::Elapsed => true,
            })
            .collect();
        bar.set_total(relevant.len());
        let keys: Vec<Key> = relevant.iter().map(|(g, i)| self.key(*g, *i)).collect();
        loop {
            let done = self.met(until, &keys);
            bar.set(done);
            if done == keys.len() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            // Recount on a change, at most every RECOUNT (a count is O(resources)).
            let next = Instant::now() + RECOUNT;
            tokio::select! {
                () = self.tracker.changed() => tokio::time::sleep_until(next.min(deadline)).await,
                () = tokio::time::sleep_until(deadline) => {}
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }

    /// After a restart: waits until the new provider has observed (a cloud GET) every live
    /// resource, reading mock-cloud's journal from `from` on. That is when the re-list
    /// backlog has drained.
    async fn wait_observed(
        &self,
        stack: &Stack,
        from: u64,
        deadline: Instant,
        bar: &super::progress::PhaseBar,
    ) -> bool {
        let mut missing: HashSet<(String, String)> = self
            .records
            .values()
            .filter(|r| r.is_live())
            .map(|r| (r.kind.clone(), r.name.clone()))
            .collect();
        let total = missing.len();
        bar.set_total(total);
        let mut cursor = from;
        loop {
            let calls = match stack.cloud.calls_since(cursor).await {
                Ok((calls, _)) => calls,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the cloud's journal; retrying");
                    Vec::new()
                }
            };
            for call in calls {
                cursor = call.seq + 1;
                if call.action == Some(mock_cloud::Action::Get)
                    && let Some(c) = call.collection
                {
                    missing.remove(&(super::collect::kind_of(c).to_owned(), call.name));
                }
            }
            bar.set(total - missing.len());
            if missing.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    }

    /// After a cluster run: deletes the managed resources still there and waits (at most
    /// `timeout`) until the provider has let them go, then deletes the namespace, Secrets
    /// and ProviderConfigs the run created. Returns whether everything was gone in time.
    pub(crate) async fn clean_up(&mut self, timeout: Duration, progress: &Progress) -> bool {
        let deadline = Instant::now() + timeout;
        let live: Vec<(usize, u32)> = self
            .records
            .iter()
            .filter(|(_, r)| !r.create_failed)
            .map(|(k, _)| *k)
            .collect();
        progress.line(format_args!(
            "cleaning up: deleting {} resources and what the run created (--keep leaves them)",
            live.len()
        ));
        let s = self.scenario;
        self.paced(&live, None, |g, i| {
            let group = &s.groups[g];
            let api = self.api(kind_name(group.kind));
            let name = group.resource_name(i, &s.name);
            async move {
                match api.delete(&name, &DeleteParams::default()).await {
                    Ok(_) => true,
                    Err(kube::Error::Api(e)) if e.code == 404 => true,
                    Err(e) => {
                        tracing::warn!(error = %e, name, "cannot delete");
                        false
                    }
                }
            }
        })
        .await;
        let keys: Vec<Key> = live.iter().map(|(g, i)| self.key(*g, *i)).collect();
        let bar = progress.phase(self.spans.len(), "cleanup", "delete", keys.len());
        let mut gone = false;
        while Instant::now() < deadline {
            let left = {
                let seen = self.tracker.lock();
                keys.iter()
                    .filter(|k| seen.get(*k).is_some_and(|s| s.gone_us.is_none()))
                    .count()
            };
            bar.set(keys.len() - left);
            if left == 0 {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        bar.finish(gone);
        if !gone {
            progress.line(format_args!(
                "cleanup: some resources were still there after {timeout:?}; their finalizers wait for the provider"
            ));
        }
        for seeded in self.seeded.iter().rev() {
            let api: Api<DynamicObject> = match &seeded.namespace {
                Some(ns) => Api::namespaced_with(self.client.clone(), ns, &seeded.resource),
                None => Api::all_with(self.client.clone(), &seeded.resource),
            };
            if let Err(e) = api.delete(&seeded.name, &DeleteParams::default()).await {
                tracing::warn!(error = %e, name = seeded.name, "cannot delete");
            }
        }
        gone
    }

    /// Runs `op` for every target, starting them `1/rate` apart (all at once without a rate),
    /// at most [`MAX_IN_FLIGHT`] at a time. Returns each target's start time and success.
    async fn paced<F, Fut>(
        &self,
        targets: &[(usize, u32)],
        rate: Option<f64>,
        op: F,
    ) -> Vec<((usize, u32), u64, bool)>
    where
        F: Fn(usize, u32) -> Fut,
        Fut: std::future::Future<Output = bool> + Send + 'static,
    {
        let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        let mut tasks = JoinSet::new();
        let begin = Instant::now();
        for (n, &(g, i)) in targets.iter().enumerate() {
            if let Some(r) = rate.filter(|r| *r > 0.0) {
                tokio::time::sleep_until(begin + Duration::from_secs_f64(n as f64 / r)).await;
            }
            let permit = Arc::clone(&permits)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let at = self.now_us();
            let fut = op(g, i);
            tasks.spawn(async move {
                let ok = fut.await;
                drop(permit);
                ((g, i), at, ok)
            });
        }
        let mut out = Vec::with_capacity(targets.len());
        while let Some(r) = tasks.join_next().await {
            if let Ok(r) = r {
                out.push(r);
            }
        }
        out
    }

    async fn create(&mut self, phase: &str, targets: &[(usize, u32)], rate: Option<f64>) {
        let s = self.scenario;
        let done = self
            .paced(targets, rate, |g, i| {
                let group = &s.groups[g];
                let api = self.api(kind_name(group.kind));
                let obj = objects::managed_resource(s, group, i);
                async move {
                    match api.create(&PostParams::default(), &obj).await {
                        Ok(_) => true,
                        Err(e) => {
                            tracing::warn!(error = %e, "create failed");
                            false
                        }
                    }
                }
            })
            .await;
        for ((g, i), at, ok) in done {
            let group = &s.groups[g];
            let expected = s.settings.effective_poll(
                group
                    .resource_annotations(i, &s.name)
                    .get(limiter::crossplane::POLL_INTERVAL_ANNOTATION)
                    .map(String::as_str),
            );
            self.records.insert(
                (g, i),
                Record {
                    kind: kind_name(group.kind).to_owned(),
                    name: group.resource_name(i, &s.name),
                    group: group.name.clone(),
                    created_in: phase.to_owned(),
                    created_us: at,
                    deleted_us: None,
                    expected_poll_s: expected.interval.as_secs_f64(),
                    create_failed: !ok,
                },
            );
        }
    }

    async fn patch_all(
        &self,
        targets: &[(usize, u32)],
        body: &serde_json::Value,
        rate: Option<f64>,
    ) -> Vec<((usize, u32), u64, bool)> {
        let s = self.scenario;
        self.paced(targets, rate, |g, i| {
            let group = &s.groups[g];
            let api = self.api(kind_name(group.kind));
            let name = group.resource_name(i, &s.name);
            let body = body.clone();
            async move {
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                    .await
                    .is_ok()
            }
        })
        .await
    }

    async fn resync(&mut self, targets: &[(usize, u32)], token: &str, rate: Option<f64>) {
        let body = json!({"metadata": {"annotations": {RECONCILE_REQUESTED_AT_ANNOTATION: token}}});
        let live: Vec<(usize, u32)> = targets
            .iter()
            .copied()
            .filter(|k| self.is_live(k))
            .collect();
        let done = self.patch_all(&live, &body, rate).await;
        for ((g, i), _, ok) in done {
            if ok {
                self.requested.insert(self.key(g, i), token.to_owned());
            }
        }
    }

    async fn delete(&mut self, targets: &[(usize, u32)], rate: Option<f64>) {
        let s = self.scenario;
        let live: Vec<(usize, u32)> = targets
            .iter()
            .copied()
            .filter(|k| self.is_live(k))
            .collect();
        let done = self
            .paced(&live, rate, |g, i| {
                let group = &s.groups[g];
                let api = self.api(kind_name(group.kind));
                let name = group.resource_name(i, &s.name);
                async move { api.delete(&name, &DeleteParams::default()).await.is_ok() }
            })
            .await;
        for (k, at, ok) in done {
            if ok && let Some(r) = self.records.get_mut(&k) {
                r.deleted_us = Some(at);
            }
        }
    }
}
