use serde_json::{Value, json};

use super::*;
use crate::registry::{ResourceKind, Schema};
use std::sync::Arc;

/// A Crossplane-style managed resource schema.
fn schema() -> Structural {
    Structural::compile(&json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["forProvider"],
                "x-kubernetes-validations": [
                    {"rule": "!has(self.minSize) || !has(self.maxSize) || self.minSize <= self.maxSize",
                     "message": "minSize must not exceed maxSize"}
                ],
                "properties": {
                    "providerConfigRef": {
                        "type": "object",
                        "default": {"name": "default"},
                        "properties": {
                            "kind": {"type": "string", "default": "ProviderConfig"},
                            "name": {"type": "string"}
                        }
                    },
                    "deletionPolicy": {"type": "string", "default": "Delete",
                                       "enum": ["Orphan", "Delete"]},
                    "forProvider": {
                        "type": "object",
                        "required": ["region"],
                        "properties": {
                            "region": {"type": "string", "pattern": "^[a-z]+-[a-z]+-[0-9]$",
                                       "maxLength": 16},
                            "versioning": {"type": "boolean", "default": false},
                            "tags": {"type": "array", "maxItems": 2,
                                     "x-kubernetes-list-type": "set",
                                     "items": {"type": "string"}},
                            "created": {"type": "string", "format": "date-time"},
                            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                        }
                    },
                    "minSize": {"type": "integer", "minimum": 1},
                    "maxSize": {"type": "integer", "maximum": 10},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    }))
    .unwrap()
}

fn kind() -> ResourceKind {
    let crd = crate::crd::parse(&json!({
        "metadata": {"name": "buckets.s3.example.org"},
        "spec": {"group": "s3.example.org", "scope": "Cluster",
                 "names": {"plural": "buckets", "kind": "Bucket"},
                 "versions": [{"name": "v1beta1", "served": true, "storage": true}]}
    }))
    .unwrap();
    let mut kind = crd.kinds[0].clone();
    kind.structural = Some(Schema(Arc::new(schema())));
    kind
}

fn bucket(spec: Value) -> Value {
    json!({"apiVersion": "s3.example.org/v1beta1", "kind": "Bucket",
           "metadata": {"name": "b1"}, "spec": spec})
}

fn messages(causes: &[crate::error::Cause]) -> Vec<String> {
    causes.iter().map(crate::error::Cause::text).collect()
}

#[test]
fn pruning_drops_undeclared_fields_and_reports_their_paths() {
    let mut object = bucket(json!({
        "forProvider": {"region": "eu-west-1", "colour": "red",
                        "extra": {"anything": {"goes": 1}}},
        "labels": {"a": "b"},
        "unknown": [1]
    }));
    object["metadata"]["bogus"] = json!(1);
    object["status"] = json!({"free": "form"});
    let pruned = schema().prune(&mut object);
    assert_eq!(
        pruned,
        ["metadata.bogus", "spec.forProvider.colour", "spec.unknown"]
    );
    assert_eq!(
        object["spec"]["forProvider"]["extra"]["anything"]["goes"],
        1
    );
    assert_eq!(object["spec"]["labels"]["a"], "b");
    assert_eq!(object["status"]["free"], "form");
}

#[test]
fn defaults_fill_missing_and_null_fields_top_down() {
    let mut object = bucket(json!({"forProvider": {"region": "eu-west-1"},
                                   "deletionPolicy": null}));
    schema().apply_defaults(&mut object);
    let spec = &object["spec"];
    // The parent default is applied first, then its own properties' defaults.
    assert_eq!(
        spec["providerConfigRef"],
        json!({"name": "default", "kind": "ProviderConfig"})
    );
    assert_eq!(spec["deletionPolicy"], "Delete");
    assert_eq!(spec["forProvider"]["versioning"], false);
    // A provided value is kept.
    let mut object = bucket(json!({"providerConfigRef": {"name": "team-a"},
                                   "forProvider": {"region": "eu-west-1"}}));
    schema().apply_defaults(&mut object);
    assert_eq!(object["spec"]["providerConfigRef"]["name"], "team-a");
    assert_eq!(
        object["spec"]["providerConfigRef"]["kind"],
        "ProviderConfig"
    );
}

#[test]
fn validation_reports_each_field_as_the_apiserver_words_it() {
    let object = bucket(json!({
        "forProvider": {"region": "Europe", "tags": ["a", "b", "a"], "created": "yesterday",
                        "versioning": "yes"},
        "deletionPolicy": "Keep",
        "minSize": 0,
        "maxSize": 11,
        "labels": {"n": 1}
    }));
    assert_eq!(
        messages(&schema().validate(&object, None)),
        [
            "spec.deletionPolicy: Unsupported value: \"Keep\": supported values: \"Orphan\", \"Delete\"",
            "spec.forProvider.created: Invalid value: \"yesterday\": spec.forProvider.created in body must be of type date-time: \"yesterday\"",
            "spec.forProvider.region: Invalid value: \"Europe\": spec.forProvider.region in body should match '^[a-z]+-[a-z]+-[0-9]$'",
            "spec.forProvider.tags: Too many: 3: must have at most 2 items",
            "spec.forProvider.tags[2]: Duplicate value: \"a\"",
            "spec.forProvider.versioning: Invalid value: \"string\": spec.forProvider.versioning in body must be of type boolean: \"string\"",
            "spec.labels.n: Invalid value: \"integer\": spec.labels.n in body must be of type string: \"integer\"",
            "spec.maxSize: Invalid value: 11: spec.maxSize in body should be less than or equal to 10",
            "spec.minSize: Invalid value: 0: spec.minSize in body should be greater than or equal to 1",
        ]
    );
    let causes = schema().validate(&bucket(json!({"minSize": 5, "maxSize": 3})), None);
    assert_eq!(
        messages(&causes),
        [
            "spec.forProvider: Required value",
            "spec: Invalid value: \"object\": minSize must not exceed maxSize",
        ]
    );
    assert_eq!(causes[0].reason, "FieldValueRequired");
    let long = bucket(json!({"forProvider": {"region": "abcdefgh-abcdefgh-1"}}));
    assert_eq!(
        messages(&schema().validate(&long, None)),
        ["spec.forProvider.region: Too long: may not be more than 16 bytes"]
    );
}

#[test]
fn admission_is_strict_warns_or_ignores_and_ratchets_unchanged_values() {
    let kind = kind();
    let schema = schema();
    let mut object = bucket(json!({"forProvider": {"region": "eu-west-1", "colour": "red"}}));
    let err = schema
        .admit(&kind, &mut object.clone(), None, FieldValidation::Strict)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Bucket in version \"v1beta1\" cannot be handled as a Bucket: strict decoding error: unknown field \"spec.forProvider.colour\""
    );
    let warnings = schema
        .admit(&kind, &mut object, None, FieldValidation::Warn)
        .unwrap();
    assert_eq!(warnings, ["unknown field \"spec.forProvider.colour\""]);
    assert_eq!(object["spec"]["deletionPolicy"], "Delete");

    let mut invalid = bucket(json!({"forProvider": {"region": "Europe"}}));
    let err = schema
        .admit(&kind, &mut invalid, None, FieldValidation::Ignore)
        .unwrap_err();
    assert_eq!(err.code(), 422);
    assert!(err.to_string().starts_with("Bucket.s3.example.org \"b1\" is invalid: spec.forProvider.region: Invalid value: \"Europe\""));
    // An update that leaves the invalid region alone passes; one that changes it to
    // another invalid value does not.
    let old = invalid.clone();
    let mut update = invalid.clone();
    update["spec"]["minSize"] = json!(2);
    schema
        .admit(&kind, &mut update, Some(&old), FieldValidation::Strict)
        .unwrap();
    update["spec"]["forProvider"]["region"] = json!("Asia");
    assert!(
        schema
            .admit(&kind, &mut update, Some(&old), FieldValidation::Strict)
            .is_err()
    );
}

#[test]
fn floats_print_as_go_prints_them() {
    assert_eq!(validate::go_float(1.5), "1.5");
    assert_eq!(validate::go_float(10.0), "10");
    assert_eq!(validate::go_float(1_000_000.0), "1e+06");
    assert_eq!(validate::go_float(0.00001), "1e-05");
}
