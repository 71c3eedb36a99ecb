//! The `scenario` target: the scenario file, through both stages (raw YAML with spans,
//! then validation into the model) and on into what the harness derives from a valid
//! scenario: the budget prediction, the mock cloud's config, resource names, specs,
//! annotations and poll intervals.
//!
//! Input: scenario text. Leading lines `#set PATH=VALUE` (YAML comments, so the text stays
//! a scenario) are applied as `--set`s.
//!
//! Asserts: no panic; an invalid scenario has at least one problem, each with a position
//! (line and column from 1) and a message, and its listing places every problem at
//! `FILE:LINE:COLUMN` or at a `--set`; a valid one predicts no NaN and derives a cloud
//! config that mock-cloud accepts.

use harness::scenario::{ScenarioError, Set, parse_with};

/// The most resources a valid scenario may have for its names, specs and poll intervals
/// to be derived (the derivations walk every resource).
pub const MAX_DERIVED: u64 = 100_000;

/// Runs one input.
///
/// # Panics
/// When the scenario parser or the harness breaks a promise (see the module's docs).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sets: Vec<Set> = text
        .lines()
        .map_while(|l| l.strip_prefix("#set "))
        .filter_map(|s| s.parse().ok())
        .collect();
    match parse_with(text, "fuzz.yaml", &sets) {
        Err(ScenarioError::Read { .. }) => panic!("parse_with reads no file"),
        Err(err @ ScenarioError::Invalid { .. }) => {
            let problems = err.problems();
            assert!(
                !problems.is_empty(),
                "an invalid scenario without a problem"
            );
            for p in problems {
                assert!(p.pos.line >= 1 && p.pos.column >= 1, "no position: {p:?}");
                assert!(!p.message.trim().is_empty(), "no message: {p:?}");
            }
            let listing = err.to_string();
            for line in listing.lines().filter(|l| !l.starts_with(' ')) {
                assert!(
                    line.starts_with("fuzz.yaml:") || line.starts_with("--set "),
                    "a problem not placed: {line:?}"
                );
            }
        }
        Ok(s) => {
            if s.total_resources() > MAX_DERIVED {
                return;
            }
            let plan = harness::predict::plan(&s);
            for p in plan.all() {
                assert!(!p.value.is_nan(), "a NaN prediction: {p:?}");
            }
            if let Ok(config) = harness::run::cloud::config(&s) {
                config
                    .validate()
                    .expect("mock-cloud accepts the config the harness derives");
            }
            for g in &s.groups {
                for i in [0, g.count.saturating_sub(1)] {
                    let _ = g.resource_name(i, &s.name);
                    let _ = g.resource_spec(i, &s.name);
                    let _ = g.resource_annotations(i, &s.name);
                }
                let _ = g.poll_intervals(&s.settings, &s.name);
            }
        }
    }
}
