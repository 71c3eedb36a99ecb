//! The `resources` section: groups of resources, their names, specs and annotation shares.

use std::collections::{BTreeMap, BTreeSet};

use limiter::crossplane::{POLL_INTERVAL_ANNOTATION, Settings};
use limiter::go::GoDuration;
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::error::Problem;
use crate::kinds::{Catalogue, GroupKind, Served};
use crate::model::{AnnotationShare, Cloud, ResourceGroup};
use crate::raw::{Kind, RawGroup, RawScenario};
use crate::template::{Template, Vars, check_json, render_json};

fn template(c: &mut Checker, s: &Spanned<String>) -> Option<Template> {
    Template::parse(&s.value)
        .map_err(|e| c.err(pos(s), e.to_string()))
        .ok()
}

pub(super) fn groups(
    c: &mut Checker,
    raw: &RawScenario,
    cloud: &Cloud,
    settings: &Settings,
    catalogue: &Catalogue,
) -> Vec<ResourceGroup> {
    if raw.resources.is_empty() && raw.composites.is_empty() {
        c.err(
            pos(&raw.name),
            "resources is empty, expected at least one group (or an XR group in `composites`)",
        );
    }
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for g in &raw.resources {
        out.extend(group(
            c,
            g,
            cloud,
            settings,
            catalogue,
            &raw.name.value,
            &mut names,
        ));
    }
    for (i, g) in out.iter().enumerate() {
        let other = out[..i]
            .iter()
            .find(|o| o.kind == g.kind && o.ready != g.ready);
        if let (Some(o), Some(raw)) = (other, raw.resources.iter().find(|r| r.name.value == g.name))
        {
            c.err(
                pos(&raw.kind),
                format!(
                    "group {} waits for other conditions than group {} of the same kind {}, expected one `ready` per kind",
                    g.name, o.name, g.kind
                ),
            );
        }
    }
    out
}

fn group(
    c: &mut Checker,
    g: &RawGroup,
    cloud: &Cloud,
    settings: &Settings,
    catalogue: &Catalogue,
    scenario: &str,
    names: &mut BTreeSet<String>,
) -> Option<ResourceGroup> {
    c.name(&g.name, "group name");
    let (kind, served) =
        match super::kinds::group_kind(c, catalogue, g.api_version.as_ref(), &g.kind) {
            Some((k, s)) => (Some(k), s),
            None => (None, None),
        };
    c.unique(names, &g.name, "group");
    if g.count.value == 0 {
        c.err(pos(&g.count), "count is 0, expected at least 1");
    }
    let account = match &g.account {
        Some(a) if cloud.account(&a.value).is_none() => {
            c.unknown(a, "account", cloud.accounts.iter().map(|a| a.name.as_str()));
            None
        }
        Some(a) => Some(a.value.clone()),
        None => Some(cloud.accounts[0].name.clone()),
    };
    let name_pattern = match &g.name_pattern {
        Some(p) => {
            let t = template(c, p);
            if let Some(t) = &t
                && g.count.value > 1
                && !t.uses_index()
            {
                c.err(
                    pos(p),
                    "namePattern gives every resource the same name, expected it to use {{index}}",
                );
            }
            t
        }
        None => Template::parse("{{group}}-{{index}}").ok(),
    };
    let spec = match &g.spec {
        Some(s) => c.spec(s),
        None => match &kind {
            Some(GroupKind::Short(k)) => default_spec(*k),
            _ => serde_json::json!({}),
        },
    };
    let namespace = kind.as_ref().and_then(|k| namespace(c, g, k));
    let template = match &g.template {
        Some(t) => template_of(c, t),
        None => serde_json::Value::Null,
    };
    let ready = ready(c, g);
    let mut annotations = Vec::new();
    let mut next = 0u32;
    let mut total = 0.0;
    for share in &g.annotations {
        let Some(pct) = c.range(&share.percent, "percent", 0.0, true, 100.0) else {
            continue;
        };
        total += pct;
        if total > 100.0 + 1e-9 {
            c.err(
                pos(&share.percent),
                format!("annotation shares add up to {total}%, expected at most 100%"),
            );
            continue;
        }
        let end = ((total / 100.0) * f64::from(g.count.value)).round() as u32;
        let mut values = BTreeMap::new();
        for (k, v) in &share.values.value {
            match Template::parse(v) {
                Ok(t) => {
                    if k == POLL_INTERVAL_ANNOTATION {
                        let sample = t.render(Vars {
                            index: next,
                            group: &g.name.value,
                            scenario,
                        });
                        let eff = settings.effective_poll(Some(&sample));
                        if let Some(r) = eff.rejected {
                            c.warnings.push(Problem::new(
                                pos(&share.values),
                                format!(
                                    "{r}: those resources poll at the default {}",
                                    GoDuration::from_std(settings.poll_interval)
                                ),
                            ));
                        } else if eff.clamped {
                            c.warnings.push(Problem::new(pos(&share.values), format!("{POLL_INTERVAL_ANNOTATION} {sample:?} is below minPollInterval: clamped to {}", GoDuration::from_std(eff.interval))));
                        }
                    }
                    values.insert(k.clone(), t);
                }
                Err(e) => c.err(pos(&share.values), format!("annotation {k}: {e}")),
            }
        }
        annotations.push(AnnotationShare {
            start: next,
            end,
            values,
        });
        next = end;
    }
    let faults = super::faults::shares(c, g);
    let management_policies = super::faults::policies(c, g);
    let kind = kind?;
    if matches!(kind, GroupKind::Api(_)) && (!faults.is_empty() || g.drift.is_some()) {
        c.err(
            pos(&g.kind),
            format!("{kind}'s calls go to mock-cloud's AWS front ends, which per-resource faults and drift do not reach, expected no `faults` or `drift` in this group"),
        );
    }
    let group = ResourceGroup {
        name: g.name.value.clone(),
        kind,
        namespace,
        template,
        ready,
        count: g.count.value,
        account: account?,
        name_pattern: name_pattern?,
        spec,
        annotations,
        faults,
        management_policies,
        pos: pos(&g.kind),
    };
    if let Some(served) = &served {
        let at = g.template.as_ref().map_or_else(|| pos(&g.kind), pos);
        // The first resource, and the last where it fails otherwise (placeholders).
        let first = super::kinds::check_object(served, &object_of(&group, served, 0, scenario));
        let what = format!("the template of {}'s resource 0", group.name);
        super::kinds::report(c, at, &what, &first);
        let last = group.count - 1;
        if last > 0 {
            let problems: Vec<String> =
                super::kinds::check_object(served, &object_of(&group, served, last, scenario))
                    .into_iter()
                    .filter(|p| !first.contains(p))
                    .collect();
            let what = format!("the template of {}'s resource {last}", group.name);
            super::kinds::report(c, at, &what, &problems);
        }
    }
    Some(group)
}

/// Resource `index` of `group` as the run creates it, for the schema check (the run's
/// namespace does not matter to it).
fn object_of(
    group: &ResourceGroup,
    served: &Served,
    index: u32,
    scenario: &str,
) -> serde_json::Value {
    let vars = Vars {
        index,
        group: &group.name,
        scenario,
    };
    let mut object = serde_json::json!({
        "apiVersion": served.kind.api_version(),
        "kind": served.kind.kind,
        "metadata": {"name": group.name_pattern.render(vars)},
        "spec": {"forProvider": group.resource_spec(index, scenario)},
    });
    if matches!(group.kind, GroupKind::Short(_)) {
        object["spec"]["providerConfigRef"] = serde_json::json!({"name": group.account});
    }
    merge_template(&mut object, &render_json(&group.template, vars));
    object
}

/// Merges a rendered template into an object: its `metadata.labels` and
/// `metadata.annotations`, and its `spec` fields next to `forProvider`.
pub fn merge_template(object: &mut serde_json::Value, template: &serde_json::Value) {
    if let Some(meta) = template.get("metadata").and_then(|m| m.as_object()) {
        for (k, v) in meta {
            object["metadata"][k] = v.clone();
        }
    }
    if let Some(spec) = template.get("spec").and_then(|m| m.as_object()) {
        for (k, v) in spec {
            object["spec"][k] = v.clone();
        }
    }
}

/// A group's template: a mapping of `metadata` (only `labels` and `annotations`) and
/// `spec` (without `forProvider`, which the group's `spec` gives), placeholders allowed.
fn template_of(c: &mut Checker, t: &Spanned<serde_json::Value>) -> serde_json::Value {
    if let Err(e) = check_json(&t.value) {
        c.err(pos(t), format!("template: {e}"));
    }
    let Some(map) = t.value.as_object() else {
        c.err(
            pos(t),
            "template is not a mapping, expected `metadata` and `spec` keys",
        );
        return serde_json::Value::Null;
    };
    for (k, v) in map {
        match k.as_str() {
            "metadata" => match v.as_object() {
                Some(meta) => {
                    for (mk, mv) in meta {
                        if mk != "labels" && mk != "annotations" {
                            c.err(pos(t), format!("template.metadata.{mk} is set by the harness or not allowed, expected only `labels` and `annotations`"));
                        } else if !mv.as_object().is_some_and(|m| m.values().all(serde_json::Value::is_string)) {
                            c.err(pos(t), format!("template.metadata.{mk} is not a mapping of strings, expected `key: value` pairs"));
                        }
                    }
                }
                None => c.err(pos(t), "template.metadata is not a mapping, expected `labels` and `annotations`"),
            },
            "spec" => match v.as_object() {
                Some(spec) if spec.contains_key("forProvider") => c.err(
                    pos(t),
                    "template.spec.forProvider is the group's `spec`, expected it there",
                ),
                Some(_) => {}
                None => c.err(pos(t), "template.spec is not a mapping, expected spec fields such as providerConfigRef"),
            },
            other => c.err(
                pos(t),
                format!("template.{other} is not allowed, expected only `metadata` and `spec`"),
            ),
        }
    }
    t.value.clone()
}

/// The group's namespace: only namespaced kinds take one, a DNS label.
fn namespace(c: &mut Checker, g: &RawGroup, kind: &GroupKind) -> Option<String> {
    let ns = g.namespace.as_ref()?;
    if !kind.namespaced() {
        c.err(
            pos(ns),
            format!("{kind} is cluster-scoped, expected no namespace"),
        );
        return None;
    }
    c.name(ns, "namespace");
    Some(ns.value.clone())
}

/// The conditions a Ready resource has: the group's, or Ready (and Synced, for kinds with
/// `apiVersion`) True.
fn ready(c: &mut Checker, g: &RawGroup) -> Vec<(String, String)> {
    let Some(r) = &g.ready else {
        let mut out = vec![("Ready".to_owned(), "True".to_owned())];
        if g.api_version.is_some() {
            out.push(("Synced".to_owned(), "True".to_owned()));
        }
        return out;
    };
    if r.value.is_empty() {
        c.err(
            pos(r),
            "ready is empty, expected at least one condition such as {type: Ready}",
        );
    }
    r.value
        .iter()
        .map(|cond| {
            if cond.type_.is_empty() {
                c.err(
                    pos(r),
                    "a ready condition has an empty type, expected a type such as Ready",
                );
            }
            let status = cond.status.clone().unwrap_or_else(|| "True".to_owned());
            if !["True", "False", "Unknown"].contains(&status.as_str()) {
                c.err(
                    pos(r),
                    format!(
                        "ready condition {} has status {status:?}, expected True, False or Unknown",
                        cond.type_
                    ),
                );
            }
            (cond.type_.clone(), status)
        })
        .collect()
}

/// The `spec.forProvider` a group gets when it gives none: valid values for the provider's
/// schema, so a scenario can name only a kind and a count.
fn default_spec(kind: Kind) -> serde_json::Value {
    match kind {
        Kind::Bucket => serde_json::json!({"region": "eu-west-1"}),
        Kind::Database => serde_json::json!({"engine": "postgres", "version": "16", "sizeGb": 20}),
        Kind::Record => serde_json::json!({
            "type": "TXT",
            "value": "{{scenario}}-{{group}}-{{index}}",
            "ttl": 300,
        }),
    }
}
