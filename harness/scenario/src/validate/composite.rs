//! The composite layer: Crossplane's objects in `objects` (XRDs, Compositions, Functions),
//! `core`'s settings and the `composites` groups. What core would refuse only after the
//! start (a Composition calling a Function nobody serves, an XR of a kind no XRD defines, a
//! built-in step whose input the function rejects) is refused here, before anything starts.

use std::collections::BTreeSet;

use composer::api::{Composition, Function};
use composer::function::builtin::Input;
use limiter::crossplane::circuit::Mode;
use limiter::go::GoDuration;
use provider::reconciler::conditions::error_chain;

use super::checker::Checker;
use super::pos;
use crate::composite::{Composed, Composites, CoreSettings, FunctionRuntime, XrGroup, XrShape};
use crate::error::Pos;
use crate::kinds::ApiKind;
use crate::raw::RawScenario;
use crate::raw::composite::{BreakerModeName, RawCore, RawXrGroup};
use crate::template::Template;

/// The composite layer of `raw`; `resource_groups` are the names the XR groups must not
/// reuse.
pub(super) fn composites(
    c: &mut Checker,
    raw: &RawScenario,
    resource_groups: &BTreeSet<String>,
) -> Composites {
    let scenario = &raw.name.value;
    let mut out = Composites {
        core: raw
            .core
            .as_ref()
            .map(|s| core(c, &s.value))
            .unwrap_or_default(),
        ..Composites::default()
    };
    let mut placed: Vec<(Pos, String)> = Vec::new();
    for o in raw
        .objects
        .iter()
        .filter(|o| super::crossplane_objects::is_crossplane(&o.value))
    {
        super::crossplane_objects::object(c, o, scenario, &mut out, &mut placed);
    }
    let at = |name: &str| {
        placed
            .iter()
            .find(|(_, n)| n == name)
            .map_or(Pos::default(), |(p, _)| *p)
    };
    for comp in &out.compositions {
        let name = comp.metadata.name.clone().unwrap_or_default();
        composition(c, comp, at(&format!("Composition {name}")), &out);
    }
    let mut names = resource_groups.clone();
    for g in &raw.composites {
        if let Some(group) = xr_group(c, g, &out, &mut names) {
            out.groups.push(group);
        }
    }
    if let Some(s) = &raw.core
        && raw.composites.is_empty()
    {
        c.err(
            pos(s),
            "`core` sets Crossplane core's flags, and the scenario has no XR group to run it for, expected `composites`",
        );
    }
    out
}

fn core(c: &mut Checker, raw: &RawCore) -> CoreSettings {
    let d = CoreSettings::default();
    let mut breaker = d.breaker;
    if let Some(v) = &raw.circuit_breaker_burst {
        breaker.burst = c
            .range(v, "circuitBreakerBurst", 0.0, true, f64::INFINITY)
            .unwrap_or(breaker.burst);
    }
    if let Some(v) = &raw.circuit_breaker_refill_rate {
        breaker.refill_per_second = c
            .range(v, "circuitBreakerRefillRate", 0.0, true, f64::INFINITY)
            .unwrap_or(breaker.refill_per_second);
    }
    if let Some(v) = &raw.circuit_breaker_cooldown
        && let Some(cooldown) = c.positive_duration(v, "circuitBreakerCooldown")
    {
        breaker.cooldown = GoDuration::from_std(cooldown);
    }
    if let Some(m) = &raw.circuit_breaker_mode {
        breaker.mode = match m.value {
            BreakerModeName::Released => Mode::Released,
            BreakerModeName::Eager => Mode::EagerClose,
        };
    }
    let workers = raw
        .max_reconcile_rate
        .as_ref()
        .map_or(d.max_reconcile_rate, |r| match usize::try_from(r.value) {
            Ok(n) if n > 0 => n,
            _ => {
                c.err(pos(r), "maxReconcileRate is 0, expected at least 1 worker");
                d.max_reconcile_rate
            }
        });
    CoreSettings {
        max_reconcile_rate: workers,
        poll_interval: c.opt_duration(raw.poll_interval.as_ref(), "pollInterval", d.poll_interval),
        min_poll_interval: c.opt_duration(
            raw.min_poll_interval.as_ref(),
            "minPollInterval",
            d.min_poll_interval,
        ),
        sync_interval: c.opt_duration(raw.sync_interval.as_ref(), "syncInterval", d.sync_interval),
        realtime: raw
            .enable_realtime_compositions
            .as_ref()
            .map_or(d.realtime, |v| v.value),
        breaker,
        request_latency: c.opt_duration(
            raw.request_latency.as_ref(),
            "requestLatency",
            d.request_latency,
        ),
    }
}

/// A Composition's pipeline against the scenario's Functions and XRDs.
pub(super) fn composition(c: &mut Checker, comp: &Composition, at: Pos, out: &Composites) {
    let name = comp.metadata.name.clone().unwrap_or_default();
    let declared: Vec<&str> = out.functions.iter().map(|f| f.name.as_str()).collect();
    let type_ref = &comp.spec.composite_type_ref;
    if xrd_of(out, &type_ref.api_version, &type_ref.kind).is_none() {
        c.err(
            at,
            format!(
                "Composition {name} composes {} ({}), which no XRD in `objects` defines, expected the kind and a served version of one of: {}",
                type_ref.kind,
                type_ref.api_version,
                xr_kinds(out)
            ),
        );
    }
    let functions: Vec<Function> = out
        .functions
        .iter()
        .filter_map(|f| serde_json::from_value(f.body.clone()).ok())
        .collect();
    for step in &comp.spec.pipeline {
        let called = step.function_ref.name.as_str();
        let Some(function) = out.functions.iter().find(|f| f.name == called) else {
            c.err(
                at,
                format!(
                    "Composition {name}: step {:?} calls Function {called:?}, which the scenario does not declare, expected one of the Functions in `objects`: {}",
                    step.step,
                    if declared.is_empty() { "(none)".to_owned() } else { declared.join(", ") }
                ),
            );
            continue;
        };
        if function.runtime == FunctionRuntime::Builtin {
            let input = step.input.as_ref().and_then(|v| v.as_object().cloned());
            if let Err(e) = Input::from_json(input) {
                c.err(
                    at,
                    format!(
                        "Composition {name}: step {:?} gives the built-in function {called:?} an input it does not accept: {}, expected {{apiVersion: {}, kind: {}, resources: [...]}}",
                        step.step,
                        error_chain(&e),
                        composer::function::builtin::API_VERSION,
                        composer::function::builtin::KIND,
                    ),
                );
            }
        }
    }
    // The pipeline's own rules (a step, unique step names, Pipeline mode); a missing
    // function is reported above, with the step.
    if let Err(e) = comp.validate(&functions)
        && !matches!(e, composer::api::ApiError::MissingFunction { .. })
    {
        c.err(at, e.to_string());
    }
}

/// The XRD that serves `kind` at `api_version`.
fn xrd_of(out: &Composites, api_version: &str, kind: &str) -> Option<usize> {
    out.xrds.iter().position(|x| {
        x.spec.names.kind == kind
            && x.spec
                .versions
                .iter()
                .any(|v| v.served && format!("{}/{}", x.spec.group, v.name) == api_version)
    })
}

fn xr_kinds(out: &Composites) -> String {
    let kinds: Vec<String> = out
        .xrds
        .iter()
        .flat_map(|x| {
            x.spec
                .versions
                .iter()
                .filter(|v| v.served)
                .map(move |v| format!("{} ({}/{})", x.spec.names.kind, x.spec.group, v.name))
        })
        .collect();
    if kinds.is_empty() {
        "(no XRD)".to_owned()
    } else {
        kinds.join(", ")
    }
}

fn xr_group(
    c: &mut Checker,
    g: &RawXrGroup,
    out: &Composites,
    names: &mut BTreeSet<String>,
) -> Option<XrGroup> {
    c.name(&g.name, "XR group name");
    if !names.insert(g.name.value.clone()) {
        c.err(
            pos(&g.name),
            format!(
                "group {:?} is defined twice, expected unique names among resources and composites",
                g.name.value
            ),
        );
    }
    let Some(x) = xrd_of(out, &g.api_version.value, &g.kind.value) else {
        c.err(
            pos(&g.kind),
            format!(
                "no XRD in `objects` defines kind {} ({}), expected one of: {}",
                g.kind.value,
                g.api_version.value,
                xr_kinds(out)
            ),
        );
        return None;
    };
    let xrd = &out.xrds[x];
    let (group, version) = g
        .api_version
        .value
        .split_once('/')
        .unwrap_or(("", g.api_version.value.as_str()));
    let kind = ApiKind {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: g.kind.value.clone(),
        plural: xrd.spec.names.plural.clone(),
        namespaced: xrd.spec.scope != composer::api::Scope::Cluster,
        aws: false,
    };
    let composes = |comp: &&Composition| {
        comp.spec.composite_type_ref.kind == kind.kind
            && comp.spec.composite_type_ref.api_version == g.api_version.value
    };
    let comp = match &g.composition {
        Some(name) => {
            let found = out
                .compositions
                .iter()
                .find(|comp| comp.metadata.name.as_deref() == Some(name.value.as_str()));
            match found {
                Some(comp) if composes(&comp) => Some(comp),
                Some(_) => {
                    c.err(
                        pos(name),
                        format!(
                            "Composition {} composes another kind than {} ({}), expected one whose compositeTypeRef names it",
                            name.value, kind.kind, g.api_version.value
                        ),
                    );
                    None
                }
                None => {
                    let known = out
                        .compositions
                        .iter()
                        .filter_map(|c| c.metadata.name.as_deref());
                    c.unknown(name, "Composition", known);
                    None
                }
            }
        }
        None => {
            let candidates: Vec<&Composition> = out.compositions.iter().filter(composes).collect();
            if candidates.len() == 1 {
                Some(candidates[0])
            } else {
                c.err(
                    pos(&g.kind),
                    format!(
                        "{} Compositions compose {}, expected `composition` naming one",
                        candidates.len(),
                        kind.kind
                    ),
                );
                None
            }
        }
    }?;
    let spec = g.spec.as_ref().map_or(serde_json::Value::Null, |s| {
        if !s.value.is_object() && !s.value.is_null() {
            c.err(pos(s), "spec is not a map, expected the XR's spec fields");
        }
        c.spec(s)
    });
    let pattern = g
        .name_pattern
        .as_ref()
        .map_or("{{group}}-{{index}}", |p| &p.value);
    let name_pattern = match Template::parse(pattern) {
        Ok(t) => t,
        Err(e) => {
            let at = g.name_pattern.as_ref().map_or(pos(&g.name), pos);
            c.err(at, format!("namePattern: {e}"));
            return None;
        }
    };
    let ready = match &g.ready {
        None => vec![("Ready".to_owned(), "True".to_owned())],
        Some(r) if r.value.is_empty() => {
            c.err(
                pos(r),
                "ready is empty, expected at least one condition such as {type: Ready}",
            );
            Vec::new()
        }
        Some(r) => r
            .value
            .iter()
            .map(|k| {
                (
                    k.type_.clone(),
                    k.status.clone().unwrap_or_else(|| "True".to_owned()),
                )
            })
            .collect(),
    };
    Some(XrGroup {
        name: g.name.value.clone(),
        kind,
        xrd: x,
        composition: comp.metadata.name.clone().unwrap_or_default(),
        count: g.count.value,
        spec,
        name_pattern,
        ready,
        shape: shape(comp, out),
        pos: pos(&g.name),
    })
}

/// What a reconcile of an XR composed by `comp` involves.
pub(super) fn shape(comp: &Composition, out: &Composites) -> XrShape {
    let mut s = XrShape {
        all_builtin: true,
        ..XrShape::default()
    };
    for step in &comp.spec.pipeline {
        let called = step.function_ref.name.clone();
        s.steps.push((step.step.clone(), called.clone()));
        let builtin = out
            .functions
            .iter()
            .any(|f| f.name == called && f.runtime == FunctionRuntime::Builtin);
        let input = step.input.as_ref().and_then(|v| v.as_object().cloned());
        match (builtin, input.map(|i| Input::from_json(Some(i)))) {
            (true, Some(Ok(input))) => {
                if let Some(ttl) = input.ttl {
                    s.ttl = Some(s.ttl.map_or(ttl, |t| t.min(ttl)));
                }
                for t in &input.templates {
                    let text = |k: &str| {
                        t.base
                            .get(k)
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    };
                    s.composed.push(Composed {
                        step: step.step.clone(),
                        api_version: text("apiVersion"),
                        kind: text("kind"),
                        count: t.count_from.is_none().then_some(t.count),
                    });
                }
            }
            _ => s.all_builtin = false,
        }
    }
    s
}
