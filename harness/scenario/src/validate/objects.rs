//! The `objects` section: ProviderConfigs, ClusterProviderConfigs and Secrets the harness
//! creates before the resources and deletes after them.

use std::collections::BTreeSet;

use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::kinds::Catalogue;
use crate::model::SceneObject;
use crate::template::{Vars, check_json, render_json};

pub(super) fn objects(
    c: &mut Checker,
    raw: &[Spanned<serde_json::Value>],
    catalogue: &Catalogue,
    scenario: &str,
) -> Vec<SceneObject> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    // Crossplane's objects are the composite layer's (validate/composite.rs).
    for o in raw
        .iter()
        .filter(|o| !super::crossplane_objects::is_crossplane(&o.value))
    {
        out.extend(object(c, o, catalogue, scenario, &mut seen));
    }
    out
}

fn object(
    c: &mut Checker,
    o: &Spanned<serde_json::Value>,
    catalogue: &Catalogue,
    scenario: &str,
    seen: &mut BTreeSet<(String, Option<String>, String)>,
) -> Option<SceneObject> {
    let at = pos(o);
    if let Err(e) = check_json(&o.value) {
        c.err(at, format!("object: {e}"));
        return None;
    }
    let body = render_json(
        &o.value,
        Vars {
            index: 0,
            group: "",
            scenario,
        },
    );
    let text = |key: &str| body.get(key).and_then(serde_json::Value::as_str);
    let (Some(api_version), Some(kind)) = (text("apiVersion"), text("kind")) else {
        c.err(
            at,
            "object has no `apiVersion` and `kind`, expected a whole object such as {apiVersion: v1, kind: Secret, metadata: {name: aws}}",
        );
        return None;
    };
    let spanned = |s: &str| Spanned {
        value: s.to_owned(),
        referenced: o.referenced,
        defined: o.defined,
    };
    let served = super::kinds::served(c, catalogue, &spanned(api_version), &spanned(kind))?;
    let name = body
        .pointer("/metadata/name")
        .and_then(serde_json::Value::as_str);
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        c.err(
            at,
            format!("{kind} object has no metadata.name, expected a name"),
        );
        return None;
    };
    let namespace = body
        .pointer("/metadata/namespace")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    if namespace.is_some() && !served.kind.namespaced {
        c.err(
            at,
            format!("{kind} {name} is cluster-scoped, expected no metadata.namespace"),
        );
    }
    if !seen.insert((
        served.kind.api_version() + " " + &served.kind.kind,
        namespace.clone(),
        name.to_owned(),
    )) {
        c.err(
            at,
            format!("{kind} {name} is listed twice, expected each object once"),
        );
    }
    let what = format!("object {kind} {name}");
    let problems = super::kinds::check_object(&served, &body);
    super::kinds::report(c, at, &what, &problems);
    Some(SceneObject {
        kind: served.kind,
        body,
        pos: at,
    })
}
