//! The `apiserver_requests` seeds (`fuzz::apiserver::seed`): the checked-in files are what
//! the seed sessions encode, and each, run through the target's own entry
//! (`fuzz::apiserver::answers`, which `check` calls), reaches what it was written for.

use std::path::Path;

use fuzz::apiserver::{Answer, answers, seed};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the fuzz crate has a workspace above it")
}

/// Runs the checked-in seed `name`.
fn replay(name: &str) -> Vec<Answer> {
    let data = std::fs::read(root().join(seed::DIR).join(name)).expect("the seed is checked in");
    let answers = answers(&data);
    assert!(!answers.is_empty(), "{name} decodes into no requests");
    answers
}

fn dump(answers: &[Answer]) -> String {
    answers
        .iter()
        .map(|a| {
            format!(
                "{} -> {} {}",
                a.request,
                a.status,
                a.json.as_ref().map(ToString::to_string).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_seed_files_are_what_the_seed_sessions_encode() {
    let dir = root().join(seed::DIR);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the seed directory is checked in")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = seed::seeds().iter().map(|(n, _)| (*n).to_owned()).collect();
    expected.sort();
    assert_eq!(
        names, expected,
        "rewrite them: cargo run -p fuzz --bin corpus -- write-seeds apiserver_requests"
    );
    for (name, session) in seed::seeds() {
        let file = std::fs::read(dir.join(name)).unwrap();
        assert!(
            file == seed::encode(&session),
            "{name} is stale: cargo run -p fuzz --bin corpus -- write-seeds apiserver_requests"
        );
    }
}

/// The managedFields entries of an answer: (manager, operation, subresource).
fn owners(answer: &Answer) -> Vec<(String, String, String)> {
    let json = answer.json.as_ref().expect("a JSON answer");
    json["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (text("manager"), text("operation"), text("subresource"))
        })
        .collect()
}

fn owner(manager: &str, operation: &str, subresource: &str) -> (String, String, String) {
    (manager.into(), operation.into(), subresource.into())
}

/// The answer's `message` (a Status's).
fn message(answer: &Answer) -> &str {
    answer
        .json
        .as_ref()
        .and_then(|j| j["message"].as_str())
        .unwrap_or_default()
}

#[test]
fn the_apply_seed_meets_a_conflict_a_forced_takeover_and_a_status_apply() {
    let a = replay("apply-conflict-force");
    let statuses: Vec<u16> = a.iter().map(|a| a.status).collect();
    assert_eq!(
        statuses,
        [201, 409, 200, 200, 200, 200, 200, 409, 200],
        "{}",
        dump(&a)
    );
    assert_eq!(owners(&a[0]), [owner("fuzz", "Apply", "")]);
    assert_eq!(
        message(&a[1]),
        "Apply failed with 1 conflict: conflict with \"fuzz\": .spec.forProvider.region"
    );
    assert_eq!(
        a[1].json.as_ref().unwrap()["details"]["causes"][0]["reason"],
        "FieldManagerConflict"
    );
    let forced = &a[2].json.as_ref().unwrap();
    assert_eq!(forced["spec"]["forProvider"]["region"], "eu-west-1");
    // web stops applying storageClass: it is removed, as nobody else owns it.
    assert_eq!(
        a[4].json.as_ref().unwrap()["spec"]["forProvider"]["storageClass"],
        "x"
    );
    assert!(
        a[5].json.as_ref().unwrap()["spec"]["forProvider"]
            .get("storageClass")
            .is_none()
    );
    assert!(
        owners(&a[6]).contains(&owner("db", "Apply", "status")),
        "{}",
        dump(&a)
    );
    assert_eq!(
        message(&a[7]),
        "Apply failed with 1 conflict: conflict with \"web\": .spec.forProvider.region"
    );
}

#[test]
fn the_managed_fields_seed_meets_update_managers_and_client_sent_entries() {
    let a = replay("apply-managed-fields");
    let statuses: Vec<u16> = a.iter().map(|a| a.status).collect();
    assert_eq!(
        statuses,
        [201, 409, 400, 200, 409, 409, 200, 200, 200, 200],
        "{}",
        dump(&a)
    );
    assert_eq!(owners(&a[0]), [owner("web", "Update", "")]);
    // An apply over a create's field conflicts with its Update manager.
    assert_eq!(
        message(&a[1]),
        "Apply failed with 1 conflict: conflict with \"web\" using v1: .data.x"
    );
    assert_eq!(message(&a[2]), "metadata.managedFields must be nil");
    // An update carrying managedFields: the client's entries are what the object keeps.
    assert!(
        owners(&a[3]).contains(&owner("db", "Update", "")),
        "{}",
        dump(&a)
    );
    assert_eq!(
        message(&a[5]),
        "Apply failed with 1 conflict: conflict with \"db\" using v1: .data.x"
    );
    // Forced, the apply takes x.
    assert_eq!(a[8].json.as_ref().unwrap()["data"]["x"], "10");
    assert!(
        owners(&a[9]).contains(&owner("fuzz", "Apply", "")),
        "{}",
        dump(&a)
    );
}

#[test]
fn the_strategic_seed_meets_every_directive() {
    let a = replay("strategic-directives");
    let statuses: Vec<u16> = a.iter().map(|a| a.status).collect();
    assert_eq!(
        statuses,
        [
            201, 200, 200, 200, 200, 200, 200, 500, 400, 500, 200, 200, 404
        ],
        "{}",
        dump(&a)
    );
    let object = |i: usize| a[i].json.as_ref().unwrap();
    let containers = |i: usize| -> Vec<String> {
        object(i)["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // $setElementOrder orders the merged finalizers; $deleteFromPrimitiveList drops one.
    assert_eq!(
        object(1)["metadata"]["finalizers"],
        serde_json::json!(["finalizer.example.org", "a.b/c", "x"])
    );
    assert_eq!(
        object(2)["metadata"]["finalizers"],
        serde_json::json!(["finalizer.example.org", "x"])
    );
    // Containers reordered, an env item deleted by `$patch: delete`.
    assert_eq!(containers(3), ["db", "web"]);
    let web = &object(3)["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(web["env"], serde_json::json!([{"name": "b", "value": "0"}]));
    // $retainKeys clears the strategy's other keys.
    assert_eq!(
        object(4)["spec"]["strategy"],
        serde_json::json!({"type": "Recreate"})
    );
    assert_eq!(containers(5), ["web"]);
    // `$patch: replace` replaces the pod spec.
    assert_eq!(
        object(6)["spec"]["template"]["spec"],
        serde_json::json!({"containers": [{"name": "web", "image": "x"}]})
    );
    assert!(message(&a[7]).starts_with("unknown patch type: \"merge\""));
    assert_eq!(
        message(&a[8]),
        "invalid patch format of setElementOrder list"
    );
    assert!(message(&a[9]).starts_with("The order in patch list:"));
    // A top-level `$patch: delete` empties the object but for what identifies it.
    assert!(object(11).get("spec").is_none(), "{}", dump(&a));
    assert_eq!(object(11)["metadata"]["name"], "web");
}

#[test]
fn the_built_in_apply_seed_merges_containers_by_name_and_conflicts_on_a_shared_one() {
    let a = replay("apply-built-in-lists");
    let statuses: Vec<u16> = a.iter().map(|a| a.status).collect();
    assert_eq!(
        statuses,
        [201, 200, 409, 200, 200, 200, 200],
        "{}",
        dump(&a)
    );
    let containers = |i: usize| -> Vec<String> {
        a[i].json.as_ref().unwrap()["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(containers(1), ["web", "db", "tier"]);
    assert_eq!(
        message(&a[2]),
        "Apply failed with 1 conflict: conflict with \"fuzz\": .spec.template.spec.containers[name=\"web\"].image"
    );
    // Forced, team takes web's image; tier, which its new apply leaves out and nobody
    // else owns, is removed.
    let web = &a[3].json.as_ref().unwrap()["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(web["image"], "db");
    assert_eq!(containers(3), ["web", "db"]);
    // A strategic merge patch deletes web: team owns nothing left, and its entry goes.
    assert!(owners(&a[4]).iter().all(|o| o.0 != "team"), "{}", dump(&a));
    assert!(
        owners(&a[6]).contains(&owner("fuzz", "Apply", "")),
        "{}",
        dump(&a)
    );
}
