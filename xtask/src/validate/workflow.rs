//! ci/github/loadtest.yml and ci/kind/cluster.yaml: the workflow's inputs, steps and
//! actions (pinned by major version, reports uploaded even on failure), every file its
//! `run:` blocks name, no expression pasted into a script, and a kind node image pinned
//! by version and digest that agrees with the workflow's kind and kubectl versions.

use std::path::Path;

use serde_json::Value;

use super::need::{Need, document, items, str_of};

/// What the check found: a summary line and the `run:` blocks, as scripts for shellcheck.
#[derive(Debug)]
pub struct Workflow {
    pub summary: String,
    pub run_blocks: Vec<String>,
}

/// The actions the workflow must use.
const ACTIONS: [&str; 3] = [
    "actions/checkout",
    "actions/upload-artifact",
    "mikepenz/action-junit-report",
];

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `uses` is `OWNER/NAME@vMAJOR`.
fn pinned_by_major(uses: &str) -> bool {
    let part = |s: &str| !s.is_empty() && s.chars().all(|c| word_char(c) || ".-".contains(c));
    let Some((action, version)) = uses.split_once('@') else {
        return false;
    };
    let Some((owner, name)) = action.split_once('/') else {
        return false;
    };
    let major = version.strip_prefix('v').unwrap_or_default();
    part(owner) && part(name) && !major.is_empty() && major.bytes().all(|b| b.is_ascii_digit())
}

/// The paths under ci/ or scenarios/ that `script` names (a word boundary before them),
/// sorted and without duplicates.
pub fn referenced_paths(script: &str) -> Vec<&str> {
    let path_char = |c: char| word_char(c) || "./-".contains(c);
    let mut found = Vec::new();
    for prefix in ["ci/", "scenarios/"] {
        for (i, _) in script.match_indices(prefix) {
            if script[..i].chars().next_back().is_some_and(word_char) {
                continue;
            }
            let rest = &script[i + prefix.len()..];
            let len = rest.find(|c| !path_char(c)).unwrap_or(rest.len());
            if len > 0 {
                found.push(&script[i..i + prefix.len() + len]);
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// `MAJOR.MINOR` of a node image `kindest/node:vMAJOR.MINOR.PATCH@sha256:<64 hex>`.
fn node_minor(image: &str) -> Option<&str> {
    let (version, digest) = image
        .strip_prefix("kindest/node:v")?
        .split_once("@sha256:")?;
    let hex = digest.len() == 64
        && digest
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let parts: Vec<&str> = version.split('.').collect();
    let numeric = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (hex && numeric).then(|| &version[..parts[0].len() + 1 + parts[1].len()])
}

/// Checks the workflow `wf` and the kind config `cluster` (and its text), files named
/// relative to `root`.
pub fn check(
    root: &Path,
    wf: &Value,
    cluster: &Value,
    cluster_text: &str,
) -> Result<Workflow, Vec<String>> {
    let mut n = Need::default();
    // A YAML 1.1 reader reads the key `on` as true; this one (1.2) as "on".
    let on = if wf["on"].is_null() {
        &wf["true"]
    } else {
        &wf["on"]
    };
    let default = str_of(&on["workflow_dispatch"]["inputs"]["scenario"]["default"]);
    n.need(
        !default.is_empty() && root.join(default).exists(),
        format!("the default scenario exists: {default:?}"),
    );
    let steps = items(&wf["jobs"]["loadtest"]["steps"]);
    // The step's fallback (pull requests have no inputs) is the same scenario; the
    // harness's tests check that it takes at most 10 minutes.
    let run_step = steps
        .iter()
        .find(|s| s["name"] == "Run the chosen scenario")
        .unwrap_or(&Value::Null);
    n.need(
        str_of(&run_step["env"]["SCENARIO"]).contains(&format!("inputs.scenario || '{default}'")),
        format!(
            "the step \"Run the chosen scenario\" falls back to {default}: {}",
            run_step["env"]
        ),
    );
    let uses = |action: &str| {
        steps
            .iter()
            .find(|s| str_of(&s["uses"]).split('@').next() == Some(action))
    };
    for s in steps {
        n.need(!s["name"].is_null(), format!("every step has a name: {s}"));
        if let Some(u) = s["uses"].as_str() {
            n.need(pinned_by_major(u), format!("pinned by major version: {u}"));
        }
    }
    for action in ACTIONS {
        n.need(uses(action).is_some(), format!("missing step {action}"));
    }
    for action in &ACTIONS[1..] {
        if let Some(s) = uses(action) {
            n.need(
                str_of(&s["if"]).starts_with("always()"),
                format!("{action} must run if: always()"),
            );
        }
    }
    if let Some(s) = uses("actions/upload-artifact") {
        n.need(
            str_of(&s["with"]["path"]).starts_with("out/"),
            "the artifact is out/",
        );
    }
    if let Some(s) = uses("mikepenz/action-junit-report") {
        n.need(
            str_of(&s["with"]["report_paths"]).contains("junit.xml"),
            "the JUnit report is junit.xml",
        );
    }
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let script = runs.join("\n");
    n.need(
        script.contains("cargo xtask kind scenarios/smoke.yaml"),
        "the workflow runs scenarios/smoke.yaml with cargo xtask kind",
    );
    for path in referenced_paths(&script) {
        n.need(
            root.join(path).exists(),
            format!("the workflow runs {path}, which does not exist"),
        );
    }
    for body in &runs {
        n.need(
            !body.contains("${{"),
            format!("expressions go through env, not into run: blocks:\n{body}"),
        );
    }

    n.need(
        cluster["kind"] == "Cluster" && cluster["apiVersion"] == "kind.x-k8s.io/v1alpha4",
        "ci/kind/cluster.yaml is a kind.x-k8s.io/v1alpha4 Cluster",
    );
    let nodes = items(&cluster["nodes"]);
    n.need(nodes.len() == 1, "ci/kind/cluster.yaml has one node");
    let image = nodes
        .first()
        .map(|node| str_of(&node["image"]))
        .unwrap_or_default();
    let minor = node_minor(image);
    n.need(
        minor.is_some(),
        format!("node image pinned by version and digest: {image:?}"),
    );
    let kind_version = str_of(&wf["env"]["KIND_VERSION"]);
    n.need(
        !kind_version.is_empty() && cluster_text.contains(kind_version),
        format!("cluster.yaml names the kind release {kind_version:?}"),
    );
    if let Some(minor) = minor {
        n.need(
            str_of(&wf["env"]["KUBECTL_VERSION"]).starts_with(&format!("v{minor}.")),
            format!(
                "kubectl {} matches the node's v{minor}",
                wf["env"]["KUBECTL_VERSION"]
            ),
        );
    }
    for patch in items(&cluster["kubeadmConfigPatches"]) {
        let kind = document(str_of(patch), "a kubeadmConfigPatch").map(|p| p["kind"].clone());
        n.need(
            matches!(&kind, Ok(k) if k == "ClusterConfiguration"),
            format!("a kubeadmConfigPatch of kind ClusterConfiguration: {kind:?}"),
        );
    }
    n.finish()?;
    let mut actions: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["uses"].as_str()?.split('@').next())
        .collect();
    actions.sort_unstable();
    actions.dedup();
    Ok(Workflow {
        summary: format!(
            "workflow: {} steps, actions {actions:?}; kind {kind_version}, node v{}",
            steps.len(),
            minor.unwrap_or_default()
        ),
        run_blocks: runs
            .iter()
            .map(|body| format!("#!/usr/bin/env bash\nset -euo pipefail\n{body}"))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::step::workspace_root;
    use crate::validate::need::document;

    fn files() -> (Value, Value, String) {
        let root = workspace_root();
        let wf = std::fs::read_to_string(root.join("ci/github/loadtest.yml")).unwrap();
        let cluster = std::fs::read_to_string(root.join("ci/kind/cluster.yaml")).unwrap();
        (
            document(&wf, "loadtest.yml").unwrap(),
            document(&cluster, "cluster.yaml").unwrap(),
            cluster,
        )
    }

    #[track_caller]
    fn fails_with(wf: &Value, cluster: &Value, text: &str, expected: &str) {
        let errors = check(&workspace_root(), wf, cluster, text).expect_err("should fail");
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "no error with {expected:?} in {errors:?}"
        );
    }

    fn step_mut<'a>(wf: &'a mut Value, name: &str) -> &'a mut Value {
        wf["jobs"]["loadtest"]["steps"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
    }

    #[test]
    fn the_workflow_and_kind_config_pass() {
        let (wf, cluster, text) = files();
        let w = check(&workspace_root(), &wf, &cluster, &text).unwrap();
        assert!(w.summary.contains("node v1.33"), "{}", w.summary);
        assert!(!w.run_blocks.is_empty());
        assert!(
            w.run_blocks
                .iter()
                .all(|b| b.starts_with("#!/usr/bin/env bash\n"))
        );
    }

    #[test]
    fn each_broken_field_is_named() {
        let (wf, cluster, text) = files();
        let on = if wf["on"].is_null() { "true" } else { "on" };

        let mut w = wf.clone();
        w[on]["workflow_dispatch"]["inputs"]["scenario"]["default"] = json!("scenarios/nope.yaml");
        fails_with(&w, &cluster, &text, "the default scenario exists");

        let mut w = wf.clone();
        step_mut(&mut w, "Check out")["uses"] = json!("actions/checkout@main");
        fails_with(
            &w,
            &cluster,
            &text,
            "pinned by major version: actions/checkout@main",
        );

        let mut w = wf.clone();
        step_mut(&mut w, "Upload reports and logs")
            .as_object_mut()
            .unwrap()
            .remove("if");
        fails_with(&w, &cluster, &text, "upload-artifact must run if: always()");

        let mut w = wf.clone();
        step_mut(&mut w, "Build the images")["run"] = json!("ci/kind/build-imgs.sh");
        fails_with(
            &w,
            &cluster,
            &text,
            "runs ci/kind/build-imgs.sh, which does not exist",
        );

        let mut w = wf.clone();
        step_mut(&mut w, "Run smoke")["run"] = json!("cargo xtask kind ${{ inputs.scenario }}");
        fails_with(&w, &cluster, &text, "expressions go through env");
        fails_with(
            &w,
            &cluster,
            &text,
            "runs scenarios/smoke.yaml with cargo xtask kind",
        );

        let mut w = wf.clone();
        w["env"]["KUBECTL_VERSION"] = json!("v1.32.0");
        fails_with(&w, &cluster, &text, "matches the node's v1.33");

        let mut c = cluster.clone();
        c["nodes"][0]["image"] = json!("kindest/node:v1.33.7");
        fails_with(&wf, &c, &text, "pinned by version and digest");

        let mut c = cluster.clone();
        c["kubeadmConfigPatches"][0] = json!("kind: InitConfiguration\n");
        fails_with(&wf, &c, &text, "kind ClusterConfiguration");

        let other = text.replace("v0.31.0", "v0.30.0");
        fails_with(&wf, &cluster, &other, "cluster.yaml names the kind release");
    }

    #[test]
    fn paths_are_found_at_word_boundaries() {
        assert_eq!(
            referenced_paths(
                "a ci/kind/run.sh scenarios/x.yaml; myci/y OUT=out/ci/x ci/kind/run.sh"
            ),
            ["ci/kind/run.sh", "ci/x", "scenarios/x.yaml"]
        );
        assert_eq!(referenced_paths(".ci/run"), ["ci/run"]);
        assert!(pinned_by_major("actions/checkout@v4"));
        assert!(!pinned_by_major("actions/checkout@v4.1"));
        assert!(!pinned_by_major("checkout@v4"));
        assert_eq!(
            node_minor(&format!("kindest/node:v1.33.7@sha256:{}", "0".repeat(64))),
            Some("1.33")
        );
        assert_eq!(node_minor("kindest/node:v1.33.7@sha256:abc"), None);
    }
}
