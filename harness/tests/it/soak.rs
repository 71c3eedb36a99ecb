//! A short soak: `soak.yaml` shrunk to 30 resources and 12 hours of virtual time, run by the
//! harness binary in its own process so that the resident set it samples is the run's alone
//! (the tests of this binary run in parallel in one process).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_short_soak_passes_memory_growth_with_the_resident_set_and_the_component_counts_sampled() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("short-soak");
    let _ = std::fs::remove_dir_all(&dir);
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/soak.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(&scenario)
        .args(["--set", "resources.bucket.count=10"])
        .args(["--set", "resources.database.count=10"])
        .args(["--set", "resources.record.count=10"])
        .args(["--set", "phases.soak.duration=12h"])
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("the harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("result.json")).expect("a result"))
            .expect("json");
    let growth = result["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "memoryGrowth")
        .expect("a memoryGrowth verdict");
    assert_eq!(growth["pass"], true, "{growth}");
    let note = growth["note"].as_str().unwrap();
    for component in ["process_rss_bytes", "cloud_objects", "api_managed_objects"] {
        assert!(note.contains(component), "{component} in {note}");
    }
    assert!(
        note.contains("not asserted"),
        "the journals are shown: {note}"
    );
    // Sampled through the 12 hours, and thinned to at most 1,024 samples.
    let samples = result["memory"].as_array().unwrap();
    assert!((100..=1024).contains(&samples.len()), "{}", samples.len());
    assert!(stdout.contains("process_rss_bytes:"), "{stdout}");
}
