//! The seed sessions, each reaching one deep path of the API server.

use super::build::{
    BUCKETS, CONFIG_MAPS, DEPLOYMENTS, apply, at, create, entry, get, object, patch, request,
    session, strategic, w,
};
use crate::apiserver::input::{Name, Op, Param, Patch, Session};

/// The seeds, by file name.
#[must_use]
pub fn seeds() -> Vec<(&'static str, Session)> {
    use serde_json::json;
    let bucket = |region: &str| json!({"spec": {"forProvider": {"region": region}}});
    // The manager `team` applies the Deployment `web` with its one container `name`
    // running `image`.
    let team_applies = |name: &str, image: &str, force: bool| {
        let fields = json!({"metadata": {"name": "web"}, "spec": {"template": {"spec": {
            "containers": [{"name": name, "image": image}]}}}});
        apply(DEPLOYMENTS, "web", &fields, Some("team"), force)
    };
    let deployment = json!({
        "metadata": {"name": "web", "finalizers": ["a.b/c", "finalizer.example.org"]},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "web", "image": "x", "env": [{"name": "a", "value": "1"}, {"name": "b", "value": "0"}]},
                    {"name": "db", "image": "x"},
                ]},
            },
        },
    });
    vec![
        (
            "apply-conflict-force",
            // Two managers applying one field of a custom resource: the second is
            // refused (409) until it forces; the first then stops applying a field; an
            // apply on /status.
            session(vec![
                apply(BUCKETS, "b1", &bucket("us-east-1"), None, false),
                apply(BUCKETS, "b1", &bucket("eu-west-1"), Some("web"), false),
                apply(BUCKETS, "b1", &bucket("eu-west-1"), Some("web"), true),
                get(BUCKETS, "b1"),
                apply(
                    BUCKETS,
                    "b1",
                    &json!({"spec": {"forProvider": {"region": "eu-west-1", "storageClass": "x"}}}),
                    Some("web"),
                    false,
                ),
                apply(
                    BUCKETS,
                    "b1",
                    &json!({"spec": {"forProvider": {"region": "eu-west-1"}}}),
                    Some("web"),
                    false,
                ),
                patch(
                    BUCKETS,
                    "b1",
                    true,
                    Patch::Apply {
                        object: object(&json!({"status": {"conditions": [
                            {"type": "Ready", "status": "true"}]}})),
                        anonymous: true,
                    },
                    vec![Param::FieldManager(w("db"))],
                ),
                apply(BUCKETS, "b1", &bucket("us-east-1"), None, false),
                get(BUCKETS, "b1"),
            ]),
        ),
        (
            "apply-managed-fields",
            // Managed fields given by clients: an apply carrying them (refused), an
            // update and a merge patch replacing them, an empty list clearing them, and
            // an Update manager's field an apply then conflicts with.
            session(vec![
                create(
                    CONFIG_MAPS,
                    &json!({"metadata": {"name": "cm1"}, "data": {"x": "1", "app": "web"}}),
                    vec![Param::FieldManager(w("web"))],
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"metadata": {"name": "cm1"}, "data": {"x": "10"}}),
                    None,
                    false,
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"metadata": {"name": "cm1", "managedFields": [
                        entry("db", "Apply", &json!({"f:data": {"f:x": {}}}))]},
                        "data": {"x": "10"}}),
                    None,
                    true,
                ),
                request(Op::Update {
                    at: at(CONFIG_MAPS),
                    name: Name::Other(w("cm1")),
                    status: false,
                    object: object(&json!({
                        "metadata": {"name": "cm1", "namespace": "default", "managedFields": [
                            entry("db", "Update", &json!({"f:data": {"f:x": {}, "f:app": {}}})),
                            entry("team", "Apply", &json!({"f:data": {"f:app": {}}}))]},
                        "data": {"x": "1", "app": "db"},
                    })),
                    query: Vec::new(),
                }),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"app": "tier"}}),
                    Some("team"),
                    false,
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"x": "10"}}),
                    None,
                    false,
                ),
                patch(
                    CONFIG_MAPS,
                    "cm1",
                    false,
                    Patch::Merge(object(
                        &json!({"metadata": {"name": "cm1", "managedFields": []}}),
                    )),
                    Vec::new(),
                ),
                patch(
                    CONFIG_MAPS,
                    "cm1",
                    false,
                    Patch::Merge(object(
                        &json!({"metadata": {"name": "cm1", "managedFields": [
                        {"manager": "x", "operation": "delete", "fieldsV1": {"f:spec": 1}}]}}),
                    )),
                    Vec::new(),
                ),
                apply(
                    CONFIG_MAPS,
                    "cm1",
                    &json!({"data": {"x": "10"}}),
                    None,
                    true,
                ),
                get(CONFIG_MAPS, "cm1"),
            ]),
        ),
        (
            "strategic-directives",
            // A Deployment patched with every strategic merge directive: element order,
            // deletions from a primitive list, `$patch: delete|replace|merge`,
            // `$retainKeys`, and malformed ones.
            session(vec![
                create(DEPLOYMENTS, &deployment, Vec::new()),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {
                        "$setElementOrder/finalizers": ["finalizer.example.org", "a.b/c", "x"],
                        "finalizers": ["x"]}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.b/c"]}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$setElementOrder/containers": [{"name": "db"}, {"name": "web"}],
                        "containers": [{"name": "web", "$setElementOrder/env": [{"name": "b"}, {"name": "a"}],
                            "env": [{"name": "a", "$patch": "delete"}]}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {"containers": [
                        {"name": "db", "$patch": "delete"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$patch": "replace", "containers": [{"name": "web", "image": "x"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {"containers": [
                        {"name": "web", "$patch": "merge"}, {"$patch": "delete"}]}}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$setElementOrder/finalizers": "x",
                        "$deleteFromPrimitiveList/finalizers": {"x": 1}},
                        "spec": {"strategy": {"$retainKeys": "type"}}}),
                ),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"spec": {"template": {"spec": {
                        "$setElementOrder/containers": [{"name": "x"}],
                        "containers": [{"name": "web"}, {"name": "db"}]}}}}),
                ),
                get(DEPLOYMENTS, "web"),
                strategic(DEPLOYMENTS, "web", &json!({"$patch": "delete"})),
                strategic(CONFIG_MAPS, "cm1", &json!({"$patch": "replace"})),
            ]),
        ),
        (
            "apply-built-in-lists",
            // Server-side apply of a Deployment by two managers: containers merge by
            // name, the second manager's container is its own, its change of the
            // first's image conflicts, forced it takes it; then a strategic merge patch
            // of the applied object (an Update manager beside the appliers).
            session(vec![
                apply(DEPLOYMENTS, "web", &deployment, None, false),
                team_applies("tier", "x", false),
                team_applies("web", "db", false),
                team_applies("web", "db", true),
                strategic(
                    DEPLOYMENTS,
                    "web",
                    &json!({"metadata": {"$setElementOrder/finalizers": ["a.b/c"], "finalizers": ["a.b/c"]},
                        "spec": {"template": {"spec": {"containers": [{"name": "web", "$patch": "delete"}]}}}}),
                ),
                apply(DEPLOYMENTS, "web", &deployment, None, false),
                get(DEPLOYMENTS, "web"),
            ]),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use arbitrary::{Arbitrary, Unstructured};

    use super::*;
    use crate::apiserver::seed::encode;

    #[test]
    fn a_session_decodes_into_what_was_encoded() {
        for (name, session) in seeds() {
            let bytes = encode(&session);
            let decoded = Session::arbitrary_take_rest(Unstructured::new(&bytes)).unwrap();
            assert_eq!(format!("{decoded:?}"), format!("{session:?}"), "{name}");
        }
    }

    #[test]
    fn the_kinds_are_the_resources_they_name() {
        use crate::apiserver::input::RESOURCES;
        assert_eq!(RESOURCES[usize::from(CONFIG_MAPS)].2, "configmaps");
        assert_eq!(RESOURCES[usize::from(DEPLOYMENTS)].2, "deployments");
        assert_eq!(RESOURCES[usize::from(BUCKETS)].2, "buckets");
    }
}
