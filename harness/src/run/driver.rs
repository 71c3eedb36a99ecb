//! Driving the phases: the writes each action makes (paced at its rate), its `until`
//! condition, and its timeout. The driver only drives; what it did is its [`Log`], which
//! [`super::observe`] turns into observations with the sources' reports.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use limiter::crossplane::RECONCILE_REQUESTED_AT_ANNOTATION;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::clock::RunClock;
use super::cloud;
use super::error::RunError;
use super::handled::NotHandled;
use super::kill::{self, KillContext};
use super::objects::{self, Seeded, group_kind_info, kind_of_collection};
use super::present::{custom_resources, inventory};
use super::progress::{PhaseBar, Progress};
use super::source::cloud_journal::action_of;
use super::source::watches::{Key, SeenMap, Watches};
use super::target::{CloudControl, Target};
use crate::measure::audit;
use crate::result::{CallAction, Kill, PhaseAudit, PhaseFailure, PhaseSpan};
use crate::scenario::{Action, ActionClass, FaultShare, GroupFault, Phase, Scenario, Until};

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

/// How a phase ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PhaseEnd {
    /// Its `until` was met.
    Completed,
    /// It stopped early with a verdict (a resync phase whose provider does not record
    /// reconcile requests): the phase failed, and the run goes on.
    Failed(PhaseFailure),
    /// Its timeout passed first: the run stops.
    TimedOut,
}

impl PhaseEnd {
    /// Whether the run goes on to the next phase.
    #[must_use]
    pub fn run_goes_on(&self) -> bool {
        !matches!(self, PhaseEnd::TimedOut)
    }
}

/// What the driver did: every resource it wrote and every phase's span.
#[derive(Clone, Debug, Default)]
pub struct Log {
    /// Per resource, by (group, index).
    pub records: BTreeMap<(usize, u32), Record>,
    /// Per phase, in order.
    pub spans: Vec<PhaseSpan>,
    /// The provider's kills, in order.
    pub kills: Vec<Kill>,
    /// The audit at the end of each phase that met its `until`.
    pub phase_audits: Vec<PhaseAudit>,
    /// What a phase that timed out was still waiting for.
    pub unmet: Option<Unmet>,
}

/// The resources a phase that timed out had not seen meet its `until`.
#[derive(Clone, Debug)]
pub struct Unmet {
    /// What it waited for.
    pub until: Until,
    /// How many resources it waited for.
    pub of: usize,
    /// Those still pending, in the order they were created.
    pub pending: Vec<Key>,
}

/// A met `until` or a timeout.
fn ended(completed: bool) -> PhaseEnd {
    if completed {
        PhaseEnd::Completed
    } else {
        PhaseEnd::TimedOut
    }
}

/// Runs phases and keeps what they did.
pub struct Driver<'s> {
    scenario: &'s Scenario,
    client: kube::Client,
    clock: RunClock,
    log: Log,
    /// Reconcile-request tokens expected per resource (resync phases).
    requested: BTreeMap<Key, String>,
    /// The fault shares of each group in force in the current phase.
    in_force: Vec<Vec<FaultShare>>,
    /// How many of the seeded objects the clean-up has deleted (the last first).
    seeded_deleted: usize,
    /// The XR groups' part of each phase.
    xrs: super::core::xrs::XrDriver<'s>,
}

/// How often a clean-up without a bar (no terminal) prints where it stands.
const CLEANUP_PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The time a clean-up that let `done` of `total` resources go in `elapsed` needs for the
/// rest at the same pace; `None` before the first.
#[must_use]
pub fn time_left(done: usize, total: usize, elapsed: Duration) -> Option<Duration> {
    (done > 0).then(|| elapsed.mul_f64(total.saturating_sub(done) as f64 / done as f64))
}

/// Sets the cloud's faults; a failure is logged (the run goes on, and the cloud's journal
/// shows what really happened).
async fn set_faults(cloud: &impl CloudControl, faults: mock_cloud::Faults) {
    if let Err(e) = cloud.set_faults(faults).await {
        tracing::error!(error = %e, "cannot change the cloud's faults");
    }
}

impl<'s> Driver<'s> {
    /// A driver for `scenario` whose writes go through `client`.
    #[must_use]
    pub fn new(scenario: &'s Scenario, client: kube::Client, clock: RunClock) -> Self {
        Driver {
            scenario,
            xrs: super::core::xrs::XrDriver::new(scenario, client.clone()),
            client,
            clock,
            log: Log::default(),
            requested: BTreeMap::new(),
            in_force: scenario.groups.iter().map(|g| g.faults.clone()).collect(),
            seeded_deleted: 0,
        }
    }

    /// What the driver did so far.
    #[must_use]
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// What the driver did to XRs so far.
    #[must_use]
    pub fn xr_log(&self) -> &super::core::xrs::XrLog {
        &self.xrs.log
    }

    fn now_us(&self) -> u64 {
        self.clock.now().0
    }

    fn api(&self, g: usize) -> Api<DynamicObject> {
        group_kind_info(self.scenario, &self.scenario.groups[g]).api(&self.client)
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

    /// Whether resource `k` has a lasting error in force now.
    fn fails_for_good(&self, (g, i): (usize, u32)) -> bool {
        self.in_force[g]
            .iter()
            .find(|s| (s.start..s.end).contains(&i))
            .is_some_and(|s| GroupFault::never_ready(&s.fault))
    }

    /// Whether resource `k` cannot become Ready with the faults in force now.
    fn never_ready(&self, k: (usize, u32)) -> bool {
        self.scenario.groups[k.0].observe_only() || self.fails_for_good(k)
    }

    /// Created (successfully) and not deleted.
    fn is_live(&self, k: &(usize, u32)) -> bool {
        self.log.records.get(k).is_some_and(Record::is_live)
    }

    fn key(&self, g: usize, i: u32) -> Key {
        let group = &self.scenario.groups[g];
        (
            group.kind.to_string(),
            group.resource_name(i, &self.scenario.name),
        )
    }

    /// Records a phase the run was interrupted in.
    pub fn record_interrupted(&mut self, phase: &Phase) {
        let start_us = self.log.spans.last().map_or(0, |s| s.end_us);
        self.log.spans.push(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us: self.now_us(),
            completed: false,
            failure: None,
        });
    }

    /// Runs one phase: its writes, then waits for its `until` within its timeout, and
    /// records its span. Returns how it ended: a resync phase whose provider reconciles the
    /// requested resources without recording the token stops early with a verdict
    /// (`run::handled`).
    ///
    /// # Errors
    /// The provider could not be restarted; failed writes are counted, not fatal.
    pub async fn run_phase<T: Target>(
        &mut self,
        index: usize,
        phase: &Phase,
        target: &mut T,
        watches: &Watches,
        progress: &Progress,
    ) -> Result<PhaseEnd, RunError> {
        let start_us = self.now_us();
        self.in_force = self.scenario.faults_during(index);
        let deadline = Instant::now() + phase.timeout;
        let targets = self.targets(phase.action.groups());
        let bar = progress.phase(index, &phase.name, phase.action.name(), targets.len());
        let kills = kill::schedule(self.scenario, index);
        let end = match &phase.action {
            Action::Restart => {
                let from = match target.cloud().next_seq().await {
                    Ok(seq) => seq,
                    Err(e) => {
                        tracing::error!(error = %e, "cannot read the cloud's journal");
                        0
                    }
                };
                target.restart_provider(deadline).await?;
                ended(
                    self.wait_observed(target.cloud(), watches, from, deadline, &bar)
                        .await,
                )
            }
            // Its kills ran during the phase they interrupt.
            Action::Kill { .. } => {
                let n = self
                    .log
                    .kills
                    .iter()
                    .filter(|k| k.kill_phase == phase.name)
                    .count();
                bar.set_total(n);
                bar.set(n);
                PhaseEnd::Completed
            }
            action if kills.is_empty() => {
                self.act(&phase.name, action, target.cloud()).await;
                let clock = self.clock;
                self.xrs.act(phase, action.rate(), || clock.now().0).await;
                let early = match action {
                    Action::Resync {
                        handled_grace: Some(grace),
                        ..
                    } if phase.until == Until::AllHandled => {
                        self.not_handled(target.cloud(), watches, &targets, *grace)
                            .await
                    }
                    _ => None,
                };
                let cloud = target.cloud();
                let end = self
                    .wait_until(phase.until, &targets, watches, deadline, &bar, early, cloud)
                    .await;
                // Then the XRs of the phase (none outside create, resync, update, delete).
                if end == PhaseEnd::Completed && !self.xrs.wait(phase, watches, deadline).await {
                    let pending = self.xrs.pending(phase, watches).await;
                    self.log.unmet = Some(Unmet {
                        until: phase.until,
                        of: phase
                            .composites
                            .iter()
                            .map(|&g| self.scenario.composites.groups[g].count as usize)
                            .sum(),
                        pending,
                    });
                    PhaseEnd::TimedOut
                } else {
                    end
                }
            }
            action => {
                let client = self.client.clone();
                let cx = KillContext {
                    scenario: self.scenario,
                    client: &client,
                    clock: self.clock,
                    during: &phase.name,
                };
                let target = &*target;
                let earlier = self.log.kills.clone();
                let killing =
                    kill::kill_loop(target, &cx, &kills, Instant::now(), deadline, &earlier);
                let cloud = target.cloud();
                let work = async {
                    self.act(&phase.name, action, cloud).await;
                    self.wait_until(phase.until, &targets, watches, deadline, &bar, None, cloud)
                        .await
                };
                let (done, _) = tokio::join!(killing, work);
                self.log.kills.extend(done?);
                // Kills after the work was done undo it: wait for `until` again.
                self.wait_until(phase.until, &targets, watches, deadline, &bar, None, cloud)
                    .await
            }
        };
        let completed = end == PhaseEnd::Completed;
        if end == PhaseEnd::TimedOut
            && !matches!(phase.action, Action::Restart | Action::Kill { .. })
            && self.log.unmet.is_none()
        {
            self.log.unmet = Some(self.unmet(phase.until, &targets, watches));
        }
        if completed && !matches!(phase.action, Action::Kill { .. }) {
            let found = audit(
                &inventory(target.cloud()).await,
                &custom_resources(&self.client, self.scenario).await,
            );
            self.log.phase_audits.push(PhaseAudit {
                phase: phase.name.clone(),
                at_us: self.now_us(),
                audit: found,
            });
        }
        let failure = match &end {
            PhaseEnd::Failed(f) => {
                bar.finish_as(f.headline());
                progress.line(format_args!(
                    "phase {} FAILED: {}; the run goes on",
                    phase.name,
                    f.message()
                ));
                Some(f.clone())
            }
            _ => {
                bar.finish(completed);
                None
            }
        };
        self.log.spans.push(PhaseSpan {
            name: phase.name.clone(),
            start_us,
            end_us: self.now_us(),
            completed,
            failure,
        });
        Ok(end)
    }

    /// After a resync phase's writes to `targets`: what to watch for a provider that
    /// reconciles the requested resources without recording the token (their cloud names,
    /// the journal from now on). `None` when the cloud's journal cannot be read.
    async fn not_handled(
        &self,
        cloud: &impl CloudControl,
        watches: &Watches,
        targets: &[(usize, u32)],
        grace: Duration,
    ) -> Option<NotHandled> {
        let from = match cloud.next_seq().await {
            Ok(seq) => seq,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the cloud's journal: a provider that does not record reconcile requests is found only by the phase's timeout");
                return None;
            }
        };
        let seen = watches.lock();
        let names = targets
            .iter()
            .map(|&(g, i)| self.key(g, i))
            .filter(|key| self.requested.contains_key(key))
            .map(|key| {
                seen.get(&key)
                    .and_then(|s| s.external_name.clone())
                    .unwrap_or(key.1)
            })
            .collect();
        Some(NotHandled::new(names, from, grace))
    }

    /// The writes (or waits, or fault changes) of one action.
    async fn act(&mut self, phase: &str, action: &Action, cloud: &impl CloudControl) {
        match action {
            Action::Create { rate, groups } => {
                let targets = self.targets(Some(groups));
                self.create(phase, &targets, *rate).await;
            }
            Action::Hold { duration } => tokio::time::sleep(*duration).await,
            Action::Resync { rate, groups, .. } => {
                let token = format!("{phase}-{}", self.now_us());
                let targets = self.targets(Some(groups));
                self.resync(&targets, &token, *rate).await;
            }
            Action::Update { rate, groups, spec } => {
                let targets = self.targets(Some(groups));
                let body = json!({"spec": {"forProvider": spec}});
                self.patch_all(&targets, &body, *rate).await;
            }
            Action::CloudOutage { duration, status } => {
                let mut faults = cloud.faults();
                let from = cloud.elapsed();
                faults.outages.push(mock_cloud::Outage {
                    start: from,
                    end: from + *duration,
                    status: *status,
                });
                set_faults(cloud, faults).await;
                tokio::time::sleep(*duration).await;
            }
            Action::CloudLatency { latency, duration } => {
                let before = cloud.faults();
                let mut faults = before.clone();
                for c in ActionClass::ALL {
                    if let Some(l) = latency.get(c) {
                        faults.latency.insert(cloud::class(c), cloud::latency(l));
                    }
                }
                set_faults(cloud, faults).await;
                if let Some(d) = duration {
                    tokio::time::sleep(*d).await;
                    set_faults(cloud, before).await;
                }
            }
            Action::Delete { rate, groups } => {
                let targets = self.targets(Some(groups));
                self.delete(&targets, *rate).await;
            }
            Action::CloudFault { duration, .. } => {
                let before = cloud.faults();
                let mut faults = before.clone();
                faults.resources = cloud::resource_faults_of(self.scenario, &self.in_force);
                set_faults(cloud, faults).await;
                if let Some(d) = duration {
                    tokio::time::sleep(*d).await;
                    // Only the per-resource rules go back: other faults may have changed.
                    let mut back = cloud.faults();
                    back.resources = before.resources;
                    set_faults(cloud, back).await;
                }
            }
            Action::Restart | Action::Kill { .. } => {
                unreachable!("restarts and kills are driven by run_phase")
            }
        }
    }

    /// Whether `key` meets `until` in what the watches saw.
    fn meets(&self, until: Until, key: &Key, seen: &SeenMap) -> bool {
        let s = seen.get(key);
        match until {
            Until::AllReady | Until::ComposedReady => s.is_some_and(|s| s.ready),
            Until::AllHandled => {
                let want = self.requested.get(key);
                want.is_none() || s.and_then(|s| s.handled.as_ref()) == want
            }
            Until::AllGone => s.is_some_and(|s| s.gone_us.is_some()),
            Until::Elapsed => true,
        }
    }

    /// The resources of `targets` that a phase waits for to meet `until`.
    fn waited_for(&self, until: Until, targets: &[(usize, u32)]) -> Vec<(usize, u32)> {
        // Only resources that exist can become Ready; deleted ones count for AllGone.
        targets
            .iter()
            .copied()
            .filter(|k| match until {
                Until::AllReady | Until::AllHandled | Until::ComposedReady => {
                    self.is_live(k) && !self.never_ready(*k)
                }
                // A resource whose Observe fails for good keeps its finalizer: stuck by
                // design, not waited for.
                Until::AllGone => {
                    self.log
                        .records
                        .get(k)
                        .is_some_and(|r| r.deleted_us.is_some())
                        && !self.fails_for_good(*k)
                }
                Until::Elapsed => true,
            })
            .collect()
    }

    /// The resources of `targets` that have not met `until` in what the watches saw.
    fn unmet(&self, until: Until, targets: &[(usize, u32)], watches: &Watches) -> Unmet {
        let waited = self.waited_for(until, targets);
        let seen = watches.lock();
        Unmet {
            until,
            of: waited.len(),
            pending: waited
                .iter()
                .map(|(g, i)| self.key(*g, *i))
                .filter(|key| !self.meets(until, key, &seen))
                .collect(),
        }
    }

    /// Waits until every relevant target meets `until`, or the deadline; with `early`
    /// (a resync phase), stops with its verdict while no requested resource has recorded
    /// its token.
    #[allow(clippy::too_many_arguments)]
    async fn wait_until(
        &self,
        until: Until,
        targets: &[(usize, u32)],
        watches: &Watches,
        deadline: Instant,
        bar: &PhaseBar,
        mut early: Option<NotHandled>,
        cloud: &impl CloudControl,
    ) -> PhaseEnd {
        let relevant = self.waited_for(until, targets);
        bar.set_total(relevant.len());
        let keys: HashSet<Key> = relevant.iter().map(|(g, i)| self.key(*g, *i)).collect();
        // Subscribed before the first count, so that no change between the two is lost;
        // then only the keys that changed are looked at again.
        let changes = watches.subscribe();
        let mut pending: HashSet<Key> = {
            let seen = watches.lock();
            keys.iter()
                .filter(|key| !self.meets(until, key, &seen))
                .cloned()
                .collect()
        };
        loop {
            let changed = changes.take();
            if !changed.is_empty() {
                let seen = watches.lock();
                for key in changed {
                    if !keys.contains(&key) {
                        continue;
                    }
                    if self.meets(until, &key, &seen) {
                        pending.remove(&key);
                    } else {
                        pending.insert(key);
                    }
                }
            }
            bar.set(keys.len() - pending.len());
            if pending.is_empty() {
                return PhaseEnd::Completed;
            }
            if let Some(watch) = early.as_mut() {
                if self.any_handled(&keys, watches) {
                    // The provider records requests: no verdict, only the timeout.
                    early = None;
                } else {
                    watch.look(cloud, Instant::now()).await;
                    if let Some(f) = watch.verdict(Instant::now()) {
                        return PhaseEnd::Failed(f);
                    }
                }
            }
            if Instant::now() >= deadline {
                return PhaseEnd::TimedOut;
            }
            // Look again on a change, at most every RECOUNT.
            let next = Instant::now() + RECOUNT;
            tokio::select! {
                () = watches.changed() => tokio::time::sleep_until(next.min(deadline)).await,
                () = tokio::time::sleep_until(deadline) => {}
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }

    /// Whether any of `keys` shows the token the driver asked it to handle.
    fn any_handled(&self, keys: &HashSet<Key>, watches: &Watches) -> bool {
        let seen = watches.lock();
        keys.iter().any(|k| {
            self.requested
                .get(k)
                .is_some_and(|t| seen.get(k).and_then(|s| s.handled.as_ref()) == Some(t))
        })
    }

    /// After a restart: waits until the new provider has observed (a cloud read) every live
    /// resource, reading mock-cloud's journal from `from` on. That is when the re-list
    /// backlog has drained.
    ///
    /// A read of the generic API names its collection, so it observes that kind's resource
    /// of the name; an AWS read names a bucket or a VPC and no kind, so it observes the
    /// resources of any other kind whose external name (as the watches last saw it, else
    /// the resource's name) it is, as `poll` matches calls to resources.
    async fn wait_observed(
        &self,
        cloud: &impl CloudControl,
        watches: &Watches,
        from: u64,
        deadline: Instant,
        bar: &PhaseBar,
    ) -> bool {
        // (kind for the sample provider's kinds, name in the cloud) → resources waiting.
        let mut missing: HashMap<(Option<String>, String), usize> = HashMap::new();
        {
            let seen = watches.lock();
            for ((g, _), r) in self.log.records.iter().filter(|(_, r)| r.is_live()) {
                let key = if self.scenario.groups[*g].kind.collection().is_some() {
                    (Some(r.kind.clone()), r.name.clone())
                } else {
                    let external = seen
                        .get(&(r.kind.clone(), r.name.clone()))
                        .and_then(|s| s.external_name.clone());
                    (None, external.unwrap_or_else(|| r.name.clone()))
                };
                *missing.entry(key).or_default() += 1;
            }
        }
        let total: usize = missing.values().sum();
        let mut left = total;
        bar.set_total(total);
        let mut cursor = from;
        loop {
            let calls = match cloud.calls_since(cursor).await {
                Ok(page) => page.calls,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the cloud's journal; retrying");
                    Vec::new()
                }
            };
            for call in calls {
                cursor = call.seq + 1;
                if action_of(&call) != Some(CallAction::Get) {
                    continue;
                }
                let kind = call
                    .collection
                    .and_then(kind_of_collection)
                    .map(str::to_owned);
                if let Some(n) = missing.remove(&(kind, call.name)) {
                    left -= n;
                }
            }
            bar.set(total - left);
            if left == 0 {
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
    /// `timeout`) until the provider has let them go, then deletes the `seeded` namespace,
    /// Secrets and ProviderConfigs. Returns whether everything was gone in time.
    pub async fn clean_up(
        &mut self,
        seeded: &[Seeded],
        watches: &Watches,
        timeout: Duration,
        progress: &Progress,
    ) -> bool {
        let deadline = Instant::now() + timeout;
        let live: Vec<(usize, u32)> = self
            .log
            .records
            .iter()
            .filter(|(_, r)| !r.create_failed)
            .map(|(k, _)| *k)
            .collect();
        progress.line(format_args!(
            "cleaning up: deleting {} resources and what the run created (--keep leaves them; Ctrl-C again leaves the rest and lists it)",
            live.len()
        ));
        let s = self.scenario;
        self.paced(&live, None, |g, i| {
            let api = self.api(g);
            let name = s.groups[g].resource_name(i, &s.name);
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
        let bar = progress
            .phase(self.log.spans.len(), "cleanup", "delete", keys.len())
            .plain_every(CLEANUP_PROGRESS_EVERY);
        let mut gone = false;
        let waiting = Instant::now();
        while Instant::now() < deadline {
            let left = {
                let seen = watches.lock();
                keys.iter()
                    .filter(|k| seen.get(*k).is_some_and(|s| s.gone_us.is_none()))
                    .count()
            };
            bar.note(
                &match time_left(keys.len() - left, keys.len(), waiting.elapsed()) {
                    Some(eta) => format!("about {:.0}s left", eta.as_secs_f64().ceil()),
                    None => "waiting for the provider to release the first".to_owned(),
                },
            );
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
        for seeded in seeded.iter().rev() {
            let api: Api<DynamicObject> = match &seeded.namespace {
                Some(ns) => Api::namespaced_with(self.client.clone(), ns, &seeded.resource),
                None => Api::all_with(self.client.clone(), &seeded.resource),
            };
            if let Err(e) = api.delete(&seeded.name, &DeleteParams::default()).await {
                tracing::warn!(error = %e, name = seeded.name, "cannot delete");
            }
            self.seeded_deleted += 1;
        }
        gone
    }

    /// What a clean-up that was stopped left in the cluster: the managed resources the
    /// watches still see (`KIND NAME`), then the seeded objects it had not deleted yet.
    #[must_use]
    pub fn left_after_cleanup(&self, seeded: &[Seeded], watches: &Watches) -> Vec<String> {
        let seen = watches.lock();
        let mut left: Vec<String> = self
            .log
            .records
            .iter()
            .filter(|(k, r)| {
                !r.create_failed
                    && seen
                        .get(&self.key(k.0, k.1))
                        .is_some_and(|s| s.gone_us.is_none())
            })
            .map(|(_, r)| format!("{} {}", r.kind, r.name))
            .collect();
        drop(seen);
        left.extend(
            seeded
                .iter()
                .rev()
                .skip(self.seeded_deleted)
                .map(|s| match &s.namespace {
                    Some(ns) => format!("{} {ns}/{}", s.resource.kind, s.name),
                    None => format!("{} {}", s.resource.kind, s.name),
                }),
        );
        left
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
                let api = self.api(g);
                let obj = objects::managed_resource(s, &s.groups[g], i);
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
            self.log.records.insert(
                (g, i),
                Record {
                    kind: group.kind.to_string(),
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
            let api = self.api(g);
            let name = s.groups[g].resource_name(i, &s.name);
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
                let api = self.api(g);
                let name = s.groups[g].resource_name(i, &s.name);
                async move { api.delete(&name, &DeleteParams::default()).await.is_ok() }
            })
            .await;
        for (k, at, ok) in done {
            if ok && let Some(r) = self.log.records.get_mut(&k) {
                r.deleted_us = Some(at);
            }
        }
    }
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
