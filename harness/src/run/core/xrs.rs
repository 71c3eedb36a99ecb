//! The XR groups' part of a phase: creating, re-syncing (`crossplane.io/reconcile-
//! requested-at`), updating (a merge into each XR's `spec`) and deleting XRs, then waiting
//! for the phase's `until` in what the harness's watches of the XR kinds saw. The composed
//! managed resources are the provider's, watched and audited as a resource group's are.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::time::Instant;

use super::tally::{ComposedIndex, ComposedTally};
use crate::run::objects::{KindInfo, namespace};
use crate::run::progress::PhaseBar;
use crate::run::source::watches::{Key, SeenMap, Watches};
use crate::scenario::composite::XrGroup;
use crate::scenario::{GroupKind, Phase, Scenario, Until};

/// The XR kind of `g` in a run of `s`, Ready by the group's conditions.
#[must_use]
pub fn xr_kind_info(s: &Scenario, g: &XrGroup) -> KindInfo {
    KindInfo {
        name: GroupKind::Api(g.kind.clone()).to_string(),
        resource: g.kind.resource(),
        collection: None,
        namespace: g.kind.namespaced.then(|| namespace(s)),
        ready: g.ready.clone(),
    }
}

/// The XR kinds of the scenario, each once: what the harness watches beside the managed
/// kinds.
#[must_use]
pub fn xr_kinds(s: &Scenario) -> Vec<KindInfo> {
    let mut out: Vec<KindInfo> = Vec::new();
    for g in &s.composites.groups {
        let info = xr_kind_info(s, g);
        if !out.iter().any(|k| k.name == info.name) {
            out.push(info);
        }
    }
    out
}

/// One XR as the driver handled it.
#[derive(Clone, Debug, Default)]
pub struct XrRecord {
    /// Its group.
    pub group: String,
    /// Its key in the watches (kind, name).
    pub key: Key,
    /// When its create was accepted, µs since the run started.
    pub created_us: Option<u64>,
    /// When its delete was accepted.
    pub deleted_us: Option<u64>,
    /// The reconcile-request token it was last given.
    pub requested: Option<String>,
    /// Core's `ReconcileRequestHandled` events about it when the token was given: core
    /// keeps no token after a reconcile that composes (`status.lastHandledReconcileAt` is
    /// replaced by the status apply's answer, as in Crossplane), so a handled request is
    /// one more of these events.
    pub handled_before: u32,
}

/// What the driver did to XRs.
#[derive(Clone, Debug, Default)]
pub struct XrLog {
    /// Every XR the run wrote, by (XR group, index).
    pub records: BTreeMap<(usize, u32), XrRecord>,
    /// Writes the API server refused.
    pub failed_writes: u64,
    /// What core did in each phase (a composite scenario's), in phase order.
    pub phases: Vec<crate::result::core::CorePhase>,
    /// Phases whose counters a core process's metrics could not give (read errors).
    pub unread_phases: Vec<String>,
}

/// The XR part of phases.
pub struct XrDriver<'s> {
    pub(super) scenario: &'s Scenario,
    pub(super) client: kube::Client,
    /// The composed kinds' names as the watches key them.
    composed_kinds: Vec<String>,
    /// What it did.
    pub log: XrLog,
    /// Core's own phases' state.
    pub(super) core: super::phase_state::CorePhases,
}

impl<'s> XrDriver<'s> {
    /// A driver whose writes go through `client`.
    #[must_use]
    pub fn new(scenario: &'s Scenario, client: kube::Client) -> Self {
        XrDriver {
            scenario,
            client,
            composed_kinds: crate::run::objects::composed_kinds(scenario)
                .into_iter()
                .map(|k| k.name)
                .collect(),
            log: XrLog::default(),
            core: super::phase_state::CorePhases::default(),
        }
    }

    /// Every XR whose create was accepted: its API and name.
    #[must_use]
    pub fn created(&self) -> Vec<(Api<DynamicObject>, String)> {
        self.log
            .records
            .iter()
            .filter(|(_, r)| r.created_us.is_some())
            .map(|(&(g, _), r)| (self.api(g), r.key.1.clone()))
            .collect()
    }

    pub(super) fn api(&self, g: usize) -> Api<DynamicObject> {
        xr_kind_info(self.scenario, &self.scenario.composites.groups[g]).api(&self.client)
    }

    fn targets(&self, groups: &[usize]) -> Vec<(usize, u32)> {
        groups
            .iter()
            .flat_map(|&g| (0..self.scenario.composites.groups[g].count).map(move |i| (g, i)))
            .collect()
    }

    fn record(&mut self, (g, i): (usize, u32)) -> &mut XrRecord {
        let s = self.scenario;
        let group = &s.composites.groups[g];
        self.log.records.entry((g, i)).or_insert_with(|| XrRecord {
            group: group.name.clone(),
            key: (
                GroupKind::Api(group.kind.clone()).to_string(),
                group.xr_name(i, &s.name),
            ),
            ..XrRecord::default()
        })
    }

    /// The writes of `phase` to its XR groups (none for other actions), counted on `bar`;
    /// `now_us` reads the run's clock.
    pub(crate) async fn act(
        &mut self,
        phase: &Phase,
        rate: Option<f64>,
        bar: &PhaseBar,
        now_us: impl Fn() -> u64,
    ) {
        use crate::scenario::Action;
        if self.core_act(phase).await {
            return;
        }
        let targets = self.targets(&phase.composites);
        if targets.is_empty() || phase.action.groups().is_none() {
            return;
        }
        bar.note("XRs written");
        bar.set_total(targets.len());
        bar.set(0);
        let gap = rate.map(|r| Duration::from_secs_f64(1.0 / r));
        let s = self.scenario;
        let ns = namespace(s);
        let token = format!("{}-{}", phase.name, now_us());
        let handled = if matches!(phase.action, Action::Resync { .. }) {
            self.handled().await
        } else {
            BTreeMap::new()
        };
        for (n, &(g, i)) in targets.iter().enumerate() {
            if let (Some(gap), true) = (gap, n > 0) {
                tokio::time::sleep(gap).await;
            }
            let api = self.api(g);
            let group = &s.composites.groups[g];
            let name = group.xr_name(i, &s.name);
            let ok = match &phase.action {
                Action::Create { .. } => {
                    let body = group.xr(i, &s.name, Some(&ns));
                    match serde_json::from_value::<DynamicObject>(body) {
                        Ok(xr) => api.create(&PostParams::default(), &xr).await.is_ok(),
                        Err(_) => false,
                    }
                }
                Action::Resync { .. } => {
                    let body = json!({"metadata": {"annotations": {
                        composer::composite::RECONCILE_REQUESTED_AT_ANNOTATION: token}}});
                    api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                        .await
                        .is_ok()
                }
                Action::Update { spec, .. } => {
                    let body = json!({"spec": spec});
                    api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                        .await
                        .is_ok()
                }
                Action::Delete { .. } => {
                    // Foreground, as a platform team deletes an XR: its composed resources
                    // go first.
                    api.delete(&name, &DeleteParams::foreground()).await.is_ok()
                }
                _ => continue,
            };
            let at = now_us();
            let record = self.record((g, i));
            match (&phase.action, ok) {
                (_, false) => self.log.failed_writes += 1,
                (Action::Create { .. }, true) => record.created_us = Some(at),
                (Action::Delete { .. }, true) => record.deleted_us = Some(at),
                (Action::Resync { .. }, true) => {
                    record.handled_before = handled.get(&name).copied().unwrap_or(0);
                    record.requested = Some(token.clone());
                }
                _ => {}
            }
            bar.set(n + 1);
        }
        bar.note("");
    }

    fn meets(
        &self,
        until: Until,
        (r, want): (&XrRecord, usize),
        (seen, composed): (&SeenMap, Option<&ComposedIndex>),
        handled: &BTreeMap<String, u32>,
    ) -> bool {
        let s = || seen.get(&r.key);
        match until {
            Until::AllReady => s().is_some_and(|s| s.ready && s.gone_us.is_none()),
            Until::ComposedReady => {
                let c = composed.map_or(super::tally::Composed::NONE, |i| i.get(&r.key.1));
                c.seen >= want && c.ready
            }
            Until::AllHandled => {
                r.requested.is_none()
                    || s().and_then(|s| s.handled.as_ref()) == r.requested.as_ref()
                    || handled.get(&r.key.1).copied().unwrap_or(0) > r.handled_before
            }
            Until::AllGone => s().is_some_and(|s| s.gone_us.is_some()),
            Until::Elapsed => true,
        }
    }

    /// The XRs of `phase` that have not met its `until`.
    pub async fn pending(&self, phase: &Phase, watches: &Watches) -> Vec<Key> {
        let mut keys = Vec::new();
        self.unmet(phase, watches, None, |k| keys.push(k.clone()))
            .await;
        keys
    }

    /// Calls `each` with the key of every XR of `phase` that has not met its `until` (of the
    /// revision while a new one is not made), reading the XRs'
    /// composed resources from `tally` when there is one.
    async fn unmet(
        &self,
        phase: &Phase,
        watches: &Watches,
        tally: Option<&ComposedTally>,
        mut each: impl FnMut(&Key),
    ) {
        if matches!(phase.action, crate::scenario::Action::CompositionUpdate(_))
            && phase.until == Until::AllReady
        {
            for key in self.revision_pending(phase, watches).await {
                each(&key);
            }
            return;
        }
        let handled = if phase.until == Until::AllHandled {
            self.handled().await
        } else {
            BTreeMap::new()
        };
        let guard = watches.lock();
        let seen: &SeenMap = &guard;
        // Without a tally (a single check), one pass over what the watches saw.
        let built;
        let index = match tally {
            Some(t) => Some(t.index()),
            None if phase.until == Until::ComposedReady => {
                built = ComposedIndex::build(&self.composed_kinds, seen);
                Some(&built)
            }
            None => None,
        };
        let groups = &self.scenario.composites.groups;
        for &g in &phase.composites {
            // The composed resources each XR of the group must have.
            let want = groups[g].shape.resources_per_xr().unwrap_or(1) as usize;
            for i in 0..groups[g].count {
                let Some(r) = self.log.records.get(&(g, i)) else {
                    continue;
                };
                let live = match phase.until {
                    Until::AllGone => r.deleted_us.is_some(),
                    _ => r.created_us.is_some() && r.deleted_us.is_none(),
                };
                if live && !self.meets(phase.until, (r, want), (seen, index), &handled) {
                    each(&r.key);
                }
            }
        }
    }

    /// Waits until every XR of `phase` meets its `until`, or `deadline`, counting on `bar`
    /// the XRs that did; whether they all did.
    pub(crate) async fn wait(
        &self,
        phase: &Phase,
        watches: &Watches,
        (deadline, bar): (Instant, &PhaseBar),
    ) -> bool {
        let total = self.targets(&phase.composites).len();
        if total > 0 {
            bar.note(match phase.until {
                Until::AllReady => "XRs Ready",
                Until::AllHandled => "XRs that handled the request",
                Until::AllGone => "XRs gone",
                Until::ComposedReady => "XRs whose composed resources are Ready",
                Until::Elapsed => "XRs",
            });
            bar.set_total(total);
        }
        let mut tally = (phase.until == Until::ComposedReady)
            .then(|| ComposedTally::new(watches, &self.composed_kinds));
        let mut checked: Option<Instant> = None;
        loop {
            // A check reads every XR of the phase (and, with the tally, the composed
            // resources that changed): at every watch event of a creation storm that is
            // quadratic in the XRs, so checks are at least CHECK_SPACING apart (a phase ends
            // at most that late).
            if let Some(at) = checked {
                let next = (at + CHECK_SPACING).min(deadline);
                if Instant::now() < next {
                    tokio::time::sleep_until(next).await;
                }
            }
            checked = Some(Instant::now());
            if let Some(tally) = tally.as_mut() {
                tally.update(watches);
            }
            let mut pending = 0;
            self.unmet(phase, watches, tally.as_ref(), |_| pending += 1)
                .await;
            bar.set(total.saturating_sub(pending));
            if pending == 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            // A revision's fan-out changes every XR and composed resource: its check lists
            // them, once a second rather than at every change.
            if matches!(phase.action, crate::scenario::Action::CompositionUpdate(_)) {
                tokio::time::sleep(Duration::from_secs(1).min(deadline - Instant::now())).await;
                continue;
            }
            tokio::select! {
                () = watches.changed() => {}
                () = tokio::time::sleep_until(deadline) => {}
                () = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
    }
}

/// The least time between two checks of a phase's XRs ([`XrDriver::wait`]).
const CHECK_SPACING: Duration = Duration::from_millis(50);

/// Core's `ReconcileRequestHandled` events in `namespace` (core/v1, as client-go's recorder
/// writes them), counted by the XR they are about (an event's `count` counts its repeats).
impl XrDriver<'_> {
    /// How many times core handled a reconcile request of each XR, by its name: in this
    /// process, the `ReconcileRequestHandled` events its reconcilers recorded (each
    /// reconcile that found a token it had not recorded); else those the Events API shows,
    /// which client-go's spam filter can hold back for minutes.
    async fn handled(&self) -> BTreeMap<String, u32> {
        match &self.core.probe {
            Some(probe) => probe
                .recorded
                .by_object(composer::composite::REASON_RECONCILE_REQUEST_HANDLED)
                .into_iter()
                .map(|(name, n)| (name, u32::try_from(n).unwrap_or(u32::MAX)))
                .collect(),
            None => handled_events(&self.client, &namespace(self.scenario)).await,
        }
    }
}

async fn handled_events(client: &kube::Client, namespace: &str) -> BTreeMap<String, u32> {
    use k8s_openapi::api::core::v1::Event;
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    let mut out = BTreeMap::new();
    let Ok(list) = api.list(&kube::api::ListParams::default()).await else {
        return out;
    };
    for e in list.items {
        if e.reason.as_deref() != Some(composer::composite::REASON_RECONCILE_REQUEST_HANDLED) {
            continue;
        }
        let Some(name) = e.involved_object.name else {
            continue;
        };
        let n = e.count.map_or(1, |c| u32::try_from(c).unwrap_or(0));
        *out.entry(name).or_default() += n;
    }
    out
}
