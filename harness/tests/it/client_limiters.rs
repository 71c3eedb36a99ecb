//! The API-request bound sums Lemma 1 over the provider's client limiters (docs/budget.md
//! §2.5): our provider with a separate event client, as a controller-runtime provider writes
//! Events, passes the one-limiter bound and stays within the sum; the profile families derive
//! the limiters from the command line.

use harness::predict::plan;
use harness::result::RunResult;
use harness::run::{self, Progress, run_embedded};
use harness::scenario::parse;

use crate::fixture::{BODY, HEAD, verdict};

/// 200 buckets created at once at R = 10: the controllers' client is busy with the creates'
/// writes (burst 100, then 50/s), and each create's Event goes to the event client.
fn creation_wave(event_client: &str) -> String {
    format!(
        "apiVersion: harness/v1
name: event-client-{event_client}
time: virtual
provider: {{maxReconcileRate: 10, eventClient: {event_client}}}
resources:
  - {{name: bucket, kind: Bucket, count: 200}}
phases:
  - {{name: create, action: create, timeout: 2m}}
assertions:
  - {{check: apiRequests, phase: create, window: 1s}}
"
    )
}

fn run_virtual(text: &str) -> RunResult {
    let s = parse(text, "t.yaml").expect("valid scenario");
    let runtime = run::time::runtime(s.time).expect("a runtime");
    let output = runtime
        .block_on(run_embedded(&s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts");
    output.result
}

#[test]
fn a_separate_event_client_passes_the_one_limiter_bound_and_stays_within_the_per_client_sum() {
    // One limiter (QPS 50, burst 100) and one controller's watch start: ⌊100 + 50·1⌋ + 1.
    let one_limiter = 151.0;
    let r = run_virtual(&creation_wave("separate"));
    assert!(r.phases.iter().all(|p| p.completed), "{}", r.headline());
    let v = verdict(&r, "apiRequests");
    let note = v.note.as_deref().unwrap_or_default();
    let numbers = format!(
        "observed {} requests in the busiest 1 s, per-client bound {} ({}), one-limiter bound {one_limiter}; {note}",
        v.observed, v.limit, v.formula
    );
    assert_eq!(v.limit, 301.0, "two buckets: 2·⌊100 + 50·1⌋ + 1; {numbers}");
    assert!(
        note.ends_with(&format!("would allow {one_limiter}")),
        "{numbers}"
    );
    assert!(v.observed > one_limiter, "{numbers}");
    assert!(v.pass, "{numbers}");

    // The same wave with Events on the controllers' client stays within one limiter.
    let r = run_virtual(&creation_wave("shared"));
    let v = verdict(&r, "apiRequests");
    assert_eq!(v.limit, one_limiter);
    assert!(
        v.pass && v.observed <= one_limiter,
        "shared: observed {} against {}",
        v.observed,
        v.limit
    );
}

const KINDS: &str = "  kinds: [{apiVersion: example.org/v1, kind: Widget, scope: Cluster}]\n";

/// The create phase's API bound over 1 s of the scenario with `profile`.
fn api_bound(profile: &str) -> f64 {
    let s = parse(&format!("{HEAD}profile:\n{profile}{KINDS}{BODY}"), "t.yaml").expect("valid");
    plan(&s)
        .find("c/api-requests/1s")
        .expect("an API bound")
        .value
}

#[test]
fn each_profile_family_derives_its_client_limiters_and_the_bound_sums_them() {
    // R = 10, one controller with work (one watch start in 1 s).
    let each = 150.0;
    assert_eq!(
        api_bound("  flags: loadtest\n  args: [--max-reconcile-rate=10]\n"),
        each + 1.0
    );
    assert_eq!(
        api_bound(
            "  flags: loadtest\n  args: [--max-reconcile-rate=10, --event-client=separate]\n"
        ),
        2.0 * each + 1.0,
        "our provider with a separate event client"
    );
    assert_eq!(
        api_bound("  flags: crossplane-runtime\n  args: [--max-reconcile-rate=10]\n"),
        2.0 * each + 1.0,
        "manager and events"
    );
    assert_eq!(
        api_bound("  flags: upjet\n  args: [--max-reconcile-rate=10, --leader-election]\n"),
        3.0 * each + 1.0,
        "manager, events and leader election"
    );
    // A profile names its own: the manager's limits from clientQps and clientBurst, the
    // events' its own.
    assert_eq!(
        api_bound(
            "  flags: crossplane-runtime\n  args: [--max-reconcile-rate=10]\n  settings:\n    clientQps: 20\n    clientBurst: 40\n    clientLimiters: [{name: manager}, {name: events, qps: 5, burst: 10}]\n"
        ),
        60.0 + 15.0 + 1.0
    );
}

#[test]
fn a_profiles_client_limiters_are_checked_where_they_are_written() {
    let err = |profile: &str| {
        parse(&format!("{HEAD}profile:\n{profile}{KINDS}{BODY}"), "t.yaml")
            .expect_err("must not validate")
            .to_string()
    };
    let e = err(
        "  flags: loadtest\n  args: [--event-client=separate]\n  settings:\n    clientLimiters: [{name: events}]\n",
    );
    assert_eq!(
        e,
        "t.yaml:7:21: clientLimiters is given by the command line's --event-client=separate (controllers, events), expected no clientLimiters with `flags: loadtest`"
    );
    let e = err(
        "  flags: upjet\n  args: []\n  settings:\n    clientLimiters: [{name: manager}, {name: manager, qps: 0}]\n",
    );
    assert!(
        e.contains("t.yaml:7:46: client limiter \"manager\" is named twice")
            && e.contains("qps 0 is not a number > 0"),
        "{e}"
    );
}
