//! `cargo xtask test CRATE… [-- ARGS]`: the fast loop. It builds the workspace's test
//! targets exactly as the check does (same features, same compiler settings), so a check
//! already run leaves nothing to compile but what changed since, then runs only the named
//! crates' test executables (unit, integration and doc-less), passing ARGS (a test name
//! filter, `--nocapture`…) to each.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::step::{self, Error, Result, Steps, TEST_FEATURES};

/// `cargo xtask test`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crates whose tests run (package names: limiter, harness, mock-cloud, …).
    #[arg(required = true, value_name = "CRATE")]
    pub crates: Vec<String>,
    /// Arguments for each test executable, after `--`: a name filter, `--nocapture`, …
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// Builds, then runs the crates' test executables in turn; every one runs even when an
/// earlier one failed, and the failures are named at the end.
pub fn run(root: &Path, a: &Args) -> Result {
    let steps = Steps::start();
    let env = step::check_env(root)?;
    steps.step(&format!(
        "cargo test --workspace --all-targets --features {TEST_FEATURES} --no-run (the check's build)"
    ));
    let out = step::command(
        root,
        "cargo",
        &[
            &step::TEST_BUILD[..],
            &["--no-run", "--message-format=json-render-diagnostics"],
        ]
        .concat(),
        &env,
    )
    .stderr(Stdio::inherit())
    .output()
    .map_err(|e| Error::Usage(format!("cannot start cargo: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!("the build failed ({})", out.status)));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let executables = test_executables(&stdout, &a.crates);
    for c in &a.crates {
        if !executables.iter().any(|(p, _, _)| p == c) {
            return Err(Error::Usage(format!(
                "no workspace crate named {c} has tests (a package name, as in its Cargo.toml)"
            )));
        }
    }
    let mut failed = Vec::new();
    for (package, target, exe) in &executables {
        steps.step(&format!("{package}: {target}"));
        let dir = manifest_dir(root, package);
        // A benchmark runs once in test mode, as `cargo test` runs it: the arguments are
        // libtest's (filters, --nocapture), which criterion does not take.
        let args: Vec<&str> = if target.starts_with("bench ") {
            Vec::new()
        } else {
            a.args.iter().map(String::as_str).collect()
        };
        if step::run(step::command(&dir, exe, &args, &env), target).is_err() {
            failed.push(format!("{package} {target}"));
        }
    }
    if failed.is_empty() {
        steps.step(&format!("passed in {}", steps.elapsed()));
        Ok(())
    } else {
        Err(Error::Failed(format!("failed: {}", failed.join(", "))))
    }
}

/// The crate's directory: where cargo runs its tests (they read files relative to it).
fn manifest_dir(root: &Path, package: &str) -> PathBuf {
    match package {
        "mock-cloud-sdk-tests" => root.join("mock-cloud/sdk-tests"),
        "mock-cloud-loadgen" => root.join("mock-cloud/loadgen"),
        _ => root.join(package),
    }
}

/// `(package, target, executable)` of every test executable of `crates` in cargo's JSON
/// messages, in cargo's order.
fn test_executables(json: &str, crates: &[String]) -> Vec<(String, String, PathBuf)> {
    let mut out = Vec::new();
    for line in json.lines() {
        let Ok(m) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(exe), true) = (m["executable"].as_str(), m["profile"]["test"] == true) else {
            continue;
        };
        let Some(package) = m["package_id"].as_str().and_then(package_name) else {
            continue;
        };
        if !crates.contains(&package) {
            continue;
        }
        let kind = m["target"]["kind"][0].as_str().unwrap_or("test");
        let name = m["target"]["name"].as_str().unwrap_or_default();
        let target = if kind == "lib" {
            "lib".to_owned()
        } else {
            format!("{kind} {name}")
        };
        out.push((package, target, PathBuf::from(exe)));
    }
    out
}

/// The package's name in a package id: `path+file:///…/harness#0.1.0` (a member whose
/// directory is its name) or `path+file:///…/sdk-tests#mock-cloud-sdk-tests@0.1.0`.
fn package_name(id: &str) -> Option<String> {
    let (path, tail) = id.rsplit_once('#')?;
    Some(match tail.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => path.rsplit('/').next()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"reason":"compiler-artifact","package_id":"path+file:///src/ws/harness#0.1.0","manifest_path":"/src/ws/harness/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"it","src_path":"/src/ws/harness/tests/it/main.rs","edition":"2024","doctest":false,"test":true},"profile":{"opt_level":"0","debuginfo":1,"debug_assertions":true,"overflow_checks":true,"test":true},"features":[],"filenames":["/t/debug/deps/it-1"],"executable":"/t/debug/deps/it-1","fresh":true}"#;

    #[test]
    fn a_crates_test_executables_are_found_in_cargos_messages() {
        let lib = LINE
            .replace("\"kind\":[\"test\"]", "\"kind\":[\"lib\"]")
            .replace("\"name\":\"it\"", "\"name\":\"harness\"")
            .replace("it-1", "harness-2");
        let other = LINE
            .replace(
                "ws/harness#0.1.0",
                "ws/mock-cloud/sdk-tests#mock-cloud-sdk-tests@0.1.0",
            )
            .replace("it-1", "it-3");
        let build = r#"{"reason":"build-finished","success":true}"#;
        let json = [LINE, &lib, &other, build].join("\n");
        let got = test_executables(&json, &["harness".to_owned()]);
        assert_eq!(
            got,
            vec![
                (
                    "harness".into(),
                    "test it".into(),
                    PathBuf::from("/t/debug/deps/it-1")
                ),
                (
                    "harness".into(),
                    "lib".into(),
                    PathBuf::from("/t/debug/deps/harness-2")
                ),
            ]
        );
        let got = test_executables(&json, &["mock-cloud-sdk-tests".to_owned()]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].2, PathBuf::from("/t/debug/deps/it-3"));
    }

    #[test]
    fn a_binary_built_for_the_tests_to_run_is_not_a_test() {
        // The harness binary the integration tests start: an executable, not a test build.
        let bin = LINE
            .replace("\"kind\":[\"test\"]", "\"kind\":[\"bin\"]")
            .replace("\"test\":true}", "\"test\":false}");
        assert!(test_executables(&bin, &["harness".to_owned()]).is_empty());
    }
}
