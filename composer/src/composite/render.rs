//! A desired composed resource made ready to apply: its name kept from the observed one,
//! and the metadata core derives from the XR.
//!
//! Follows crossplane/crossplane's `composite/composition_functions.go` (the loop that loads
//! desired composed resources) and `composite/composition_render.go`
//! (`RenderComposedResourceMetadata`).

use serde_json::{Map, Value, json};

/// The XR label that names the prefix of what it composes (`LabelKeyNamePrefixForComposed`);
/// core sets it to the XR's name.
pub const LABEL_COMPOSITE: &str = "crossplane.io/composite";
/// The annotation naming a composed resource in the pipeline.
pub const ANNOTATION_COMPOSITION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// Why a desired composed resource cannot be rendered.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// The desired resource is not an object.
    #[error("desired composed resource {0:?} is not an object")]
    NotAnObject(String),
    /// The XR has not been labelled yet.
    #[error(
        "cannot find top-level composite resource name label \"crossplane.io/composite\" in composite resource metadata"
    )]
    NoCompositeLabel,
    /// Another controller owns the resource (`meta.AddControllerReference`).
    #[error("composed resource {resource:?} is already controlled by {kind} {name} (UID {uid})")]
    ControlledByOther {
        /// The composed resource's pipeline name.
        resource: String,
        /// The other controller's kind.
        kind: String,
        /// Its name.
        name: String,
        /// Its uid.
        uid: String,
    },
}

/// Renders the desired composed resource `name` of `xr` (`apiVersion` and `kind` included).
///
/// # Semantics
/// - An observed resource of the same pipeline name lends its namespace, name and
///   generateName (absent ones are cleared), so the same object is applied again.
/// - A resource with neither a name nor a generateName gets the generateName
///   `<crossplane.io/composite label>-`; a namespaced XR's resources take its namespace.
/// - The `crossplane.io/composition-resource-name` annotation, the
///   `crossplane.io/composite` label and a controller owner reference to the XR (with
///   `blockOwnerDeletion`) are added.
///
/// # Errors
/// [`RenderError`]: not an object, an unlabelled XR, or another controller.
pub fn render_composed(
    name: &str,
    desired: &Value,
    observed: Option<&Value>,
    xr: &Value,
) -> Result<Value, RenderError> {
    let mut cd = desired.clone();
    let Some(object) = cd.as_object_mut() else {
        return Err(RenderError::NotAnObject(name.to_owned()));
    };
    // A null field is an absent one, as Kubernetes' typed decoding reads it.
    let metadata = object.entry("metadata").or_insert(Value::Null);
    if metadata.is_null() {
        *metadata = json!({});
    }
    let metadata = metadata
        .as_object_mut()
        .ok_or_else(|| RenderError::NotAnObject(name.to_owned()))?;

    if let Some(observed) = observed {
        for field in ["namespace", "name", "generateName"] {
            match observed.pointer(&format!("/metadata/{field}")) {
                Some(v) if v.as_str().is_some_and(|s| !s.is_empty()) => {
                    metadata.insert(field.to_owned(), v.clone());
                }
                _ => {
                    metadata.remove(field);
                }
            }
        }
    }

    let prefix = xr
        .pointer(&format!(
            "/metadata/labels/{}",
            LABEL_COMPOSITE.replace('/', "~1")
        ))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(RenderError::NoCompositeLabel)?;
    if text(metadata, "name").is_empty() && text(metadata, "generateName").is_empty() {
        metadata.insert("generateName".to_owned(), json!(format!("{prefix}-")));
    }
    if let Some(namespace) = xr.pointer("/metadata/namespace").and_then(Value::as_str)
        && !namespace.is_empty()
    {
        metadata.insert("namespace".to_owned(), json!(namespace));
    }
    if !name.is_empty() {
        insert_in(
            metadata,
            "annotations",
            ANNOTATION_COMPOSITION_RESOURCE_NAME,
            name,
        );
    }
    insert_in(metadata, "labels", LABEL_COMPOSITE, prefix);

    let field = |path: &str| xr.pointer(path).cloned().unwrap_or(Value::Null);
    let owner = json!({
        "apiVersion": field("/apiVersion"),
        "kind": field("/kind"),
        "name": field("/metadata/name"),
        "uid": field("/metadata/uid"),
        "controller": true,
        "blockOwnerDeletion": true,
    });
    let owners = metadata.entry("ownerReferences").or_insert(Value::Null);
    if owners.is_null() {
        *owners = json!([]);
    }
    let owners = owners
        .as_array_mut()
        .ok_or_else(|| RenderError::NotAnObject(name.to_owned()))?;
    if let Some(other) = owners
        .iter()
        .find(|o| o["controller"] == json!(true))
        .filter(|o| o["uid"] != owner["uid"])
    {
        let s = |k: &str| other[k].as_str().unwrap_or_default().to_owned();
        return Err(RenderError::ControlledByOther {
            resource: name.to_owned(),
            kind: s("kind"),
            name: s("name"),
            uid: s("uid"),
        });
    }
    // `meta.AddOwnerReference`: a reference with the same uid is replaced where it is.
    match owners.iter_mut().find(|o| o["uid"] == owner["uid"]) {
        Some(existing) => *existing = owner,
        None => owners.push(owner),
    }
    Ok(cd)
}

fn text<'a>(metadata: &'a Map<String, Value>, key: &str) -> &'a str {
    metadata
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn insert_in(metadata: &mut Map<String, Value>, map: &str, key: &str, value: &str) {
    let entry = metadata.entry(map).or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    entry
        .as_object_mut()
        .expect("made an object above")
        .insert(key.to_owned(), json!(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xr() -> Value {
        json!({
            "apiVersion": "example.org/v1", "kind": "XBucket",
            "metadata": {"name": "one", "namespace": "team-a", "uid": "xr-uid",
                         "labels": {LABEL_COMPOSITE: "one"}},
        })
    }

    fn bucket() -> Value {
        json!({"apiVersion": "s3.example.org/v1", "kind": "Bucket", "spec": {"region": "eu"}})
    }

    #[test]
    fn a_new_resource_gets_the_xr_s_prefix_namespace_label_annotation_and_owner() {
        let cd = render_composed("bucket-0", &bucket(), None, &xr()).unwrap();
        let m = &cd["metadata"];
        assert_eq!(m["generateName"], "one-");
        assert!(m.get("name").is_none());
        assert_eq!(m["namespace"], "team-a");
        assert_eq!(m["labels"][LABEL_COMPOSITE], "one");
        assert_eq!(
            m["annotations"][ANNOTATION_COMPOSITION_RESOURCE_NAME],
            "bucket-0"
        );
        assert_eq!(
            m["ownerReferences"],
            json!([{"apiVersion": "example.org/v1", "kind": "XBucket", "name": "one",
                    "uid": "xr-uid", "controller": true, "blockOwnerDeletion": true}])
        );
        assert_eq!(cd["spec"]["region"], "eu");
    }

    #[test]
    fn null_metadata_or_owner_references_read_as_absent() {
        // Found by the composer_inputs fuzz target: a function's `metadata: null` (or
        // `ownerReferences: null`) was refused as not an object.
        for desired in [
            json!({"apiVersion": "v1", "kind": "B", "metadata": null}),
            json!({"apiVersion": "v1", "kind": "B", "metadata": {"ownerReferences": null}}),
        ] {
            let cd = render_composed("b", &desired, None, &xr()).unwrap();
            assert_eq!(cd["metadata"]["generateName"], "one-");
            assert_eq!(cd["metadata"]["ownerReferences"][0]["uid"], "xr-uid");
        }
        let list = json!({"metadata": ["not", "an", "object"]});
        assert_eq!(
            render_composed("b", &list, None, &xr()),
            Err(RenderError::NotAnObject("b".to_owned()))
        );
    }

    #[test]
    fn an_observed_resource_keeps_its_name_and_is_owned_once() {
        let observed = render_composed("bucket-0", &bucket(), None, &xr()).unwrap();
        let mut observed = observed;
        observed["metadata"]["name"] = json!("one-x7k2p");
        let mut desired = bucket();
        desired["metadata"] = json!({"generateName": "other-", "ownerReferences": observed["metadata"]["ownerReferences"].clone()});
        let cd = render_composed("bucket-0", &desired, Some(&observed), &xr()).unwrap();
        assert_eq!(cd["metadata"]["name"], "one-x7k2p");
        assert_eq!(cd["metadata"]["generateName"], "one-");
        assert_eq!(
            cd["metadata"]["ownerReferences"].as_array().unwrap().len(),
            1
        );
    }

    #[test]
    fn an_unlabelled_xr_or_another_controller_is_refused() {
        let mut unlabelled = xr();
        unlabelled["metadata"]["labels"] = json!({});
        assert_eq!(
            render_composed("b", &bucket(), None, &unlabelled).unwrap_err(),
            RenderError::NoCompositeLabel
        );
        let mut owned = bucket();
        owned["metadata"] = json!({"ownerReferences": [{"apiVersion": "v1", "kind": "XQueue",
            "name": "q", "uid": "q-uid", "controller": true}]});
        assert!(matches!(
            render_composed("b", &owned, None, &xr()),
            Err(RenderError::ControlledByOther { ref uid, .. }) if uid == "q-uid"
        ));
    }
}
