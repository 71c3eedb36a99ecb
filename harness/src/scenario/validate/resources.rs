//! The `resources` section: groups of resources, their names, specs and annotation shares.

use std::collections::{BTreeMap, BTreeSet};

use limiter::crossplane::{POLL_INTERVAL_ANNOTATION, Settings};
use limiter::go::GoDuration;
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::scenario::error::Problem;
use crate::scenario::model::{AnnotationShare, Cloud, ResourceGroup};
use crate::scenario::raw::{Kind, RawGroup, RawScenario};
use crate::scenario::template::{Template, Vars};

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
) -> Vec<ResourceGroup> {
    if raw.resources.is_empty() {
        c.err(
            pos(&raw.name),
            "resources is empty, expected at least one group",
        );
    }
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for g in &raw.resources {
        out.extend(group(c, g, cloud, settings, &raw.name.value, &mut names));
    }
    out
}

fn group(
    c: &mut Checker,
    g: &RawGroup,
    cloud: &Cloud,
    settings: &Settings,
    scenario: &str,
    names: &mut BTreeSet<String>,
) -> Option<ResourceGroup> {
    c.name(&g.name, "group name");
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
        None => default_spec(g.kind.value),
    };
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
    Some(ResourceGroup {
        name: g.name.value.clone(),
        kind: g.kind.value,
        count: g.count.value,
        account: account?,
        name_pattern: name_pattern?,
        spec,
        annotations,
        faults,
        management_policies,
    })
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
