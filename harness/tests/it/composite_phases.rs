//! Core's own phases on the embedded stack in virtual time, scaled-down copies of the
//! shipped scenarios: a Composition edit's fan-out (xr-revision-fanout, #7114) and a slow
//! function passing core's 2-minute deadline (xr-slow-function, #6240), each measured per
//! phase against the plan's predictions (docs/budget.md §12.8); and both phases' problems
//! as errors at file:line:column before anything starts.

use harness::run::{Progress, run_embedded};
use harness::scenario::parse;

fn shipped(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../scenarios/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the shipped scenario")
}

fn run(text: &str, file: &str) -> (harness::scenario::Scenario, harness::result::RunResult) {
    let s = parse(text, file).expect("valid");
    let runtime = harness::run::time::runtime(s.time).expect("a runtime");
    let out = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts");
    (s, out.result)
}

#[test]
fn a_composition_edit_moves_every_xr_and_updates_every_composed_resource() {
    let text = shipped("xr-revision-fanout").replace("count: 1000", "count: 20");
    let (s, r) = run(&text, "xr-revision-fanout.yaml");
    assert!(!r.partial, "{:?}", r.stopped);
    for v in &r.verdicts {
        assert!(v.pass, "{v:?}");
    }
    let core = r.core.expect("core was measured");
    let edit = core.phase("edit").expect("the edit phase's share");
    assert_eq!(edit.action, "compositionUpdate");
    assert!(edit.revision.is_some(), "{edit:?}");
    // Every XR moved (#7114): each of the 20 XRs' 2 Buckets got the new storage class,
    // and the provider carried each to the cloud with one Update.
    assert_eq!(edit.composed_updates, Some(40), "{edit:?}");
    assert_eq!(edit.composed_created, Some(0), "{edit:?}");
    assert_eq!(edit.cloud_updates, Some(40), "{edit:?}");
    // What the plan says of the edit, per XR group and for the phase's checks.
    let plan = harness::predict::plan(&s);
    let value = |id: &str| plan.find(id).unwrap_or_else(|| panic!("{id}")).value;
    assert_eq!(value("core/phase/edit/pairs/edit/composed-updates"), 40.0);
    assert_eq!(value("core/phase/edit/pairs/edit/cloud-updates"), 40.0);
    // R_rev = 2 + 3 + 2·(1 + 1) = 9 reconciles per XR, each at most 2·2 + 4 requests.
    assert_eq!(value("core/phase/edit/pairs/edit/reconciles"), 9.0);
    assert_eq!(
        value("core/phase/edit/pairs/edit/requests"),
        20.0 * 9.0 * 8.0
    );
    assert_eq!(
        value("core/phase/edit/pairs/edit/function-calls/resources"),
        20.0 * 9.0
    );
    assert!(edit.total_function_calls() <= 20 * 9, "{edit:?}");
    assert!(edit.requests <= 20 * 9 * 8, "{edit:?}");
    // τ_rev′ = 9 + 2·2·2 = 17 tokens: no circuit opens.
    assert_eq!(value("core/phase/edit/pairs/edit/tokens"), 17.0);
    assert_eq!(edit.breaker_opens, 0);
    // The function's own count agrees with core's: nothing was faulted.
    assert_eq!(
        edit.function_reached.get("resources"),
        edit.function_calls.get("resources")
    );
}

#[test]
fn a_slow_function_makes_every_reconcile_pass_the_deadline_until_it_recovers() {
    let (s, r) = run(&shipped("xr-slow-function"), "xr-slow-function.yaml");
    assert!(!r.partial, "{:?}", r.stopped);
    for v in &r.verdicts {
        assert!(v.pass, "{v:?}");
    }
    let plan = harness::predict::plan(&s);
    let value = |id: &str| plan.find(id).unwrap_or_else(|| panic!("{id}")).value;
    // 90 s + 62 applies × 0.5 s ≥ 120 s: the deadline ends every reconcile.
    assert_eq!(
        value("core/phase/slow/fleet/fault/resources/deadline-hit"),
        1.0
    );
    assert_eq!(
        value("core/phase/slow/fleet/fault/resources/reconcile-time"),
        120.0
    );
    // One XR, one worker busy: at most ⌊600/120⌋ + 1 = 6 reconciles, one call each.
    assert_eq!(
        value("core/phase/slow/fleet/fault/resources/deadline-reconciles"),
        6.0
    );
    let core = r.core.expect("core was measured");
    let slow = core.phase("slow").expect("the fault phase's share");
    // Every reconcile that ended in the fault failed, each after the whole deadline.
    assert!(slow.reconciles >= 4, "{slow:?}");
    assert_eq!(slow.reconcile_errors, slow.reconciles, "{slow:?}");
    assert!(slow.reconciles <= 6, "{slow:?}");
    let calls = slow.total_function_calls();
    assert!(calls <= 6, "{slow:?}");
    // The deadline ends the applies, not the call: no call ended in DeadlineExceeded.
    assert_eq!(slow.deadline_exceeded, 0, "{slow:?}");
    // Core counts a call when it ends, the function when it arrives: the call in flight
    // at the phase's end is the function's, not yet core's.
    let reached = slow.function_reached["resources"];
    assert!(reached == calls || reached == calls + 1, "{slow:?}");
    // After the fault, reconciles succeed again and the XR is Ready and not stale.
    let after = core.phase("recovered").expect("the hold after");
    assert!(after.reconciles > after.reconcile_errors, "{after:?}");
    // Core's latency histogram over each phase: the calls answered in the fault took its
    // 90 s (past core's last bound, so p50 reads 10 s); after it the function answers within
    // the first bucket (5 ms), but for the call in flight when the fault ended, which
    // answers after its 90 s.
    let l = &slow.function_latency;
    assert_eq!(
        l.responses.get("resources").copied(),
        Some(calls),
        "{slow:?}"
    );
    assert_eq!(l.quantile_s("resources", 0.5), Some(10.0), "{slow:?}");
    assert!(l.mean_s("resources").is_some_and(|s| s >= 60.0), "{slow:?}");
    let l = &after.function_latency;
    assert!(
        l.quantile_s("resources", 0.5).is_some_and(|s| s <= 0.005),
        "{after:?}"
    );
    assert!(
        l.buckets["resources"][0] + 1 >= l.responses["resources"],
        "{after:?}"
    );
    assert!(core.stale.is_empty());
    assert!(
        core.xrs.iter().all(|x| x.ready_s.is_some()),
        "{:?}",
        core.xrs
    );
}

fn err(text: &str) -> String {
    parse(text, "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

/// xr-revision-fanout with its edit phase replaced by `phase` (one flow-style line).
fn with_phase(phase: &str) -> String {
    let text = shipped("xr-revision-fanout");
    let start = text.find("  - name: edit").expect("the edit phase");
    format!(
        "{}  - {phase}\nassertions:\n  - {{check: breakerOpens}}\n",
        &text[..start]
    )
}

#[test]
fn a_composition_update_is_checked_against_the_composition_it_edits() {
    let line = |text: &str| {
        text.lines()
            .position(|l| l.contains("name: edit"))
            .expect("the phase")
            + 1
    };
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: pairs, patch: [{op: replace, path: /spec/pipeline/0/input/resources/0/count, value: 3}]}",
    );
    let n = line(&t);
    assert_eq!(
        err(&t),
        format!("t.yaml:{n}:58: unknown Composition \"pairs\", expected one of bucketpairs")
    );
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, patch: [{op: replace, path: /spec/pipeline/1/input, value: {}}]}",
    );
    let e = err(&t);
    assert!(
        e.starts_with(&format!(
            "t.yaml:{}:78: patch does not apply to Composition bucketpairs: ",
            line(&t)
        )),
        "{e}"
    );
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, patch: [{op: replace, path: /spec/compositeTypeRef/kind, value: XOther}]}",
    );
    assert!(err(&t).ends_with(
        "patch changes compositeTypeRef, which Crossplane refuses on a Composition, expected it unchanged"
    ));
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, patch: [{op: replace, path: /spec/pipeline/0/input/kind, value: Patches}]}",
    );
    let e = err(&t);
    assert!(
        e.contains("after the patch: Composition bucketpairs: step \"buckets\" gives the built-in function \"resources\" an input it does not accept"),
        "{e}"
    );
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, patch: [{op: replace, path: /spec/pipeline/0/input/resources/0/count, value: 2}]}",
    );
    assert!(err(&t).contains("patch leaves Composition bucketpairs as it is"));
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, delay: 1s, patch: [{op: replace, path: /spec/pipeline/0/input/resources/0/count, value: 3}]}",
    );
    assert!(err(&t).contains(
        "`delay` does not apply to a compositionUpdate phase, expected only composition, patch"
    ));
    // A valid edit: 2 changed Buckets per XR become 3, so 2 stay (unchanged) and 1 is new.
    let t = with_phase(
        "{name: edit, action: compositionUpdate, composition: bucketpairs, patch: [{op: replace, path: /spec/pipeline/0/input/resources/0/count, value: 3}]}",
    );
    let s = parse(&t, "t.yaml").expect("valid");
    let harness::scenario::Action::CompositionUpdate(edit) = &s.phases[1].action else {
        panic!("{:?}", s.phases[1]);
    };
    assert_eq!(edit.changed_per_xr, Some((0, 1)));
    assert_eq!(edit.shape.resources_per_xr(), Some(3));
    assert_eq!(s.phases[1].composites, vec![0]);
}

#[test]
fn a_function_fault_names_a_built_in_function_and_a_fault() {
    let t = with_phase("{name: slow, action: functionFault, function: resource, delay: 1s}");
    assert!(
        err(&t).contains("unknown Function \"resource\", expected one of resources"),
        "{}",
        err(&t)
    );
    let t = with_phase("{name: slow, action: functionFault, function: resources}");
    assert!(err(&t).contains(
        "a functionFault phase names no fault, expected at least one of delay, errorPercent, down: true, ttl"
    ));
    let t = with_phase(
        "{name: slow, action: functionFault, function: resources, down: true, delay: 1s}",
    );
    assert!(err(&t).contains("a function that is down answers nothing"));
    let t = with_phase("{name: slow, action: functionFault, function: resources, errorPercent: 0}");
    assert!(err(&t).contains("errorPercent 0 is out of range, expected a number in (0, 100]"));
    let t = with_phase(
        "{name: slow, action: functionFault, function: resources, errorPercent: 25, ttl: 0s, duration: 1m}",
    );
    let s = parse(&t, "t.yaml").expect("valid");
    let harness::scenario::Action::FunctionFault {
        function,
        fault,
        duration,
    } = &s.phases[1].action
    else {
        panic!("{:?}", s.phases[1]);
    };
    assert_eq!(function, "resources");
    assert_eq!(fault.error_percent, 25.0);
    assert_eq!(fault.ttl, Some(std::time::Duration::ZERO));
    assert_eq!(*duration, Some(std::time::Duration::from_secs(60)));
    assert_eq!(s.phases[1].until, harness::scenario::Until::Elapsed);
}
