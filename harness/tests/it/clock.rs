//! The run layer keeps time on one clock: nothing in `harness/src/run/` reads the standard
//! library's clocks or the wall clock for a decision. Wall time is read in `clock.rs` only
//! (the run's start, for the report and to place wall-dated epochs); `progress.rs` shows
//! elapsed seconds to a person.

use std::path::{Path, PathBuf};

/// Files allowed to read a wall or standard-library clock, and why.
const ALLOWED: [(&str, &str); 2] = [
    (
        "clock.rs",
        "the run's one wall-clock read, for reports and epochs",
    ),
    ("progress.rs", "elapsed seconds shown to a person"),
];

/// What reading a clock other than tokio's looks like in source.
const FORBIDDEN: [&str; 5] = [
    "std::time::Instant",
    "SystemTime",
    "Timestamp::now",
    "Instant, SystemTime",
    "time::{Duration, Instant",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn nothing_in_the_run_layer_reads_a_clock_other_than_tokios() {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run");
    let mut files = Vec::new();
    rust_files(&run, &mut files);
    assert!(files.len() > 10, "found {} files", files.len());
    let mut offenders = Vec::new();
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        if ALLOWED.iter().any(|(allowed, _)| *allowed == name) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if FORBIDDEN.iter().any(|f| line.contains(f)) {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "read time through run::clock::RunClock or tokio::time:\n{}",
        offenders.join("\n")
    );
}
