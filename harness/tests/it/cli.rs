//! The binary: exit codes and error output.

use std::path::PathBuf;
use std::process::Command;

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn validate_exits_zero_on_a_good_scenario() {
    let out = harness()
        .args(["validate", &scenario("smoke.yaml")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok: scenario smoke with 100 resources"));
}

#[test]
fn bad_input_exits_two_with_cause_and_hint() {
    let out = harness()
        .args(["validate", "no/such.yaml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: cannot read scenario no/such.yaml\n  caused by: "),
        "{err}"
    );
    assert!(err.contains("hint: check the path"), "{err}");
}

#[test]
fn predict_prints_formulas_and_schema_prints_json() {
    let out = harness()
        .args(["predict", &scenario("restart-burst.yaml")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("phase restart") && text.contains("physical drain limit D_phys"),
        "{text}"
    );
    let out = harness().arg("schema").output().expect("runs");
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(schema["title"], "harness scenario");
    assert!(schema["properties"]["phases"].is_object());
}
