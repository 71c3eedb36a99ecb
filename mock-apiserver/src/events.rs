//! The `core/v1` view of `events.k8s.io/v1` Events, so `kubectl describe` shows what
//! kube's `Recorder` writes, and core Events written by older clients land in the same
//! store.

use serde_json::{Map, Value, json};

fn copy(from: &Value, from_key: &str, to: &mut Map<String, Value>, to_key: &str) {
    if let Some(v) = from.get(from_key).filter(|v| !v.is_null()) {
        to.insert(to_key.to_owned(), v.clone());
    }
}

/// Converts a stored `events.k8s.io/v1` Event into its `core/v1` form.
pub fn to_core(event: &Value) -> Value {
    let mut core = Map::new();
    core.insert("apiVersion".into(), json!("v1"));
    core.insert("kind".into(), json!("Event"));
    copy(event, "metadata", &mut core, "metadata");
    copy(event, "regarding", &mut core, "involvedObject");
    copy(event, "related", &mut core, "related");
    copy(event, "note", &mut core, "message");
    copy(event, "reason", &mut core, "reason");
    copy(event, "type", &mut core, "type");
    copy(event, "action", &mut core, "action");
    copy(event, "eventTime", &mut core, "eventTime");
    copy(
        event,
        "reportingController",
        &mut core,
        "reportingComponent",
    );
    copy(event, "reportingInstance", &mut core, "reportingInstance");
    copy(
        event,
        "deprecatedFirstTimestamp",
        &mut core,
        "firstTimestamp",
    );
    copy(event, "deprecatedLastTimestamp", &mut core, "lastTimestamp");
    if let Some(series) = event.get("series").filter(|s| s.is_object()) {
        core.insert(
            "series".into(),
            json!({"count": series["count"], "lastObservedTime": series["lastObservedTime"]}),
        );
        core.insert("count".into(), series["count"].clone());
        if !core.contains_key("lastTimestamp")
            && let Some(last) = series["lastObservedTime"].as_str()
        {
            core.insert("lastTimestamp".into(), json!(trim_micros(last)));
        }
    } else {
        core.insert(
            "count".into(),
            event.get("deprecatedCount").cloned().unwrap_or(json!(1)),
        );
    }
    if !core.contains_key("firstTimestamp")
        && let Some(time) = event["eventTime"].as_str()
    {
        core.insert("firstTimestamp".into(), json!(trim_micros(time)));
        core.entry("lastTimestamp")
            .or_insert_with(|| json!(trim_micros(time)));
    }
    let mut source = Map::new();
    copy(event, "reportingController", &mut source, "component");
    copy(&event["deprecatedSource"], "host", &mut source, "host");
    if source.is_empty() {
        copy(
            &event["deprecatedSource"],
            "component",
            &mut source,
            "component",
        );
    }
    core.insert("source".into(), Value::Object(source));
    Value::Object(core)
}

/// Converts a `core/v1` Event written by a client into the stored `events.k8s.io/v1` form.
pub fn from_core(core: &Value) -> Value {
    let mut event = Map::new();
    event.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    event.insert("kind".into(), json!("Event"));
    copy(core, "metadata", &mut event, "metadata");
    copy(core, "involvedObject", &mut event, "regarding");
    copy(core, "related", &mut event, "related");
    copy(core, "message", &mut event, "note");
    copy(core, "reason", &mut event, "reason");
    copy(core, "type", &mut event, "type");
    copy(core, "action", &mut event, "action");
    copy(core, "eventTime", &mut event, "eventTime");
    copy(
        core,
        "firstTimestamp",
        &mut event,
        "deprecatedFirstTimestamp",
    );
    copy(core, "lastTimestamp", &mut event, "deprecatedLastTimestamp");
    copy(core, "count", &mut event, "deprecatedCount");
    copy(core, "series", &mut event, "series");
    copy(core, "source", &mut event, "deprecatedSource");
    copy(core, "reportingInstance", &mut event, "reportingInstance");
    match core
        .get("reportingComponent")
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
    {
        Some(component) => event.insert("reportingController".into(), component.clone()),
        None => event.insert(
            "reportingController".into(),
            core["source"]["component"].clone(),
        ),
    };
    if event.get("reportingController").is_some_and(Value::is_null) {
        event.remove("reportingController");
    }
    Value::Object(event)
}

/// `2026-11-21T10:00:00.123456Z` → `2026-11-21T10:00:00Z` (MicroTime to Time).
fn trim_micros(time: &str) -> String {
    match time.split_once('.') {
        Some((head, _)) => format!("{head}Z"),
        None => time.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_event_reads_as_a_core_event() {
        let event = json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "b1.1", "namespace": "default"},
            "eventTime": "2026-11-21T10:00:00.123456Z",
            "regarding": {"kind": "Bucket", "name": "b1", "namespace": "default", "uid": "u"},
            "note": "created", "reason": "Created", "type": "Normal", "action": "Create",
            "reportingController": "provider", "reportingInstance": "provider-0",
            "series": {"count": 3, "lastObservedTime": "2026-11-21T10:05:00.000000Z"}
        });
        let core = to_core(&event);
        assert_eq!(core["involvedObject"]["name"], "b1");
        assert_eq!(core["message"], "created");
        assert_eq!(core["count"], 3);
        assert_eq!(core["source"]["component"], "provider");
        assert_eq!(core["firstTimestamp"], "2026-11-21T10:00:00Z");
        assert_eq!(core["lastTimestamp"], "2026-11-21T10:05:00Z");
    }

    #[test]
    fn a_core_event_is_stored_in_the_new_form_and_reads_back() {
        let core = json!({
            "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
            "message": "m", "reason": "R", "type": "Warning", "count": 2,
            "source": {"component": "kubelet"}, "firstTimestamp": "2026-11-21T10:00:00Z"
        });
        let stored = from_core(&core);
        assert_eq!(stored["regarding"]["name"], "p");
        assert_eq!(stored["reportingController"], "kubelet");
        let back = to_core(&stored);
        assert_eq!(back["count"], 2);
        assert_eq!(back["message"], "m");
        assert_eq!(back["source"]["component"], "kubelet");
    }
}
