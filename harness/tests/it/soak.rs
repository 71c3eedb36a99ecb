//! A short soak: `soak.yaml` shrunk to 12 hours of virtual time, run by the
//! harness binary in its own process so that the resident set it samples is the run's alone
//! (the tests of this binary run in parallel in one process).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn a_short_soak_samples_the_live_heap_and_the_component_counts_and_judges_their_growth() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("short-soak");
    let _ = std::fs::remove_dir_all(&dir);
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/soak.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("run")
        .arg(&scenario)
        .args(["--set", "phases.soak.duration=12h"])
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("the harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every assertion holds, the resident set's growth included.
    assert!(
        out.status.success(),
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
    assert!(
        growth["observed"].as_f64().is_some_and(f64::is_finite),
        "{growth}"
    );
    let note = growth["note"].as_str().unwrap();
    // The live heap outside the journals is judged (the binary counts its heap); the
    // resident set is shown beside it.
    assert!(note.starts_with("heap_live_bytes "), "{note}");
    assert!(
        note.contains("not asserted, it holds the journals and the pages the allocator keeps: process_rss_bytes"),
        "{note}"
    );
    // The steady state holds its objects: neither store grows.
    for component in [
        "cloud_objects 30 → 30 (+0.00 %",
        "api_managed_objects 30 → 30 (+0.00 %",
    ] {
        assert!(note.contains(component), "{component} in {note}");
    }
    for v in result["verdicts"].as_array().unwrap() {
        assert_eq!(v["pass"], true, "{v}");
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
