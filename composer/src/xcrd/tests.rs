use serde_json::json;

use super::*;

fn xrd(extra: serde_json::Value) -> CompositeResourceDefinition {
    let mut xrd = crate::api::xbucket_json(json!({
        "type": "object",
        "description": "A bucket.",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}},
            "spec": {
                "type": "object",
                "required": ["region"],
                "properties": {"region": {"type": "string"}, "crossplane": {"type": "string"}},
            },
            "status": {"type": "object", "properties": {"arn": {"type": "string"}}},
        },
    }));
    json_patch(
        &mut xrd,
        json!({"metadata": {"uid": "u-1", "labels": {"team": "a"}}}),
    );
    json_patch(&mut xrd, extra);
    serde_json::from_value(xrd).unwrap()
}

fn json_patch(target: &mut serde_json::Value, patch: serde_json::Value) {
    if let (Some(t), serde_json::Value::Object(p)) = (target.as_object_mut(), patch.clone()) {
        for (k, v) in p {
            json_patch(t.entry(k).or_insert(serde_json::Value::Null), v);
        }
    } else {
        *target = patch;
    }
}

fn root(crd: &CustomResourceDefinition) -> serde_json::Value {
    serde_json::to_value(
        &crd.spec.versions[0]
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema,
    )
    .unwrap()
}

#[test]
fn the_crd_is_named_and_owned_as_its_xrd() {
    let crd = for_composite_resource(&xrd(json!({}))).unwrap();
    assert_eq!(crd.metadata.name.as_deref(), Some("xbuckets.example.org"));
    assert_eq!(crd.spec.scope, "Namespaced");
    assert_eq!(
        crd.spec.names.categories,
        Some(vec!["composite".to_owned()])
    );
    let owner = &crd.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("CompositeResourceDefinition", "u-1")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    let version = &crd.spec.versions[0];
    assert!(version.served && version.storage);
    assert!(version.subresources.as_ref().unwrap().status.is_some());
}

#[test]
fn the_xrd_schema_is_merged_under_core_s_fields() {
    let crd = for_composite_resource(&xrd(json!({}))).unwrap();
    let root = root(&crd);
    assert_eq!(root["description"], "A bucket.");
    assert_eq!(root["required"], json!(["spec"]));
    // The XRD's smaller name limit wins over 63.
    assert_eq!(
        root["properties"]["metadata"]["properties"]["name"]["maxLength"],
        20
    );
    let spec = &root["properties"]["spec"];
    assert_eq!(spec["required"], json!(["region"]));
    assert_eq!(spec["properties"]["region"]["type"], "string");
    // core's spec.crossplane replaces whatever the XRD declared under that name.
    let crossplane = &spec["properties"]["crossplane"];
    assert_eq!(crossplane["type"], "object");
    assert_eq!(
        crossplane["properties"]["compositionUpdatePolicy"]["default"],
        "Automatic"
    );
    assert_eq!(
        crossplane["properties"]["resourceRefs"]["x-kubernetes-list-type"],
        "atomic"
    );
    // A namespaced XR's refs carry no namespace.
    assert!(
        crossplane["properties"]["resourceRefs"]["items"]["properties"]
            .get("namespace")
            .is_none()
    );
    let status = &root["properties"]["status"]["properties"];
    assert_eq!(status["arn"]["type"], "string");
    assert_eq!(
        status["conditions"]["x-kubernetes-list-map-keys"],
        json!(["type"])
    );
    assert_eq!(status["lastHandledReconcileAt"]["type"], "string");
}

#[test]
fn a_cluster_xr_with_a_manual_default_gets_namespaced_refs_and_that_default() {
    let crd = for_composite_resource(&xrd(json!({"spec": {
        "scope": "Cluster",
        "defaultCompositionUpdatePolicy": "Manual",
    }})))
    .unwrap();
    assert_eq!(crd.spec.scope, "Cluster");
    let crossplane = &root(&crd)["properties"]["spec"]["properties"]["crossplane"]["properties"];
    assert_eq!(crossplane["compositionUpdatePolicy"]["default"], "Manual");
    assert_eq!(
        crossplane["resourceRefs"]["items"]["properties"]["namespace"]["type"],
        "string"
    );
}

#[test]
fn the_name_limit_is_63_without_a_smaller_one() {
    let mut x = xrd(json!({}));
    x.spec.versions[0]
        .schema
        .as_mut()
        .unwrap()
        .open_api_v3_schema = json!({"type": "object", "properties": {"spec": {"type": "object"}}});
    let root = root(&for_composite_resource(&x).unwrap());
    assert_eq!(
        root["properties"]["metadata"]["properties"]["name"]["maxLength"],
        63
    );
    // An XRD spec without required fields adds none.
    assert!(root["properties"]["spec"].get("required").is_none());
}

#[test]
fn core_s_printer_columns_follow_the_xrd_s() {
    let x = xrd(json!({"spec": {"versions": [{
        "name": "v1", "referenceable": true, "served": true,
        "schema": {"openAPIV3Schema": {"type": "object"}},
        "additionalPrinterColumns": [{"name": "REGION", "type": "string", "jsonPath": ".spec.region"}],
    }]}}));
    let crd = for_composite_resource(&x).unwrap();
    let names: Vec<_> = crd.spec.versions[0]
        .additional_printer_columns
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "REGION",
            "SYNCED",
            "READY",
            "COMPOSITION",
            "COMPOSITIONREVISION",
            "AGE"
        ]
    );
}

#[test]
fn labels_merge_and_annotations_come_from_spec_metadata() {
    let crd = for_composite_resource(&xrd(json!({"spec": {"metadata": {
        "labels": {"tier": "b"},
        "annotations": {"note": "x"},
    }}})))
    .unwrap();
    let labels = crd.metadata.labels.unwrap();
    assert_eq!(
        (labels["team"].as_str(), labels["tier"].as_str()),
        ("a", "b")
    );
    assert_eq!(crd.metadata.annotations.unwrap()["note"], "x");
}

#[test]
fn a_schema_that_does_not_parse_generates_no_crd() {
    let mut x = xrd(json!({}));
    x.spec.versions[0]
        .schema
        .as_mut()
        .unwrap()
        .open_api_v3_schema = json!({"type": ["object"]});
    assert!(matches!(
        for_composite_resource(&x),
        Err(ApiError::SchemaParse { .. })
    ));
}
