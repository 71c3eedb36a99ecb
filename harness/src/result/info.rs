//! The scenario as a result records it: name, settings, overrides, planned phases, and the
//! workload lines that decide whether two results can be compared.

use super::model::{ScenarioInfo, SettingsInfo};
use crate::scenario::{Action, Scenario};
use limiter::go::GoDuration;

/// What the provider is put through, apart from its settings, one line per group, phase,
/// cloud section and assertion. The lines are built from the validated scenario, so a
/// `--set` that changes a count or a duration changes them, and a comment or a reordered
/// key does not.
#[must_use]
pub fn workload(s: &Scenario) -> Vec<String> {
    let mut lines = Vec::new();
    for g in &s.groups {
        let mut line = format!(
            "group {}: {} × {} in account {}, spec {}",
            g.name, g.count, g.kind, g.account, g.spec
        );
        if let Some(ns) = &g.namespace {
            line.push_str(&format!(", namespace {ns}"));
        }
        if !g.template.is_null() {
            line.push_str(&format!(", template {}", g.template));
        }
        lines.push(line);
    }
    for (kind, c) in &s.calls {
        if *c != crate::scenario::Calls::SAMPLE {
            lines.push(format!(
                "calls of {kind}: connect {}, observe {}, create {}, update {}, delete {}",
                c.connect, c.observe, c.create, c.update, c.delete
            ));
        }
    }
    for o in &s.objects {
        // Kind and name only: a Secret's data stays out of the reports.
        let name = o.body.pointer("/metadata/name").and_then(|v| v.as_str());
        lines.push(format!(
            "object {} {} {}",
            o.kind.api_version(),
            o.kind.kind,
            name.unwrap_or_default()
        ));
    }
    // The composite layer: what core composes (its flags are settings).
    let c = &s.composites;
    for f in &c.functions {
        lines.push(format!("function {} {:?}", f.name, f.runtime));
    }
    for comp in &c.compositions {
        lines.push(format!(
            "composition {}",
            serde_json::to_string(comp).unwrap_or_default()
        ));
    }
    for g in &c.groups {
        lines.push(format!(
            "XR group {}: {} × {} {} by {}, spec {}",
            g.name,
            g.count,
            g.kind.api_version(),
            g.kind.kind,
            g.composition,
            g.spec
        ));
    }
    for p in &s.phases {
        let groups = |gs: &[usize]| {
            gs.iter()
                .map(|&g| s.groups[g].name.as_str())
                .collect::<Vec<_>>()
                .join(",")
        };
        let what = match &p.action {
            Action::Create { rate, groups: gs }
            | Action::Resync {
                rate, groups: gs, ..
            }
            | Action::Delete { rate, groups: gs } => {
                format!("{} [{}] at {rate:?}/s", p.action.name(), groups(gs))
            }
            Action::Update {
                rate,
                groups: gs,
                spec,
            } => format!("update [{}] at {rate:?}/s with {spec}", groups(gs)),
            Action::CompositionUpdate(edit) => format!(
                "compositionUpdate of Composition {} by {}",
                edit.composition, edit.patch
            ),
            other => format!("{other:?}"),
        };
        lines.push(format!(
            "phase {}: {what}, until {:?} within {:?}",
            p.name, p.until, p.timeout
        ));
    }
    lines.push(format!("cloud: {:?}", s.cloud));
    // The API client's limits and the SDK's attempts follow from the settings (a profile
    // derives the client's QPS from R; the AWS retry mode sets the attempts): they are in
    // `setting_lines`, not the workload.
    let i = &s.prediction;
    lines.push(format!(
        "prediction inputs: reconcile {:?}, min {:?}, max {:?}, cpu {:?}, self event {}, alpha {}, api {:?}",
        i.reconcile, i.min_reconcile, i.max_reconcile, i.reconcile_cpu, i.self_event, i.alpha, i.api
    ));
    for a in &s.assertions {
        lines.push(format!("assertion {}", a.name));
    }
    lines
}

/// The provider's settings and what follows from them, one `name: value` line each.
#[must_use]
pub fn setting_lines(s: &Scenario) -> Vec<String> {
    let st = &s.settings;
    let go = |d: std::time::Duration| GoDuration::from_std(d).to_string();
    let mut lines = vec![
        format!("maxReconcileRate: {}", st.rate()),
        format!("rateLimitModel: {}", st.model),
        format!("pollInterval: {}", go(st.poll_interval)),
        format!("pollJitterPercent: {}", st.poll_jitter_percent),
        format!("pollJitterSizing: {:?}", st.poll_jitter_sizing),
        format!("minPollInterval: {}", go(st.min_poll_interval)),
        format!("scopedBuckets: {}", st.scoped_buckets),
        format!(
            "backoffBase: {}",
            st.backoff_base.map_or("the model's".to_owned(), go)
        ),
        format!(
            "backoffMax: {}",
            st.backoff_max.map_or("the model's".to_owned(), go)
        ),
        format!("errorRequeue: {:?}", st.error_requeue),
        format!("observeOnlyAbsent: {:?}", st.observe_only_absent),
        format!("eventClient: {:?}", st.event_client),
        format!("reconcileRequests: {:?}", st.reconcile_requests),
        format!("aws: {:?}", s.aws),
        format!("sdkAttempts: {}", s.prediction.sdk_attempts),
    ];
    if let Some(c) = &s.prediction.client {
        lines.push(format!("api client: {c:?}"));
    }
    // Crossplane core's flags, for a composite scenario: a run under other flags is a
    // settings change of the same workload.
    if s.composites.any() {
        for arg in s.composites.core.args() {
            let (flag, value) = arg
                .trim_start_matches('-')
                .split_once('=')
                .unwrap_or((arg.as_str(), ""));
            lines.push(format!("core {flag}: {value}"));
        }
    }
    lines
}

/// The scenario block of a result.
#[must_use]
pub fn scenario_info(s: &Scenario) -> ScenarioInfo {
    ScenarioInfo {
        name: s.name.clone(),
        file: s.file.clone(),
        description: s.description.clone(),
        resources: s.total_resources(),
        settings: SettingsInfo {
            max_reconcile_rate: s.settings.rate(),
            rate_limit_model: s.settings.model.to_string(),
            poll_interval_s: s.settings.poll_interval.as_secs_f64(),
            poll_jitter_percent: s.settings.poll_jitter_percent,
            min_poll_interval_s: s.settings.min_poll_interval.as_secs_f64(),
        },
        overrides: s.sets.iter().map(ToString::to_string).collect(),
        phases: s
            .phases
            .iter()
            .map(|p| format!("{} ({})", p.name, p.action.name()))
            .collect(),
        workload: workload(s),
        setting_lines: setting_lines(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_with;

    const TINY: &str = "apiVersion: harness/v1\nname: tiny\nprovider: {maxReconcileRate: 10}\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 1m}\n";

    #[test]
    fn settings_do_not_change_the_workload_but_counts_and_durations_do() {
        let base = workload(&parse_with(TINY, "t.yaml", &[]).unwrap());
        let set = |a: &str| {
            let s = parse_with(TINY, "t.yaml", &[a.parse().unwrap()]).unwrap();
            workload(&s)
        };
        assert_eq!(set("provider.maxReconcileRate=20"), base);
        assert_ne!(set("resources.b.count=4"), base);
        assert_ne!(set("phases.hold.duration=10s"), base);
    }

    #[test]
    fn the_overrides_are_recorded_as_given() {
        let s = parse_with(
            TINY,
            "t.yaml",
            &["provider.maxReconcileRate=20".parse().unwrap()],
        )
        .unwrap();
        let info = scenario_info(&s);
        assert_eq!(info.overrides, ["provider.maxReconcileRate=20"]);
        assert_eq!(info.phases, ["create (create)", "hold (hold)"]);
    }
}
