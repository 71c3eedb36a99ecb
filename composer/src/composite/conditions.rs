//! Setting conditions on an XR held in memory, as crossplane-runtime does: core's
//! `ConditionedStatus.SetConditions` (`apis/core/v2/condition.go`) through the
//! `ObservedGenerationPropagationManager` (`pkg/conditions/manager.go`), which stamps each
//! marked condition with the XR's `metadata.generation`.
//!
//! A marked condition replaces the XR's condition of its type unless the two are equal
//! (type, status, reason and message, and the observed generation when both have one), in
//! which case the old one stays with its `lastTransitionTime`; a new type is appended. So
//! marking what is already there changes nothing, which is what lets core skip the status
//! Update when `.status` did not change.

use kube::api::DynamicObject;
use limiter::crossplane::circuit::Responsive;
use provider::reconciler::meta::Clock;
use serde_json::{Value, json};

use super::XrCondition;

/// The `Responsive` condition of the XR's circuit breaker.
#[must_use]
pub fn responsive_condition(r: &Responsive) -> XrCondition {
    XrCondition {
        type_: "Responsive",
        status: if r.status { "True" } else { "False" },
        reason: r.reason,
        message: Some(r.message.clone()).filter(|m| !m.is_empty()),
    }
}

/// `Synced=False` with reason `ReconcileError` and `message` (`xpv2.ReconcileError(err)`).
#[must_use]
pub fn reconcile_error(message: String) -> XrCondition {
    XrCondition {
        type_: "Synced",
        status: "False",
        reason: "ReconcileError",
        message: Some(message),
    }
}

/// `Synced=True`, `ReconcileSuccess`.
#[must_use]
pub fn reconcile_success() -> XrCondition {
    XrCondition {
        type_: "Synced",
        status: "True",
        reason: "ReconcileSuccess",
        message: None,
    }
}

/// `Ready=False`, `Deleting`.
#[must_use]
pub fn deleting() -> XrCondition {
    XrCondition {
        type_: "Ready",
        status: "False",
        reason: "Deleting",
        message: None,
    }
}

/// A condition as Go's `xpv2.Condition` marshals it: `message` and `observedGeneration`
/// omitted when empty, the transition time at second resolution (`metav1.Time`).
fn to_json(c: &XrCondition, generation: i64, now: &str) -> Value {
    let mut v = json!({"type": c.type_, "status": c.status, "lastTransitionTime": now,
        "reason": c.reason});
    if let Some(m) = c.message.as_ref().filter(|m| !m.is_empty()) {
        v["message"] = json!(m);
    }
    if generation != 0 {
        v["observedGeneration"] = json!(generation);
    }
    v
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `Condition.Equal`.
fn equal(a: &Value, b: &Value) -> bool {
    let generation = |v: &Value| {
        v.get("observedGeneration")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };
    let same = ["type", "status", "reason", "message"]
        .iter()
        .all(|k| text(a, k) == text(b, k));
    let (ga, gb) = (generation(a), generation(b));
    same && (ga == 0 || gb == 0 || ga == gb)
}

/// Marks `conditions` on `xr` (its `status.conditions`), as `MarkConditions` does, a
/// changed condition dated by `clock`.
pub fn mark(xr: &mut DynamicObject, conditions: &[XrCondition], clock: &Clock) {
    let generation = xr.metadata.generation.unwrap_or(0);
    let now = clock.stamp();
    let new: Vec<Value> = conditions
        .iter()
        .map(|c| to_json(c, generation, &now))
        .collect();
    set(xr, new);
}

/// Whether core keeps a condition type for itself (`IsSystemConditionType`): functions
/// may not set these.
#[must_use]
pub fn is_system(type_: &str) -> bool {
    matches!(
        type_,
        "Ready" | "Synced" | "Healthy" | "UpToDate" | "Responsive"
    )
}

/// Sets the conditions functions returned on `xr`, skipping the system types, as core's
/// `handleCommonCompositionResult` does (`SetConditions`, no observed generation); returns
/// the types set.
pub fn set_function_conditions(
    xr: &mut DynamicObject,
    conditions: &[crate::function::proto::Condition],
    clock: &Clock,
) -> Vec<String> {
    use crate::function::proto::Status;
    let now = clock.stamp();
    let mut seen = Vec::new();
    let mut new = Vec::new();
    for c in conditions {
        if is_system(&c.r#type) {
            continue;
        }
        let status = match Status::try_from(c.status) {
            Ok(Status::ConditionTrue) => "True",
            Ok(Status::ConditionFalse) => "False",
            _ => "Unknown",
        };
        let mut v = json!({"type": c.r#type, "status": status, "lastTransitionTime": now,
            "reason": c.reason});
        if let Some(m) = c.message.as_ref().filter(|m| !m.is_empty()) {
            v["message"] = json!(m);
        }
        seen.push(c.r#type.clone());
        new.push(v);
    }
    set(xr, new);
    seen
}

/// After a FATAL result: each custom condition of `xr` whose type the functions did not
/// return (`seen`) is marked `Unknown` with reason `FatalError`, as core does.
pub fn mark_unseen_unknown(xr: &mut DynamicObject, seen: &[String], clock: &Clock) {
    let generation = xr.metadata.generation.unwrap_or(0);
    let now = clock.stamp();
    let unseen: Vec<Value> = xr
        .data
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| {
            let t = text(c, "type");
            !is_system(t) && !seen.iter().any(|s| s == t)
        })
        .map(|c| {
            let mut v = json!({"type": text(c, "type"), "status": "Unknown",
                "lastTransitionTime": now, "reason": "FatalError",
                "message": "A fatal error occurred before the status of this condition could be determined."});
            if generation != 0 {
                v["observedGeneration"] = json!(generation);
            }
            v
        })
        .collect();
    set(xr, unseen);
}

/// `SetConditions` of `new` (conditions as JSON) on `xr`.
fn set(xr: &mut DynamicObject, new: Vec<Value>) {
    if !xr.data.is_object() {
        xr.data = json!({});
    }
    let status = xr.data.as_object_mut().expect("an object").entry("status");
    let status = status.or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let list = status
        .as_object_mut()
        .expect("an object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    let list = list.as_array_mut().expect("an array");
    for new in new {
        let type_ = text(&new, "type").to_owned();
        let mut exists = false;
        for existing in list.iter_mut() {
            if text(existing, "type") != type_ {
                continue;
            }
            exists = true;
            if !equal(existing, &new) {
                *existing = new.clone();
            }
        }
        if !exists {
            list.push(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xr(conditions: Value, generation: i64) -> DynamicObject {
        serde_json::from_value(json!({"apiVersion": "example.org/v1", "kind": "XWidget",
            "metadata": {"name": "a", "generation": generation},
            "status": {"conditions": conditions}}))
        .unwrap()
    }

    #[test]
    fn marking_an_equal_condition_keeps_the_old_one_and_its_time() {
        let old = json!([{"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 3}]);
        let mut x = xr(old.clone(), 3);
        mark(&mut x, &[reconcile_success()], &Clock::new());
        assert_eq!(x.data["status"]["conditions"], old);
        // No observed generation on the old one: still equal.
        let older = json!([{"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
        let mut x = xr(older.clone(), 4);
        mark(&mut x, &[reconcile_success()], &Clock::new());
        assert_eq!(x.data["status"]["conditions"], older);
    }

    #[test]
    fn a_changed_condition_replaces_its_type_and_a_new_type_is_appended() {
        let old = json!([{"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 3}]);
        let mut x = xr(old, 4);
        mark(
            &mut x,
            &[
                reconcile_error("cannot select Composition".into()),
                deleting(),
            ],
            &Clock::new(),
        );
        let c = x.data["status"]["conditions"].as_array().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (text(&c[0], "reason"), text(&c[0], "message")),
            ("ReconcileError", "cannot select Composition")
        );
        assert_eq!(c[0]["observedGeneration"], 4);
        assert_ne!(c[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert_eq!(text(&c[1], "reason"), "Deleting");
        // The same generation again but another: a new generation alone changes it.
        let mut y = xr(json!([c[1].clone()]), 5);
        mark(&mut y, &[deleting()], &Clock::new());
        assert_eq!(y.data["status"]["conditions"][0]["observedGeneration"], 5);
    }

    #[tokio::test(start_paused = true)]
    async fn a_changed_condition_is_dated_by_the_clock_on_virtual_time() {
        let epoch = jiff::Timestamp::from_second(1_800_000_000).unwrap();
        let clock = Clock::at(epoch, tokio::time::Instant::now());
        // An hour of virtual time passes in no time at all.
        tokio::time::sleep(std::time::Duration::from_secs(3_600)).await;
        let mut x = xr(json!([]), 1);
        mark(&mut x, &[reconcile_success()], &clock);
        assert_eq!(
            x.data["status"]["conditions"][0]["lastTransitionTime"],
            "2027-01-15T09:00:00Z"
        );
    }
}
