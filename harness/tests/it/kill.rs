//! The kill phase and the audit's `stuck` and `lost` checks: a shrunk `chaos.yaml` on the
//! embedded stack in virtual time, and the kill phase's validation errors.

use std::path::PathBuf;

use harness::result::RunResult;
use harness::run::{self, Progress, run_embedded};
use harness::scenario::{self, Scenario, Set, parse};

fn chaos(sets: &[&str]) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/chaos.yaml");
    let sets: Vec<Set> = sets.iter().map(|s| s.parse().expect("a set")).collect();
    scenario::load_with(&path, &sets).expect("chaos.yaml is valid")
}

fn run_on(s: &Scenario) -> RunResult {
    let runtime = run::time::runtime(s.time).expect("a runtime");
    runtime
        .block_on(run_embedded(s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts")
        .result
}

/// 60 resources instead of 1,000; the ten kills stay.
const SMALL: [&str; 3] = [
    "resources.bucket.count=24",
    "resources.database.count=12",
    "resources.record.count=24",
];

#[test]
fn a_shrunk_chaos_run_kills_the_provider_ten_times_and_leaves_nothing_orphaned_duplicated_stuck_or_lost()
 {
    let s = chaos(&SMALL);
    let r = run_on(&s);
    assert!(r.passed(), "{}", harness::report::assertion_table(&r));
    assert_eq!(r.kills.len(), 10, "{:?}", r.kills);
    assert_eq!(r.run.provider_starts, 11, "one start, then one per kill");
    // Every kill fell inside the work of the phase it names.
    for k in &r.kills {
        let p = r
            .phases
            .iter()
            .find(|p| p.name == k.during)
            .expect("its phase ran");
        let at = k.at_us as f64 / 1e6;
        assert!(p.start_s <= at && at <= p.end_s, "{k:?} outside {p:?}");
    }
    for check in ["orphans", "duplicates", "stuck", "lost"] {
        let v = r.verdicts.iter().find(|v| v.check == check).expect(check);
        assert_eq!(v.observed, 0.0, "{check}: {:?}", v.note);
    }
    // Nothing is left: every resource and its cloud object are gone.
    assert!(r.audit.orphans.is_empty() && r.audit.missing.is_empty());
    // Each phase that met its `until` was audited; the kill phases were not.
    let audited: Vec<&str> = r.phase_audits.iter().map(|a| a.phase.as_str()).collect();
    assert_eq!(
        audited,
        [
            "create",
            "update-bucket",
            "update-database",
            "update-record",
            "delete"
        ]
    );
}

#[test]
fn the_kills_fall_at_the_same_moments_for_a_seed_and_elsewhere_for_another() {
    let s = chaos(&SMALL);
    let at = |s: &Scenario| -> Vec<u64> {
        s.phases
            .iter()
            .enumerate()
            .flat_map(|(i, _)| run::kill::schedule(s, i))
            .map(|(_, d)| d.as_micros() as u64)
            .collect()
    };
    assert_eq!(at(&s), at(&chaos(&SMALL)));
    assert_ne!(at(&s), at(&chaos(&[&SMALL[..], &["seed=19"]].concat())));
    assert_eq!(at(&s).len(), 10);
}

#[test]
fn a_stuck_resource_that_no_kill_explains_fails_the_stuck_check() {
    // The same shrunk run, but `stuck` allows nothing: a create the kills left with its
    // pending stamp and no outcome is then a failure the report names.
    let mut s = chaos(&SMALL);
    for a in &mut s.assertions {
        if let harness::scenario::Check::Stuck {
            allow_interrupted, ..
        } = &mut a.check
        {
            *allow_interrupted = false;
        }
    }
    let r = run_on(&s);
    let stuck = r.verdicts.iter().find(|v| v.check == "stuck").unwrap();
    let interrupted: usize = r.kills.iter().map(|k| k.interrupted_creates.len()).sum();
    if interrupted == 0 {
        assert!(
            stuck.pass,
            "no create was interrupted: nothing can be stuck"
        );
    } else {
        let note = stuck.note.as_deref().unwrap_or_default();
        assert!(
            note.contains("crossplane-runtime v2.4 leaves each of them stuck"),
            "{note}"
        );
        let text = harness::report::kill_lines(&r).join("\n");
        assert!(text.contains("would leave these"), "{text}");
    }
}

const HEAD: &str = "apiVersion: harness/v1\nname: t\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: c, action: create}\n";

fn err(body: &str) -> String {
    parse(&format!("{HEAD}{body}"), "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

#[test]
fn a_kill_phase_names_an_earlier_phase_that_does_work() {
    assert_eq!(
        err("  - {name: k, action: kill}\n"),
        "t.yaml:7:23: a kill phase needs `during`: the phase whose work it interrupts"
    );
    assert_eq!(
        err("  - {name: k, action: kill, during: nope}\n"),
        "t.yaml:7:37: unknown phase \"nope\", expected one of c, k"
    );
    assert_eq!(
        err("  - {name: k, action: kill, during: k}\n"),
        "t.yaml:7:37: phase \"k\" is not listed before this kill phase, expected an earlier phase"
    );
    assert_eq!(
        err("  - {name: k, action: kill, during: c, count: 0, until: allReady}\n"),
        "t.yaml:7:47: count is 0, expected at least one kill\n\
t.yaml:7:57: a kill phase has no `until`: the phase it interrupts waits for its own after the last kill"
    );
    assert_eq!(
        err("  - {name: h, action: hold, duration: 1s, during: c}\n"),
        "t.yaml:7:51: `during` does not apply to a hold phase, expected only duration"
    );
}

#[test]
fn budget_checks_cannot_cover_a_phase_with_kills() {
    let e = err(
        "  - {name: k, action: kill, during: c}\nassertions:\n  - {check: cloudCalls}\n  - {check: stuck, phase: k}\n",
    );
    assert!(
        e.starts_with("t.yaml:9:13: a cloudCalls check cannot cover a phase with kills"),
        "{e}"
    );
    assert!(
        e.contains(
            "t.yaml:10:27: phase \"k\" is a kill phase, expected the phase its kills interrupt"
        ),
        "{e}"
    );
}
