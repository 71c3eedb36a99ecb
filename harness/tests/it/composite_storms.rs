//! The shipped breaker-storm scenarios, scaled down (fewer XRs, a 10-minute sync interval
//! and holds to match, each in seconds of wall time) and run on the embedded stack in
//! virtual time: the breaker opens where the plan says it surely does, the circuits' spans
//! open are measured per XR, and the settings that fix each storm (a larger bucket, the
//! eager mode of crossplane/crossplane PR #7725) show it gone.

use harness::result::RunResult;
use harness::result::core::CoreReport;
use harness::run::{Progress, run_embedded};
use harness::scenario::{Scenario, Set, parse_with};

use crate::fixture::verdict;

fn scenario(file: &str, sets: &[&str]) -> Scenario {
    let path = format!("{}/../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("the shipped scenario");
    let sets: Vec<Set> = sets
        .iter()
        .map(|s| s.parse().expect("PATH=VALUE"))
        .collect();
    parse_with(&text, file, &sets).expect("valid")
}

/// Shipped scenario `file` with `sets` (its XR group's count first), a 10-minute sync
/// interval and a 12-minute hold: one resync in the hold.
fn resyncing(file: &str, sets: &[&str]) -> Scenario {
    let fixed = ["core.syncInterval=10m", "phases.hold.duration=12m"];
    scenario(file, &[sets, &fixed[..]].concat())
}

/// The row of metric `m` in `c`.
fn row_of(c: &harness::compare::Comparison, m: &str) -> harness::compare::Row {
    c.rows
        .iter()
        .find(|r| r.metric == m)
        .unwrap_or_else(|| panic!("{m}: {:?}", c.rows))
        .clone()
}

fn run(s: &Scenario) -> RunResult {
    let runtime = harness::run::time::runtime(s.time).expect("a runtime");
    let out = runtime
        .block_on(run_embedded(s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts");
    out.result
}

fn passed(r: &RunResult) -> &CoreReport {
    assert!(!r.partial, "{:?}", r.stopped);
    for v in &r.verdicts {
        assert!(v.pass, "{v:?}");
    }
    r.core.as_ref().expect("core was measured")
}

fn plan_value(s: &Scenario, id: &str) -> f64 {
    harness::predict::plan(s)
        .find(id)
        .unwrap_or_else(|| panic!("{id} predicted"))
        .value
}

/// Each XR's spans open are in order, each closed after it opened, and add up to the time
/// the XR reports open.
fn spans_add_up(core: &CoreReport) {
    for x in &core.xrs {
        let spans: Vec<_> = core.open_spans.iter().filter(|s| s.xr == x.name).collect();
        assert_eq!(spans.len(), x.opens as usize, "{x:?}");
        let mut last = 0.0;
        let mut total = 0.0;
        for s in &spans {
            assert!(s.opened_s >= last, "{s:?}");
            let end = s.closed_s.unwrap_or(core.ended_s);
            assert!(end >= s.opened_s, "{s:?}");
            total += end - s.opened_s;
            last = end;
        }
        // A span still open at the XR's delete ends there, before the run's end.
        assert!(x.open_s <= total + 1e-6, "{x:?} {total}");
    }
}

#[test]
fn an_xr_of_60_resources_opens_its_own_breaker_at_creation_and_at_each_resync() {
    let s = resyncing("xr-large.yaml", &["composites.large.count=1"]);
    // Creation and the Buckets' replay surely open it: 2 × 60 = 120 tokens > 100.
    assert_eq!(plan_value(&s, "core/large/resync/opens"), 1.0);
    assert_eq!(plan_value(&s, "core/breaker-opens"), 2.0);
    let r = run(&s);
    let core = passed(&r);
    let v = verdict(&r, "breakerOpens");
    assert!(
        !v.upper && v.limit == 2.0,
        "a lower bound, the plan's: {v:?}"
    );
    let x = &core.xrs[0];
    assert!(x.opens >= 2, "{x:?}");
    spans_add_up(core);
    // The creation's circuit stays open past the cooldown until the first replay's first
    // event (at most T_cool + 1.1·S_sync), which closes it; the rest of the replay opens
    // it again at the same instant.
    let first = &core.open_spans[0];
    let closed = first.closed_s.expect("closed by the replay");
    assert!(closed - first.opened_s >= 300.0, "{first:?}");
    assert!(closed - first.opened_s <= 300.0 + 660.0, "{first:?}");
    assert_eq!(core.open_spans[1].opened_s, closed);
    // The Ready write the open circuit dropped is picked up by the 1m TTL requeue.
    assert!(core.stale.is_empty());
    let (ready, slowest) = (
        x.ready_s.expect("Ready"),
        x.slowest_composed_s.expect("all Ready"),
    );
    assert!(ready <= slowest + 66.0, "{x:?}");

    // A bucket above the creation's most tokens (1,275) opens nothing.
    let fixed = resyncing(
        "xr-large.yaml",
        &["composites.large.count=1", "core.circuitBreakerBurst=1300"],
    );
    assert_eq!(plan_value(&fixed, "core/breaker-opens"), 0.0);
    assert_eq!(
        harness::predict::plan(&fixed)
            .find("core/breaker-opens")
            .and_then(|p| p.get("X_may")),
        Some(0.0)
    );
    let r = run(&fixed);
    let core = passed(&r);
    assert_eq!(core.breaker_opens(), 0);
    assert!(core.open_spans.is_empty());
    assert!(
        core.xrs[0].ready_s.expect("Ready") <= core.xrs[0].slowest_composed_s.expect("Ready") + 1.0
    );
}

#[test]
fn a_storm_leaves_xrs_stale_under_the_released_breaker_and_not_under_the_eager_one() {
    let sets = ["composites.stale.count=3", "phases.hold.duration=4m"];
    let s = scenario("xr-stale.yaml", &sets);
    assert_eq!(plan_value(&s, "core/stale-xrs"), 3.0);
    let r = run(&s);
    let core = passed(&r);
    // Every composed Bucket Ready, no XR: the creation's last Ready write was dropped and
    // nothing requeues them (no TTL) before the next resync.
    assert_eq!(core.stale.len(), 3, "{core:?}");
    assert_eq!(
        core.stale_after(std::time::Duration::from_secs(120)).len(),
        3
    );
    assert!(core.xrs.iter().all(|x| x.ready_s.is_none()));
    assert!(core.breaker_opens() >= 3);
    spans_add_up(core);

    let eager = scenario(
        "xr-stale.yaml",
        &[&sets[..], &["core.circuitBreakerMode=eager"]].concat(),
    );
    assert_eq!(plan_value(&eager, "core/stale-xrs"), 0.0);
    let r = run(&eager);
    let core = passed(&r);
    assert!(core.stale.is_empty(), "{:?}", core.stale);
    assert!(core.breaker_opens() >= 3, "the storm still opens them");
    for x in &core.xrs {
        // Requeued while open, the XR reads Ready within a half-open interval of its last
        // Bucket's Ready, and its circuit closes at the cooldown (T_cool + T_half at most).
        let (ready, slowest) = (
            x.ready_s.expect("Ready"),
            x.slowest_composed_s.expect("Ready"),
        );
        assert!(ready <= slowest + 31.0, "{x:?}");
        assert!(x.open_s <= 330.0 + 1e-6, "{x:?}");
    }
    spans_add_up(core);
    // `harness compare` of the two shows the difference in core's figures.
    let old = run(&s);
    let c = harness::compare::compare(&old, &r, 10.0);
    let row = |m: &str| row_of(&c, m);
    assert_eq!(row("core XRs stale").old, Some(3.0));
    assert_eq!(row("core XRs stale").new, Some(0.0));
    assert_eq!(row("core XRs not Ready").new, Some(0.0));
    assert!(
        c.settings_changed
            .iter()
            .any(|l| l == "core circuit-breaker-mode: released → eager"),
        "{:?}",
        c.settings_changed
    );
}

#[test]
fn an_hourly_resync_of_50_watched_objects_per_xr() {
    let s = resyncing("xr-resync-usages.yaml", &["composites.vms.count=1"]);
    // n_kind is the most objects of one kind (the 50 Records, not all 55 resources): the
    // replay takes 100 tokens, which does not pass a bucket of 100.
    assert_eq!(plan_value(&s, "core/vms/resync/tokens"), 100.0);
    assert_eq!(plan_value(&s, "core/vms/resync/opens"), 0.0);
    // But the creation opened the circuit, the replay's first event closes it, and the
    // XR's status Update that the closing causes finds the 100 tokens spent: 102 > 100.
    assert_eq!(plan_value(&s, "core/vms/resync/reopens"), 1.0);
    assert_eq!(plan_value(&s, "core/breaker-opens"), 2.0);
    let r = run(&s);
    let core = passed(&r);
    spans_add_up(core);
    assert_eq!(
        core.breaker_opens() as f64,
        plan_value(&s, "core/breaker-opens")
    );
    // The reopening comes at the instant the replay closed the creation's circuit.
    let closed = core.open_spans[0].closed_s.expect("closed by the replay");
    assert_eq!(core.open_spans[1].opened_s, closed);
    // The shipped scenario, 10 XRs through one replay: the 20 opens observed.
    let shipped = scenario("xr-resync-usages.yaml", &[]);
    assert_eq!(plan_value(&shipped, "core/breaker-opens"), 20.0);
}

/// `harness compare` of xr-smoke (scaled down) with realtime compositions on and off: the
/// rows of core's API requests, function calls and breaker events differ, and the header
/// names the flag that changed.
#[test]
fn compare_shows_what_realtime_compositions_cost_core() {
    let text = crate::fixture::xr_smoke_text("5m");
    let with = |sets: &[&str]| {
        let sets: Vec<Set> = sets
            .iter()
            .map(|s| s.parse().expect("PATH=VALUE"))
            .collect();
        parse_with(&text, "xr-smoke.yaml", &sets).expect("valid")
    };
    let on = run(&with(&["composites.sets.count=4"]));
    let off = run(&with(&[
        "composites.sets.count=4",
        "core.enableRealtimeCompositions=false",
    ]));
    let (a, b) = (passed(&on), passed(&off));
    let c = harness::compare::compare(&on, &off, 10.0);
    assert!(c.comparable(), "{:?}", c.problems);
    assert_eq!(
        c.settings_changed,
        ["core enable-realtime-compositions: true → false"]
    );
    let row = |m: &str| row_of(&c, m);
    #[allow(clippy::cast_precision_loss)]
    {
        assert_eq!(row("core api requests").old, Some(a.requests as f64));
        assert_eq!(row("core api requests").new, Some(b.requests as f64));
        assert_eq!(
            row("core function calls resources").old,
            Some(a.total_function_calls() as f64)
        );
        assert_eq!(
            row("core function calls resources").new,
            Some(b.total_function_calls() as f64)
        );
    }
    // Realtime on reconciles on every watch event; off, only on the poll: fewer requests
    // and calls, and no event ever reaches a breaker.
    assert!(b.requests < a.requests, "{} {}", a.requests, b.requests);
    assert!(b.total_function_calls() < a.total_function_calls());
    assert!(
        row("core breaker allowed events")
            .old
            .is_some_and(|n| n > 0.0)
    );
    // Off, only the XRs' own and the revisions' events reach the breaker: no composed
    // resource's.
    let (on_events, off_events) = (
        row("core breaker allowed events").old.unwrap_or_default(),
        row("core breaker allowed events").new.unwrap_or_default(),
    );
    assert!(off_events < on_events, "{on_events} {off_events}");
    assert_eq!(row("core breaker opens").new, Some(0.0));
    let text = harness::compare::render(&c);
    assert!(text.contains("core api requests"), "{text}");
}
