//! Apply and update as `merge/update.go` and `managedfields/internal` behave, on a
//! custom resource with a structural schema.

use serde_json::{Value, json};

use super::*;
use crate::schema::Structural;

fn schema() -> Structural {
    Structural::compile(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "x": {"type": "string"},
                "y": {"type": "string"},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }))
    .unwrap()
}

fn writer<'a>(schema: &'a Structural, manager: &'a str, now: &'a str) -> Writer<'a> {
    Writer {
        manager,
        api_version: "example.org/v1",
        kind: "Widget",
        status: false,
        status_subresource: true,
        shape: Shape::Root(schema),
        now,
    }
}

/// `spec` applied, not forced, by `manager` at `now` over `live`.
fn apply_as(
    schema: &Structural,
    manager: &str,
    now: &str,
    live: Option<&Value>,
    spec: Value,
) -> Result<Value, SsaError> {
    apply(&writer(schema, manager, now), live, &config(spec), false)
}

fn config(spec: Value) -> Value {
    json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

fn managers(object: &Value) -> Vec<(String, String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap().to_owned(),
                        e["operation"].as_str().unwrap().to_owned(),
                        e["fieldsV1"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_apply_records_its_fields_without_the_server_set_metadata() {
    let schema = schema();
    let t0 = "2026-01-01T00:00:00Z";
    let object = apply_as(&schema, "m1", t0, None, json!({"x": "1"})).unwrap();
    assert_eq!(object["spec"], json!({"x": "1"}));
    assert_eq!(
        object["metadata"]["managedFields"],
        json!([{
            "manager": "m1",
            "operation": "Apply",
            "apiVersion": "example.org/v1",
            "time": t0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:x": {}}},
        }])
    );
}

#[test]
fn a_second_applier_changing_an_owned_field_conflicts_unless_forced() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let live = apply_as(&schema, "m1", t, None, json!({"x": "1"})).unwrap();
    let err = apply_as(&schema, "m2", t, Some(&live), json!({"x": "2", "y": "b"})).unwrap_err();
    assert_eq!(
        err,
        SsaError::Conflicts(vec![("\"m1\"".into(), ".spec.x".into())])
    );
    let status = api_error(err).to_status();
    assert_eq!(status["code"], 409);
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"m1\": .spec.x"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldManagerConflict", "message": "conflict with \"m1\"", "field": ".spec.x"}])
    );
    // The same value is shared, not a conflict.
    let shared = apply_as(&schema, "m2", t, Some(&live), json!({"x": "1"})).unwrap();
    assert_eq!(managers(&shared).len(), 2);
    // Forced, m2 takes the field from m1, which is left with nothing.
    let forced = apply(
        &writer(&schema, "m2", t),
        Some(&live),
        &config(json!({"x": "2"})),
        true,
    )
    .unwrap();
    assert_eq!(forced["spec"]["x"], "2");
    assert_eq!(
        managers(&forced),
        [("m2".into(), "Apply".into(), json!({"f:spec": {"f:x": {}}}))]
    );
}

#[test]
fn several_conflicts_are_listed_by_manager() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let a = apply_as(&schema, "a", t, None, json!({"x": "1"})).unwrap();
    let b = apply_as(&schema, "b", t, Some(&a), json!({"y": "1", "tags": ["t"]})).unwrap();
    let err = apply_as(
        &schema,
        "c",
        t,
        Some(&b),
        json!({"x": "2", "y": "2", "tags": ["u"]}),
    )
    .unwrap_err();
    assert_eq!(
        api_error(err).to_string(),
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .spec.x\nconflicts with \"b\":\n- .spec.y"
    );
}

#[test]
fn a_field_an_applier_stops_applying_is_removed_unless_someone_else_owns_it() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let m1 = writer(&schema, "m1", t);
    let live = apply(
        &m1,
        None,
        &config(json!({"x": "1", "y": "2", "tags": ["a", "b"]})),
        false,
    )
    .unwrap();
    let dropped = apply(
        &m1,
        Some(&live),
        &config(json!({"x": "1", "tags": ["a"]})),
        false,
    )
    .unwrap();
    assert_eq!(dropped["spec"], json!({"x": "1", "tags": ["a"]}));
    // m2 shares y; when m1 stops applying it, it stays.
    let shared = apply_as(&schema, "m2", t, Some(&live), json!({"y": "2"})).unwrap();
    let kept = apply(&m1, Some(&shared), &config(json!({"x": "1"})), false).unwrap();
    assert_eq!(kept["spec"], json!({"x": "1", "y": "2"}));
}

#[test]
fn a_repeated_apply_changes_nothing_not_even_the_time() {
    let schema = schema();
    let live = apply_as(
        &schema,
        "m1",
        "2026-01-01T00:00:00Z",
        None,
        json!({"x": "1"}),
    )
    .unwrap();
    let again = apply_as(
        &schema,
        "m1",
        "2026-01-02T00:00:00Z",
        Some(&live),
        json!({"x": "1"}),
    )
    .unwrap();
    assert_eq!(again, live);
}

#[test]
fn an_update_takes_the_fields_it_changes_and_a_later_apply_conflicts_with_it() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let live = apply_as(&schema, "m1", t, None, json!({"x": "1"})).unwrap();
    let mut new = live.clone();
    new["spec"]["x"] = json!("edited");
    new["metadata"]["labels"] = json!({"team": "a"});
    update(&writer(&schema, "kubectl-edit", t), Some(&live), &mut new).unwrap();
    assert_eq!(
        managers(&new),
        [(
            "kubectl-edit".into(),
            "Update".into(),
            json!({"f:metadata": {"f:labels": {".": {}, "f:team": {}}}, "f:spec": {"f:x": {}}})
        )]
    );
    let err = apply_as(&schema, "m1", t, Some(&new), json!({"x": "1"})).unwrap_err();
    assert_eq!(
        api_error(err).to_string(),
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using example.org/v1: .spec.x"
    );
}

#[test]
fn a_status_update_owns_only_status_and_does_not_disturb_the_applier() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let live = apply_as(&schema, "composer", t, None, json!({"x": "1"})).unwrap();
    let mut new = live.clone();
    new["status"] = json!({"phase": "Ready"});
    let provider = Writer {
        status: true,
        ..writer(&schema, "provider", t)
    };
    update(&provider, Some(&live), &mut new).unwrap();
    let entry = &new["metadata"]["managedFields"][1];
    assert_eq!(entry["subresource"], "status");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:status": {".": {}, "f:phase": {}}})
    );
    let again = apply_as(
        &schema,
        "composer",
        "2026-01-02T00:00:00Z",
        Some(&new),
        json!({"x": "1"}),
    )
    .unwrap();
    assert_eq!(again, new);
}

#[test]
fn an_update_that_changes_nothing_records_nothing() {
    let schema = schema();
    let t = "2026-01-01T00:00:00Z";
    let live = apply_as(&schema, "m1", t, None, json!({"x": "1"})).unwrap();
    let mut same = live.clone();
    update(&writer(&schema, "other", t), Some(&live), &mut same).unwrap();
    assert_eq!(same, live);
}

#[test]
fn managed_fields_in_an_apply_configuration_are_refused() {
    let schema = schema();
    let mut body = config(json!({}));
    body["metadata"]["managedFields"] = json!([]);
    let err = apply(&writer(&schema, "m1", "t"), None, &body, false).unwrap_err();
    assert_eq!(err, SsaError::ManagedFieldsInApply);
}

#[test]
fn the_manager_of_an_unnamed_writer_is_its_programs_name() {
    assert_eq!(
        manager_from_user_agent("kubectl/v1.33.0 (linux/amd64) kubernetes/abc"),
        "kubectl"
    );
    assert_eq!(manager_from_user_agent(""), "");
}

#[test]
fn the_create_fast_path_writes_what_the_general_comparison_writes() {
    let schema = schema();
    let builtin = crate::registry::Registry::with_builtins();
    let deployments = builtin.get("apps", "v1", "deployments").unwrap();
    let configmaps = builtin.get("", "v1", "configmaps").unwrap();
    let cases = [
        (
            Shape::Root(&schema),
            json!({"apiVersion": "example.org/v1", "kind": "Widget",
                   "metadata": {"name": "w", "namespace": "d", "uid": "u", "labels": {"a": "b"}, "finalizers": ["f"]},
                   "spec": {"x": "1", "tags": ["a", "b"]}, "status": {"phase": "p"}}),
        ),
        (
            Shape::of(&deployments),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "generateName": "d-"},
                   "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "i",
                   "ports": [{"containerPort": 80}]}]}}}, "status": {}}),
        ),
        (
            Shape::of(&configmaps),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "annotations": {}}, "data": {"k": "v"}}),
        ),
    ];
    for (shape, object) in cases {
        let w = Writer {
            shape,
            ..writer(&schema, "creator", "2026-01-01T00:00:00Z")
        };
        let mut fast = object.clone();
        update(&w, None, &mut fast).unwrap();
        // The general path: the same create through an empty managedFields list that
        // does not decode as entries, so the comparison runs.
        let mut slow = object.clone();
        slow["metadata"]["managedFields"] = json!([]);
        update(&w, None, &mut slow).unwrap();
        assert_eq!(fast, slow, "{object}");
        assert!(
            fast["metadata"]["managedFields"][0]["fieldsV1"].is_object(),
            "{fast}"
        );
    }
}

#[test]
fn a_configuration_that_does_not_fit_its_list_types_is_a_typed_patch_error() {
    let schema = schema();
    let err = apply_as(&schema, "m1", "t", None, json!({"tags": ["a", "a"]})).unwrap_err();
    assert_eq!(
        api_error(err).to_string(),
        "failed to create typed patch object (example.org/v1, Kind=Widget): .spec.tags: duplicate entries for key [=\"a\"]"
    );
    // A written object may repeat an item (AllowDuplicates): the update is recorded.
    let mut new = config(json!({"tags": ["a", "a"]}));
    update(
        &writer(&schema, "m1", "t"),
        Some(&config(json!({}))),
        &mut new,
    )
    .unwrap();
    assert!(new["metadata"]["managedFields"].is_array());
}
