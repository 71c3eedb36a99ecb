//! Every component of the embedded stack keeps time on tokio's clock, so that a run on a
//! paused clock (`harness run --virtual-time`) is the same run as in real time, only
//! faster. This test fails the build when the source of the harness, the provider, the
//! limiter, the composer (core's XR controllers, in process in composite runs), the two
//! mocks or the serve loop reads the standard library's clocks
//! (`std::time::Instant`, `SystemTime`) or the wall clock (`Timestamp::now`), except in the
//! few places listed in [`ALLOWED`], which only report wall time or place an epoch.

use std::path::{Path, PathBuf};

/// The crates whose `src/` is scanned, relative to the workspace root.
const CRATES: [&str; 7] = [
    "harness",
    "provider",
    "limiter",
    "composer",
    "mock-cloud",
    "mock-apiserver",
    "serve",
];

/// Files allowed to read a wall or standard-library clock, and why. None of them decides
/// anything by it.
const ALLOWED: [(&str, &str); 10] = [
    (
        "harness/src/cli/sweep.rs",
        "the wall time a sweep's points took, shown to a person and kept in sweep.json",
    ),
    (
        "harness/src/sweep/runner.rs",
        "the wall time a point's child process has run, against the sweep's --timeout for one point, as selfcheck bounds its runs",
    ),
    (
        "harness/src/cli/selfcheck.rs",
        "the wall time a selfcheck has taken and its time limit per scenario, shown to a person and bounding how long one virtual-time run may hold the command",
    ),
    (
        "harness/src/run/clock.rs",
        "the run's start as a wall time: for the report, and to place the journals of other processes",
    ),
    (
        "harness/src/run/progress.rs",
        "the wall time a phase has taken, shown to a person",
    ),
    (
        "provider/src/reconciler/cpu.rs",
        "the wall time spent polling a reconcile: its CPU time, for a metric",
    ),
    (
        "provider/src/reconciler/meta.rs",
        "the wall time at which the stamp clock starts, unless its host gives one",
    ),
    (
        "provider/src/aws/time.rs",
        "the provider's clock (tokio's) handed to the AWS SDK as the SystemTime its signer takes",
    ),
    (
        "mock-apiserver/src/clock.rs",
        "the server's epoch: the wall time its clock reads zero at, unless its host gives one",
    ),
    (
        "mock-cloud/src/cloud.rs",
        "the cloud's epoch, published to admin clients as a wall time",
    ),
];

/// Reading a clock other than tokio's, as it looks in source.
const FORBIDDEN: [&str; 6] = [
    "std::time::Instant",
    "SystemTime",
    "std::time::UNIX_EPOCH",
    "Timestamp::now",
    "Zoned::now",
    "time::OffsetDateTime",
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

/// The code of `text` without comments (a doc line may name a clock it warns against).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(n, line)| (n + 1, line.split("//").next().unwrap_or_default()))
}

/// Where `text` reads a forbidden clock: the forbidden names, and `Instant` imported from
/// `std::time` in a `use` group (which may span lines).
fn offences(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_std_time_group = false;
    for (n, code) in code_lines(text) {
        if let Some(f) = FORBIDDEN.iter().find(|f| code.contains(**f)) {
            found.push((n, format!("{f}: {}", code.trim())));
            continue;
        }
        if code.contains("std::time::{") {
            in_std_time_group = true;
        }
        if in_std_time_group {
            let names = code.rsplit("std::time::{").next().unwrap_or(code);
            if names
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == "Instant")
            {
                found.push((n, format!("std::time::Instant: {}", code.trim())));
            }
            if code.contains('}') {
                in_std_time_group = false;
            }
        }
    }
    found
}

#[test]
fn the_scan_finds_every_way_of_naming_a_forbidden_clock() {
    let text = "use std::time::{\n    Duration,\n    Instant,\n};\nlet t = SystemTime::now();\n\
                let w = jiff::Timestamp::now();\n// std::time::Instant in a comment is fine\n\
                use tokio::time::Instant;\nlet i = std::time::Instant::now();";
    let lines: Vec<usize> = offences(text).into_iter().map(|(n, _)| n).collect();
    assert_eq!(lines, [3, 5, 6, 9]);
}

#[test]
fn nothing_in_the_stack_reads_a_clock_other_than_tokios_outside_the_allow_list() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut offenders = Vec::new();
    let mut scanned = 0;
    let mut allowed_seen = Vec::new();
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root.join(krate).join("src"), &mut files);
        assert!(!files.is_empty(), "no sources found in {krate}/src");
        for file in files {
            scanned += 1;
            let relative = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&file).unwrap();
            let found = offences(&text);
            if ALLOWED.iter().any(|(allowed, _)| *allowed == relative) {
                if !found.is_empty() {
                    allowed_seen.push(relative);
                }
                continue;
            }
            for (n, what) in found {
                offenders.push(format!("{relative}:{n}: {what}"));
            }
        }
    }
    assert!(scanned > 100, "scanned only {scanned} files");
    assert!(
        offenders.is_empty(),
        "read time through tokio::time (the run's RunClock in the harness); a place that only \
         reports wall time goes in ALLOWED with its reason:\n{}",
        offenders.join("\n")
    );
    // An allowance that no longer reads a clock is stale: drop it.
    let stale: Vec<&str> = ALLOWED
        .iter()
        .map(|(file, _)| *file)
        .filter(|file| !allowed_seen.iter().any(|seen| seen == file))
        .collect();
    assert!(stale.is_empty(), "stale allowances: {stale:?}");
}
