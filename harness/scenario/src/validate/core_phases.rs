//! The phases of core's composite layer: `compositionUpdate` (a Composition edited by a
//! JSON Patch, checked by applying it to the Composition before anything starts) and
//! `functionFault` (a built-in function's answers delayed, failed, lost or given another
//! TTL).

use std::time::Duration;

use composer::api::Composition;
use composer::function::builtin::Input;

use super::checker::Checker;
use super::pos;
use crate::composite::{Composites, CompositionEdit, FunctionFault, FunctionRuntime};
use crate::error::Pos;
use crate::model::Action;
use crate::raw::RawPhase;

fn needs(c: &mut Checker, p: &RawPhase, what: &str, field: &str) {
    c.err(pos(&p.action), format!("a {what} phase needs `{field}`"));
}

/// The XR groups (indexes) whose Composition is `name`.
fn groups_of(out: &Composites, name: &str) -> Vec<usize> {
    out.groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.composition == name)
        .map(|(i, _)| i)
        .collect()
}

/// A compositionUpdate phase: the Composition it names, and its patch applied to it,
/// giving a Composition that still composes the same kind, passes the checks of
/// `objects`, and differs from the original (an edit that changes nothing makes no
/// revision). Its XR groups are those the Composition composes.
pub(super) fn composition_update(
    c: &mut Checker,
    p: &RawPhase,
    out: &Composites,
) -> Option<(Action, Vec<usize>)> {
    let Some(name) = &p.composition else {
        needs(c, p, "compositionUpdate", "composition");
        return None;
    };
    let Some(original) = out
        .compositions
        .iter()
        .find(|comp| comp.metadata.name.as_deref() == Some(name.value.as_str()))
    else {
        let known = out
            .compositions
            .iter()
            .filter_map(|comp| comp.metadata.name.as_deref());
        c.unknown(name, "Composition", known);
        return None;
    };
    let Some(raw_patch) = &p.patch else {
        needs(c, p, "compositionUpdate", "patch");
        return None;
    };
    let at = pos(raw_patch);
    let patch: json_patch::Patch = match serde_json::from_value(raw_patch.value.clone()) {
        Ok(patch) => patch,
        Err(e) => {
            c.err(
                at,
                format!(
                    "patch is not a JSON Patch: {e}, expected a list of operations such as {{op: replace, path: /spec/pipeline/0/input/resources/0/count, value: 4}}"
                ),
            );
            return None;
        }
    };
    if patch.0.is_empty() {
        c.err(
            at,
            "patch is empty, expected at least one operation (an edit that changes nothing makes no new revision)",
        );
        return None;
    }
    let before = serde_json::to_value(original).expect("a Composition serializes");
    let mut after = before.clone();
    if let Err(e) = json_patch::patch(&mut after, &patch) {
        c.err(
            at,
            format!(
                "patch does not apply to Composition {}: {e}, expected paths into it as `objects` declares it",
                name.value
            ),
        );
        return None;
    }
    if after == before {
        c.err(
            at,
            format!(
                "patch leaves Composition {} as it is, expected an edit (one that changes nothing makes no new revision)",
                name.value
            ),
        );
        return None;
    }
    let edited: Composition = match serde_json::from_value(after) {
        Ok(comp) => comp,
        Err(e) => {
            c.err(
                at,
                format!(
                    "patch makes Composition {} no Composition: {e}, expected an edit of its fields' values",
                    name.value
                ),
            );
            return None;
        }
    };
    if edited.metadata.name != original.metadata.name {
        c.err(
            at,
            "patch renames the Composition, expected the edit of one Composition (metadata.name unchanged)",
        );
        return None;
    }
    if edited.spec.composite_type_ref != original.spec.composite_type_ref {
        c.err(
            at,
            "patch changes compositeTypeRef, which Crossplane refuses on a Composition, expected it unchanged",
        );
        return None;
    }
    // The edited pipeline must pass what the original passed (its functions declared, a
    // built-in step's input accepted): reported at the patch.
    let mut scratch = Checker::default();
    super::composite::composition(&mut scratch, &edited, Pos::default(), out);
    for problem in scratch.problems {
        c.err(at, format!("after the patch: {}", problem.message));
    }
    let shape = super::composite::shape(&edited, out);
    let groups = groups_of(out, &name.value);
    let edit = CompositionEdit {
        composition: name.value.clone(),
        patch: raw_patch.value.clone(),
        shape,
        changed_per_xr: changes(original, &edited, out),
    };
    Some((Action::CompositionUpdate(Box::new(edit)), groups))
}

/// A functionFault phase: a built-in Function of the scenario (the harness changes the
/// answers of the functions it runs in process; a function at an address is its own), and
/// at least one fault: `delay`, `errorPercent` (0 < p ≤ 100), `down` (alone but for
/// `ttl`, which it makes moot) or `ttl`. Its XR groups are those whose pipeline calls the
/// function.
pub(super) fn function_fault(
    c: &mut Checker,
    p: &RawPhase,
    out: &Composites,
    duration: Option<Duration>,
) -> Option<(Action, Vec<usize>)> {
    let Some(name) = &p.function else {
        needs(c, p, "functionFault", "function");
        return None;
    };
    let Some(function) = out.functions.iter().find(|f| f.name == name.value) else {
        c.unknown(
            name,
            "Function",
            out.functions.iter().map(|f| f.name.as_str()),
        );
        return None;
    };
    if let FunctionRuntime::Address(a) = function.runtime {
        c.err(
            pos(name),
            format!(
                "Function {} is served at {a}, by a process of its own, and the harness faults only the built-in function it runs in process, expected a Function with annotation render.crossplane.io/runtime: InProcess",
                name.value
            ),
        );
        return None;
    }
    let delay = p
        .delay
        .as_ref()
        .and_then(|d| c.positive_duration(d, "delay"))
        .unwrap_or_default();
    let error_percent = p
        .error_percent
        .as_ref()
        .and_then(|e| c.range(e, "errorPercent", 0.0, true, 100.0))
        .unwrap_or_default();
    let down = p.down.as_ref().is_some_and(|d| d.value);
    let ttl = p.ttl.as_ref().and_then(|t| c.duration(t, "ttl"));
    if let Some(d) = &p.down
        && d.value
        && (p.delay.is_some() || p.error_percent.is_some() || p.ttl.is_some())
    {
        c.err(
            pos(d),
            "a function that is down answers nothing, expected `down: true` without delay, errorPercent or ttl",
        );
    }
    if p.delay.is_none()
        && p.error_percent.is_none()
        && !p.down.as_ref().is_some_and(|d| d.value)
        && p.ttl.is_none()
    {
        c.err(
            pos(&p.action),
            "a functionFault phase names no fault, expected at least one of delay, errorPercent, down: true, ttl",
        );
        return None;
    }
    let groups = out
        .groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.shape.steps.iter().any(|(_, f)| *f == name.value))
        .map(|(i, _)| i)
        .collect();
    Some((
        Action::FunctionFault {
            function: name.value.clone(),
            fault: FunctionFault {
                delay,
                error_percent,
                down,
                ttl,
            },
            duration,
        },
        groups,
    ))
}

/// The built-in input of `step` of `comp`, if its function is the built-in one.
fn builtin_input(out: &Composites, comp: &Composition, step: &str) -> Option<Input> {
    let step = comp.spec.pipeline.iter().find(|s| s.step == step)?;
    let builtin = out
        .functions
        .iter()
        .any(|f| f.name == step.function_ref.name && f.runtime == FunctionRuntime::Builtin);
    let input = step.input.as_ref().and_then(|v| v.as_object().cloned());
    builtin.then(|| Input::from_json(input).ok()).flatten()
}

/// Per XR, the composed resources whose template the edit changes (the fewer of the two
/// counts of a changed template) and those it adds (a larger count, a new template), by
/// step and template name; `None` when a step is not the built-in function or a count
/// comes from the XR.
fn changes(before: &Composition, after: &Composition, out: &Composites) -> Option<(u32, u32)> {
    let (mut changed, mut created) = (0, 0);
    for step in &after.spec.pipeline {
        let new = builtin_input(out, after, &step.step)?;
        let old = builtin_input(out, before, &step.step);
        for t in &new.templates {
            if t.count_from.is_some() {
                return None;
            }
            let was = old
                .as_ref()
                .and_then(|o| o.templates.iter().find(|x| x.name == t.name));
            match was {
                None => created += t.count,
                Some(w) => {
                    if w.count_from.is_some() {
                        return None;
                    }
                    if w.base != t.base || w.patches != t.patches || w.readiness != t.readiness {
                        changed += w.count.min(t.count);
                    }
                    created += t.count.saturating_sub(w.count);
                }
            }
        }
    }
    Some((changed, created))
}
