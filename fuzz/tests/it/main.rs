//! Every seed taken from the tests and every checked-in corpus file (the inputs libFuzzer
//! kept, and every crash it found, named `crash-*`), run through its target; and what the
//! generators of the structured targets make of random bytes (`aws`).

mod apiserver;
mod aws;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use fuzz::{TARGETS, Target};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the fuzz crate has a workspace above it")
}

/// Runs every input of `target`; returns how many ran and the ones that failed.
fn replay(target: &Target) -> (usize, Vec<String>) {
    let mut files = target.seed_files(root()).expect("the seeds are readable");
    files.extend(target.corpus_files(root()).expect("the corpus is readable"));
    let mut failed = Vec::new();
    for file in &files {
        let data = std::fs::read(file).expect("a corpus file is readable");
        if catch_unwind(AssertUnwindSafe(|| (target.check)(&data))).is_err() {
            failed.push(
                file.strip_prefix(root())
                    .unwrap_or(file)
                    .display()
                    .to_string(),
            );
        }
    }
    (files.len(), failed)
}

fn replays(name: &str) {
    let target = Target::named(name).expect("the target exists");
    let (ran, failed) = replay(&target);
    assert!(ran > 0, "{name} has no seeds and no corpus");
    assert!(
        failed.is_empty(),
        "{} of {ran} inputs fail {name} (replay one with `cargo run -p fuzz --bin corpus -- replay {name} FILE`):\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_target_is_replayed_here() {
    let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "scenario",
            "cloud_config",
            "cloud_requests",
            "aws_requests",
            "apiserver_requests",
            "replay",
            "composer_inputs"
        ]
    );
}

#[test]
fn the_scenario_corpus_passes() {
    replays("scenario");
}

#[test]
fn the_cloud_config_corpus_passes() {
    replays("cloud_config");
}

#[test]
fn the_cloud_requests_corpus_passes() {
    replays("cloud_requests");
}

#[test]
fn the_aws_requests_corpus_passes() {
    replays("aws_requests");
}

#[test]
fn the_apiserver_requests_corpus_passes() {
    replays("apiserver_requests");
}

#[test]
fn the_replay_corpus_passes() {
    replays("replay");
}

#[test]
fn the_composer_inputs_corpus_passes() {
    replays("composer_inputs");
}
