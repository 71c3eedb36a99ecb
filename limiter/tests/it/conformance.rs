//! Every vector the real Go libraries printed must replay byte for byte.

use std::path::{Path, PathBuf};

fn vectors() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the vectors folder is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    scripts.sort();
    scripts
}

#[test]
fn all_thirty_three_go_vectors_are_present() {
    assert_eq!(vectors().len(), 33);
}

#[test]
fn every_go_vector_replays_byte_for_byte() {
    let mut failures = Vec::new();
    for script in vectors() {
        let expected = std::fs::read_to_string(script.with_extension("out"))
            .expect("every script has its transcript");
        let text = std::fs::read_to_string(&script).expect("the script is readable");
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        match limiter::replay::run(&text) {
            Ok(actual) if actual == expected => {}
            Ok(actual) => {
                let first = actual
                    .lines()
                    .zip(expected.lines())
                    .position(|(a, e)| a != e)
                    .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
                failures.push(format!(
                    "{name}: first difference at transcript line {}:\n  ours: {:?}\n  Go:   {:?}",
                    first + 1,
                    actual.lines().nth(first),
                    expected.lines().nth(first)
                ));
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_script_error_names_the_line_and_keeps_the_partial_transcript() {
    let err = limiter::replay::run("limiter L 1 1\nreserve L\nfrobnicate L\n").unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.message.contains("frobnicate"), "{}", err.message);
    assert!(err.partial.contains("reserve L"));
}

#[test]
fn a_get_that_would_wait_forever_stops_at_its_limit() {
    let err = limiter::replay::run("queue Q fifo\ngetlimit 1s\nget Q\n").unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.partial.contains("[t=0s] get Q"));
}
