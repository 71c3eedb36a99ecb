//! Core's own phases and what every phase costs core.
//!
//! - `compositionUpdate`: the harness edits the Composition (the scenario's JSON Patch, as
//!   a user's `kubectl patch --type json`), core's revision controller makes a new
//!   CompositionRevision, and the XRs on the Automatic policy move to it (#7114). The phase
//!   waits until every XR of the Composition references that revision and is Ready, and
//!   every composed resource is Ready with its `Synced` condition at its generation (the
//!   provider has seen the re-rendered spec).
//! - `functionFault`: the in-process function's switch ([`super::faults`]) is set for the
//!   phase's duration, then cleared (without a duration it stays set).
//! - For every phase, core's counters are read at its start and end
//!   ([`crate::result::core::CorePhase`]): function calls (core's and the functions' own),
//!   calls its deadline ended, breaker opens and dropped events, the functions' latency
//!   histogram; for a compositionUpdate the
//!   composed resources whose spec changed and those it created, and the cloud's Updates.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use tokio::time::Instant;

use super::embedded::CoreProbe;
use super::phase_state::{CoreMetrics, Counters, OpenPhase};
use super::xrs::XrDriver;
use crate::result::core::CorePhase;
use crate::run::objects::composed_kinds;
use crate::run::source::watches::Watches;
use crate::run::target::CloudControl;
use crate::scenario::composite::CompositionEdit;
use crate::scenario::{Action, Phase};

fn counters(probe: &CoreProbe) -> Counters {
    let mut c = Counters::default();
    for ((f, _), n) in probe.metrics.requests_by_method() {
        *c.calls.entry(f).or_default() += n;
    }
    for (labels, r) in probe.metrics.responses() {
        if labels.code == "DeadlineExceeded" {
            c.deadline += r.count;
        }
    }
    for (f, own) in probe.faults.counts() {
        c.reached.insert(f.clone(), own.reached);
        c.failed.insert(f, own.failed);
    }
    for s in &probe.stats {
        let s = s.snapshot();
        c.reconciles += s.total();
        c.errors += s.error + s.terminal_error;
    }
    for (_, b) in &probe.breakers {
        let m = b.metrics();
        c.opens += m.opens;
        c.dropped += m.dropped;
    }
    c.latency = super::measure::latency(&probe.metrics);
    c
}

/// Core's counters at one instant, or why there are none.
enum Read {
    Counters(Counters),
    /// A core process's metrics could not be read.
    Unread,
    /// No composite layer runs.
    NoCore,
}

/// Core's counters now: the embedded core's from its handles, a core process's from its
/// metrics (function calls, the responses its deadline ended and the latency histogram;
/// its reconciles and breakers are not read).
async fn read(probe: Option<&CoreProbe>, metrics: Option<&CoreMetrics>) -> Read {
    match (probe, metrics) {
        (Some(p), _) => Read::Counters(counters(p)),
        (None, Some(m)) => match m.remote.get_text(&m.path).await {
            Ok(text) => Read::Counters(counters_of_text(&text)),
            Err(e) => {
                tracing::warn!(error = %e, "core's metrics could not be read at a phase's start or end");
                Read::Unread
            }
        },
        (None, None) => Read::NoCore,
    }
}

/// A core process's counters from the text of its metrics.
fn counters_of_text(text: &str) -> Counters {
    let f = super::process::function_figures(text);
    let deadline = crate::run::prometheus::samples(text, "function_run_function_response_total")
        .filter(|(labels, _)| {
            crate::run::prometheus::label_value(labels, "grpc_code") == Some("DeadlineExceeded")
        })
        .map(|(_, v)| v)
        .sum::<f64>();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Counters {
        calls: f.calls,
        deadline: deadline.max(0.0) as u64,
        latency: f.latency,
        ..Counters::default()
    }
}

fn delta(after: &BTreeMap<String, u64>, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0)))
        .collect()
}

/// The generation of every composed resource of `s` (by kind and name), not being deleted.
async fn generations(driver: &XrDriver<'_>) -> BTreeMap<(String, String), i64> {
    let mut out = BTreeMap::new();
    for kind in composed_kinds(driver.scenario) {
        let Ok(list) = kind.api(&driver.client).list(&ListParams::default()).await else {
            continue;
        };
        for o in list.items {
            if o.metadata.deletion_timestamp.is_some() {
                continue;
            }
            out.insert(
                (
                    kind.name.clone(),
                    o.metadata.name.clone().unwrap_or_default(),
                ),
                o.metadata.generation.unwrap_or(0),
            );
        }
    }
    out
}

/// The cloud's Update calls since `since`.
async fn cloud_updates(cloud: &impl CloudControl, since: u64) -> Option<u64> {
    let page = cloud.calls_since(since).await.ok()?;
    Some(
        page.calls
            .iter()
            .filter(|c| c.action == Some(mock_cloud::Action::Update))
            .count() as u64,
    )
}

/// The newest CompositionRevision of Composition `name`: its name and number.
async fn newest_revision(client: &kube::Client, name: &str) -> Option<(String, i64)> {
    let api: Api<composer::api::CompositionRevision> = Api::all(client.clone());
    let lp =
        ListParams::default().labels(&format!("{}={name}", composer::api::LABEL_COMPOSITION_NAME));
    let list = api.list(&lp).await.ok()?;
    list.items
        .into_iter()
        .map(|r| (r.metadata.name.clone().unwrap_or_default(), r.spec.revision))
        .max_by_key(|(_, n)| *n)
}

/// The revision an XR references (`spec.crossplane.compositionRevisionRef`, or v1's
/// `spec.compositionRevisionRef`).
fn revision_of(xr: &DynamicObject) -> Option<&str> {
    let spec = xr.data.get("spec")?;
    spec.pointer("/crossplane/compositionRevisionRef/name")
        .or_else(|| spec.pointer("/compositionRevisionRef/name"))
        .and_then(serde_json::Value::as_str)
}

/// Whether `o`'s Ready condition is True and its Synced condition was written for its
/// current generation.
fn synced_at_generation(o: &DynamicObject) -> bool {
    let Some(conditions) = o
        .data
        .pointer("/status/conditions")
        .and_then(serde_json::Value::as_array)
    else {
        return false;
    };
    let find = |t: &str| {
        conditions
            .iter()
            .find(|c| c.get("type").and_then(serde_json::Value::as_str) == Some(t))
    };
    let ready = find("Ready")
        .and_then(|c| c.get("status"))
        .and_then(serde_json::Value::as_str)
        == Some("True");
    let synced = find("Synced").is_some_and(|c| {
        c.get("status").and_then(serde_json::Value::as_str) == Some("True")
            && c.get("observedGeneration")
                .and_then(serde_json::Value::as_i64)
                == o.metadata.generation
    });
    ready && synced
}

impl XrDriver<'_> {
    /// Reads core's counters as phase `phase` starts, from the embedded core's handles or a
    /// core process's metrics (nothing for a scenario without core).
    pub async fn begin_phase(
        &mut self,
        phase: &Phase,
        (probe, metrics): (Option<CoreProbe>, Option<CoreMetrics>),
        now_us: u64,
        cloud: &impl CloudControl,
    ) {
        let before = match read(probe.as_ref(), metrics.as_ref()).await {
            Read::Counters(c) => c,
            Read::Unread => {
                self.log.unread_phases.push(phase.name.clone());
                return;
            }
            Read::NoCore => return,
        };
        let generations = if matches!(phase.action, Action::CompositionUpdate(_)) {
            Some(generations(self).await)
        } else {
            None
        };
        let cloud_seq = if matches!(phase.action, Action::CompositionUpdate(_)) {
            cloud.next_seq().await.ok()
        } else {
            None
        };
        self.core.open = Some(OpenPhase {
            phase: phase.name.clone(),
            action: phase.action.name().to_owned(),
            start_us: now_us,
            before,
            generations,
            cloud_seq,
        });
        self.core.probe = probe;
        self.core.metrics = metrics;
    }

    /// Reads core's counters as the phase ends and keeps its share in the log.
    pub async fn end_phase(&mut self, now_us: u64, cloud: &impl CloudControl) {
        let Some(open) = self.core.open.take() else {
            return;
        };
        let after = match read(self.core.probe.as_ref(), self.core.metrics.as_ref()).await {
            Read::Counters(c) => c,
            Read::Unread => {
                self.log.unread_phases.push(open.phase);
                return;
            }
            Read::NoCore => return,
        };
        let (mut updates, mut created) = (None, None);
        if let Some(before) = &open.generations {
            let now = generations(self).await;
            updates = Some(
                now.iter()
                    .filter(|(k, g)| before.get(*k).is_some_and(|b| *g > b))
                    .count() as u64,
            );
            created = Some(now.keys().filter(|k| !before.contains_key(*k)).count() as u64);
        }
        let cloud_updates = match open.cloud_seq {
            Some(seq) => cloud_updates(cloud, seq).await,
            None => None,
        };
        let b = &open.before;
        self.log.phases.push(CorePhase {
            revision: self.core.revisions.get(&open.phase).cloned(),
            phase: open.phase,
            action: open.action,
            start_us: open.start_us,
            end_us: now_us,
            requests: 0,
            function_calls: delta(&after.calls, &b.calls),
            function_reached: delta(&after.reached, &b.reached),
            function_failed: delta(&after.failed, &b.failed),
            deadline_exceeded: after.deadline - b.deadline,
            breaker_opens: after.opens - b.opens,
            breaker_dropped: after.dropped - b.dropped,
            reconciles: after.reconciles - b.reconciles,
            reconcile_errors: after.errors - b.errors,
            composed_updates: updates,
            composed_created: created,
            cloud_updates,
            function_latency: after.latency.since(&b.latency),
        });
    }

    /// The writes of core's own phases; whether `phase` is one.
    pub(super) async fn core_act(&mut self, phase: &Phase) -> bool {
        match &phase.action {
            Action::CompositionUpdate(edit) => {
                self.edit_composition(phase, edit).await;
                true
            }
            Action::FunctionFault {
                function,
                fault,
                duration,
            } => {
                let Some(probe) = &self.core.probe else {
                    tracing::error!(
                        function,
                        "no composite layer runs: the function fault has nothing to act on"
                    );
                    return true;
                };
                let faults = probe.faults.clone();
                if !faults.set(function, Some(fault.clone())) {
                    tracing::error!(function, "not an in-process function: no fault set");
                    return true;
                }
                if let Some(d) = duration {
                    tokio::time::sleep(*d).await;
                    faults.set(function, None);
                }
                true
            }
            _ => false,
        }
    }

    async fn edit_composition(&mut self, phase: &Phase, edit: &CompositionEdit) {
        let before = newest_revision(&self.client, &edit.composition)
            .await
            .map_or(0, |(_, n)| n);
        let patch: json_patch::Patch = match serde_json::from_value(edit.patch.clone()) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "the phase's patch is no JSON Patch");
                return;
            }
        };
        let api: Api<composer::api::Composition> = Api::all(self.client.clone());
        if let Err(e) = api
            .patch(
                &edit.composition,
                &PatchParams::default(),
                &Patch::Json::<()>(patch),
            )
            .await
        {
            tracing::error!(error = %e, composition = edit.composition, "cannot edit the Composition");
            self.log.failed_writes += 1;
            return;
        }
        // Core's revision controller makes the revision; the phase's timeout bounds the wait.
        let deadline = Instant::now() + phase.timeout;
        while Instant::now() < deadline {
            if let Some((name, n)) = newest_revision(&self.client, &edit.composition).await
                && n > before
            {
                self.core.revisions.insert(phase.name.clone(), name);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// compositionUpdate: the XRs of the phase not yet on its revision or not Ready, then
    /// the composed resources not yet Ready and synced at their generation.
    pub(super) async fn revision_pending(
        &self,
        phase: &Phase,
        watches: &Watches,
    ) -> Vec<crate::run::source::watches::Key> {
        let Some(revision) = self.core.revisions.get(&phase.name) else {
            return vec![(
                "CompositionRevision".to_owned(),
                "(the new revision, not made yet)".to_owned(),
            )];
        };
        let mut pending = Vec::new();
        let mut by_name = BTreeMap::new();
        for &g in &phase.composites {
            let Ok(list) = self.api(g).list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                by_name.insert(o.metadata.name.clone().unwrap_or_default(), o);
            }
        }
        {
            let seen = watches.lock();
            for r in self
                .log
                .records
                .iter()
                .filter(|((g, _), _)| phase.composites.contains(g))
                .map(|(_, r)| r)
                .filter(|r| r.created_us.is_some() && r.deleted_us.is_none())
            {
                let moved = by_name
                    .get(&r.key.1)
                    .and_then(revision_of)
                    .is_some_and(|n| n == revision);
                let ready = seen.get(&r.key).is_some_and(|s| s.ready);
                if !moved || !ready {
                    pending.push(r.key.clone());
                }
            }
        }
        if !pending.is_empty() {
            return pending;
        }
        for kind in composed_kinds(self.scenario) {
            let Ok(list) = kind.api(&self.client).list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                if o.metadata.deletion_timestamp.is_none() && !synced_at_generation(&o) {
                    pending.push((
                        kind.name.clone(),
                        o.metadata.name.clone().unwrap_or_default(),
                    ));
                }
            }
        }
        pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_processs_counters_are_its_function_calls_deadlines_and_latency() {
        let mut text = String::from(
            "function_run_function_request_total{function_name=\"resources\",grpc_method=\"RunFunction\"} 7\n\
             function_run_function_response_total{function_name=\"resources\",grpc_code=\"OK\"} 5\n\
             function_run_function_response_total{function_name=\"resources\",grpc_code=\"DeadlineExceeded\"} 2\n\
             function_run_function_seconds_sum{function_name=\"resources\",grpc_code=\"OK\"} 0.5\n",
        );
        for b in composer::function::metrics::SECONDS_BUCKETS {
            text.push_str(&format!(
                "function_run_function_seconds_bucket{{function_name=\"resources\",grpc_code=\"OK\",le=\"{b}\"}} 5\n"
            ));
        }
        let c = counters_of_text(&text);
        assert_eq!(c.calls.get("resources"), Some(&7));
        assert_eq!(c.deadline, 2);
        assert_eq!(c.latency.responses.get("resources"), Some(&7));
        assert_eq!(c.latency.buckets["resources"], vec![5; 11]);
        // What a process does not give stays 0.
        assert_eq!((c.reconciles, c.opens, c.dropped), (0, 0, 0));
    }
}
