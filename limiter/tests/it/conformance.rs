//! Every vector must replay byte for byte: 01-33 are transcripts the real Go libraries printed;
//! 34 and up were derived from the Go sources and the spec, line by line (each says how in its
//! header).

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

/// The number a vector's file name starts with.
fn number(script: &Path) -> u32 {
    let name = script.file_name().unwrap().to_string_lossy();
    name.split('-')
        .next()
        .unwrap()
        .parse()
        .expect("vectors are numbered")
}

#[test]
fn all_thirty_three_go_vectors_and_the_derived_ones_are_present() {
    let numbers: Vec<u32> = vectors().iter().map(|p| number(p)).collect();
    let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
    assert_eq!(
        numbers, expected,
        "vectors are numbered 01, 02, ... without gaps"
    );
    assert!(
        numbers.len() >= 48,
        "33 Go vectors and at least 15 derived ones"
    );
}

#[test]
fn every_vector_replays_byte_for_byte() {
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
    assert_eq!((err.line, err.column), (3, 1));
    assert!(
        err.error.to_string().contains("frobnicate"),
        "{}",
        err.error
    );
    assert!(err.partial.contains("reserve L"));
}

#[test]
fn a_malformed_word_names_its_column_and_what_was_expected() {
    let err = limiter::replay::run("rl F fastslow 5ms 10s many\n").unwrap_err();
    assert_eq!((err.line, err.column), (1, 23));
    assert_eq!(
        err.error.to_string(),
        "expected an integer count of fast attempts, got \"many\""
    );
    let err = limiter::replay::run("queue D delaying\naddafter D a 5 seconds\n").unwrap_err();
    assert_eq!((err.line, err.column), (2, 14));
    assert!(
        err.error.to_string().starts_with("expected a Go duration"),
        "{}",
        err.error
    );
    let err = limiter::replay::run("limiter L 1\n").unwrap_err();
    assert_eq!((err.line, err.column), (1, 12));
    assert_eq!(err.error.to_string(), "missing a burst");
}

#[test]
fn a_float_out_of_go_range_is_malformed_but_spelled_infinity_is_not() {
    let err = limiter::replay::run("limiter L 1e400 1\n").unwrap_err();
    assert_eq!((err.line, err.column), (1, 11));
    assert!(
        err.error.to_string().starts_with("expected a limit"),
        "{}",
        err.error
    );
    let out = limiter::replay::run("limiter L Inf 1\nlimit L\nlimiter M inf 1\nlimit M\n").unwrap();
    assert!(out.contains("  => +Inf\n"), "{out}");
    assert!(out.ends_with("  => 1.7976931348623157e+308\n"), "{out}");
}

#[test]
fn priorities_are_go_ints() {
    let out =
        limiter::replay::run("queue P pq\naddopts P a priority=-5000000000\nget P\n").unwrap();
    assert!(
        out.ends_with("  => item=\"a\" priority=-5000000000 shutdown=false\n"),
        "{out}"
    );
}

#[test]
fn negative_numbers_are_arguments_not_errors() {
    let out = limiter::replay::run("restconfig -2\nrl F fastslow 5ms 10s -1\nwhen F a\n").unwrap();
    assert!(out.contains("QPS=-10 Burst=-20"), "{out}");
    assert!(out.ends_with("  => 10s [10000000000ns]\n"), "{out}");
}

#[test]
fn a_get_that_would_wait_forever_stops_at_its_limit() {
    let err = limiter::replay::run("queue Q fifo\ngetlimit 1s\nget Q\n").unwrap_err();
    assert_eq!(err.line, 3);
    assert!(err.partial.contains("[t=0s] get Q"));
}

/// Found by the `replay` fuzz target on the runner before its words were typed: `addopts`
/// on a priority queue with no item sliced past the end of the command and panicked.
#[test]
fn addopts_without_an_item_is_an_error_not_a_panic() {
    let err = limiter::replay::run("rl E exp 100ms 10s\nqueue P pq E\naddopts P\n").unwrap_err();
    assert_eq!((err.line, err.column), (3, 10));
    assert_eq!(err.error.to_string(), "missing an item");
}

/// The same slicing as `addopts`, found then by reading the runner: `outcome` with no item
/// panicked.
#[test]
fn outcome_without_an_item_is_an_error_not_a_panic() {
    let err = limiter::replay::run("controller C\noutcome C\n").unwrap_err();
    assert_eq!((err.line, err.column), (2, 10));
    assert_eq!(err.error.to_string(), "missing an item");
}

#[test]
fn the_circuit_breaker_is_proven_by_at_least_twelve_vectors() {
    let breaker = vectors()
        .iter()
        .filter(|p| p.to_string_lossy().contains("-xp-breaker-"))
        .count();
    assert!(breaker >= 12, "{breaker} breaker vectors");
}

#[test]
fn breaker_commands_name_what_is_wrong_and_where() {
    let err = limiter::replay::run("bstate B a\n").unwrap_err();
    assert_eq!((err.line, err.column), (1, 8));
    assert_eq!(err.error.to_string(), "no breaker named \"B\"");
    let err = limiter::replay::run("breaker B mode=lazy\n").unwrap_err();
    assert_eq!((err.line, err.column), (1, 16));
    assert_eq!(
        err.error.to_string(),
        "expected a mode: released or eager, got \"lazy\""
    );
    let err = limiter::replay::run("breaker B\nbevent B modify Bucket/b a\n").unwrap_err();
    assert_eq!((err.line, err.column), (2, 10));
    let err = limiter::replay::run("breaker B\nbself B update XR/x y\n").unwrap_err();
    assert_eq!((err.line, err.column), (2, 21));
    let err = limiter::replay::run("breaker B\nbstate B a at=5s\n").unwrap_err();
    assert_eq!((err.line, err.column), (2, 15));
    assert_eq!(
        err.error.to_string(),
        "expected no at= on a breaker command, got \"5s\""
    );
    let err = limiter::replay::run("breaker B cooldown=5\n").unwrap_err();
    assert!(
        err.error.to_string().starts_with("expected a Go duration"),
        "{}",
        err.error
    );
}
