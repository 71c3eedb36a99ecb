//! The driver on a fake target, on paused time: every instant it records is exact.

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::json;

use limiter::crossplane::RECONCILE_REQUESTED_AT_ANNOTATION;

use super::*;
use crate::result::PhaseFailure;
use crate::run::objects::{self, kind_info};
use crate::run::source::Audits;
use crate::run::target::fake::{self, FakeTarget};

fn scenario(phases: &str) -> Scenario {
    let yaml = format!(
        "apiVersion: harness/v1\nname: drive\nprovider: {{maxReconcileRate: 10}}\n\
         resources:\n  - {{name: b, kind: Bucket, count: 5}}\nphases:\n{phases}"
    );
    crate::scenario::parse(&yaml, "drive.yaml").unwrap()
}

struct Rig {
    target: FakeTarget,
    watches: Watches,
}

async fn rig(s: &Scenario) -> Rig {
    let target = FakeTarget::start(s, ()).await.unwrap();
    objects::seed(&target.client(), s, None, None)
        .await
        .unwrap();
    let kinds = vec![kind_info(
        crate::scenario::Kind::Bucket,
        &objects::namespace(s),
    )];
    let watches = Watches::start(&target.client(), &kinds, target.clock());
    Rig { target, watches }
}

/// A driver of `s` on a rig's target, with its audits: the test runs the phases one by one.
struct Driving<'s> {
    s: &'s Scenario,
    driver: Driver<'s>,
    audits: Audits<'s>,
}

impl<'s> Driving<'s> {
    fn new(s: &'s Scenario, rig: &Rig) -> Self {
        Driving {
            s,
            driver: Driver::new(s, rig.target.client(), rig.target.clock()),
            audits: Audits::start(s, rig.target.client(), rig.target.clock()),
        }
    }

    /// Runs phase `i` on the rig, quietly.
    async fn phase(&mut self, i: usize, rig: &mut Rig) -> Result<PhaseEnd, RunError> {
        self.driver
            .run_phase(
                i,
                &self.s.phases[i],
                &mut rig.target,
                &rig.watches,
                &Progress::quiet(),
                &mut self.audits,
            )
            .await
    }
}

async fn drive(s: &Scenario, rig: &mut Rig) -> Log {
    let mut driving = Driving::new(s, rig);
    for i in 0..s.phases.len() {
        let end = driving.phase(i, rig).await.unwrap();
        if !end.run_goes_on() {
            break;
        }
    }
    driving.driver.log().clone()
}

/// Plays the provider: marks every bucket of the scenario Ready.
async fn make_ready(client: kube::Client, s: &Scenario) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client,
        &objects::namespace(s),
        &kind_info(crate::scenario::Kind::Bucket, "unused").resource,
    );
    for i in 0..s.groups[0].count {
        let name = s.groups[0].resource_name(i, &s.name);
        let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-23T00:00:00Z"}]}});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
            .await
            .unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_create_phase_paces_its_writes_at_its_rate_and_times_out_exactly() {
    let s = scenario("  - {name: create, action: create, rate: 10, timeout: 2s}\n");
    let mut rig = rig(&s).await;
    let log = drive(&s, &mut rig).await;
    let created: Vec<u64> = log.records.values().map(|r| r.created_us).collect();
    assert_eq!(created, [0, 100_000, 200_000, 300_000, 400_000]);
    assert!(log.records.values().all(|r| !r.create_failed));
    let span = &log.spans[0];
    assert!(!span.completed, "no provider: nothing becomes Ready");
    assert_eq!(span.end_us - span.start_us, 2_000_000);
}

#[tokio::test(start_paused = true)]
async fn a_phase_completes_when_the_watches_see_every_resource_ready() {
    let s = scenario("  - {name: create, action: create, timeout: 60s}\n");
    let mut rig = rig(&s).await;
    let (client, s2) = (rig.target.client(), s.clone());
    let provider = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        make_ready(client, &s2).await;
    });
    let log = drive(&s, &mut rig).await;
    provider.await.unwrap();
    let span = &log.spans[0];
    assert!(span.completed);
    let took = span.end_us - span.start_us;
    assert!(
        (3_000_000..=3_000_000 + 250_000).contains(&took),
        "the count follows the watch within one recount: {took} µs"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hold_lasts_exactly_its_duration() {
    let s = scenario("  - {name: hold, action: hold, duration: 30s}\n");
    let mut rig = rig(&s).await;
    let log = drive(&s, &mut rig).await;
    assert!(log.spans[0].completed);
    assert_eq!(log.spans[0].end_us - log.spans[0].start_us, 30_000_000);
}

#[tokio::test(start_paused = true)]
async fn an_outage_is_set_on_the_clouds_clock_for_its_duration() {
    let s = scenario(
        "  - {name: hold, action: hold, duration: 4s}\n  - {name: out, action: cloudOutage, duration: 5s, status: 500, until: elapsed}\n",
    );
    let mut rig = rig(&s).await;
    let log = drive(&s, &mut rig).await;
    let changes = rig.target.cloud().changes.lock().unwrap().clone();
    assert_eq!(changes.len(), 1);
    let (at, faults) = &changes[0];
    assert_eq!(*at, Duration::from_secs(4));
    assert_eq!(
        faults.outages,
        [mock_cloud::Outage {
            start: Duration::from_secs(4),
            end: Duration::from_secs(9),
            status: 500,
        }]
    );
    assert_eq!(log.spans[1].end_us - log.spans[1].start_us, 5_000_000);
}

#[tokio::test(start_paused = true)]
async fn a_latency_change_with_a_duration_is_undone_after_it() {
    let s = scenario(
        "  - {name: slow, action: cloudLatency, latency: {read: {fixed: 250ms}}, duration: 3s, until: elapsed}\n",
    );
    let mut rig = rig(&s).await;
    drive(&s, &mut rig).await;
    let changes = rig.target.cloud().changes.lock().unwrap().clone();
    assert_eq!(changes.len(), 2);
    assert_eq!(
        changes[0].1.latency.get(&mock_cloud::Class::Read),
        Some(&mock_cloud::Latency::Fixed(Duration::from_millis(250)))
    );
    assert_eq!(changes[1].0 - changes[0].0, Duration::from_secs(3));
    assert!(changes[1].1.latency.is_empty(), "the latency before it");
}

#[tokio::test(start_paused = true)]
async fn a_cloud_fault_replaces_the_per_resource_rules_and_gives_the_old_ones_back_after_its_duration()
 {
    let s = scenario(
        "  - {name: break, action: cloudFault, faults: [{percent: 40, error: AccessDenied}], duration: 3s}
  - {name: heal, action: cloudFault, faults: []}
  - {name: drift, action: cloudFault, drift: {percent: 20, field: versioning}}
",
    );
    let mut rig = rig(&s).await;
    let log = drive(&s, &mut rig).await;
    let changes = rig.target.cloud().changes.lock().unwrap().clone();
    let names = |f: &mock_cloud::Faults| -> Vec<(String, mock_cloud::ResourceEffect)> {
        f.resources
            .iter()
            .map(|r| (r.select.name.clone().unwrap(), r.effect.clone()))
            .collect()
    };
    let denied = mock_cloud::ResourceEffect::Error {
        error: mock_cloud::LastingError::AccessDenied,
        code: None,
        actions: None,
    };
    // 40 % of 5 from the top index down: b-4 and b-3, for 3 s, then none again.
    assert_eq!(changes.len(), 4, "{changes:?}");
    assert_eq!(
        names(&changes[0].1),
        [("b-3".into(), denied.clone()), ("b-4".into(), denied)]
    );
    assert_eq!(changes[1].0 - changes[0].0, Duration::from_secs(3));
    assert!(changes[1].1.resources.is_empty(), "the rules before it");
    assert!(changes[2].1.resources.is_empty(), "cleared");
    assert_eq!(
        names(&changes[3].1),
        [(
            "b-4".into(),
            mock_cloud::ResourceEffect::Drift {
                field: Some("versioning".into())
            }
        )]
    );
    assert_eq!(log.spans[0].end_us - log.spans[0].start_us, 3_000_000);
    assert_eq!(log.spans[1].end_us, log.spans[1].start_us, "ends at once");
}

#[tokio::test(start_paused = true)]
async fn a_restart_waits_until_the_new_provider_has_read_every_live_resource() {
    let s = scenario(
        "  - {name: create, action: create, timeout: 1s}\n  - {name: restart, action: restart, timeout: 30s}\n",
    );
    let mut rig = rig(&s).await;
    let calls = std::sync::Arc::clone(&rig.target.cloud().calls);
    let mut driving = Driving::new(&s, &rig);
    // No provider: the create times out, but its five buckets exist.
    driving.phase(0, &mut rig).await.unwrap();
    {
        let restart = driving.phase(1, &mut rig);
        tokio::pin!(restart);
        // The new provider reads four buckets after 1 s, the fifth only after 7 s.
        for (after, reads) in [(1, 0..4), (6, 4..5)] {
            tokio::select! {
                _ = &mut restart => panic!("a bucket is not read yet"),
                () = tokio::time::sleep(Duration::from_secs(after)) => {}
            }
            for i in reads {
                let name = s.groups[0].resource_name(i, &s.name);
                calls
                    .lock()
                    .unwrap()
                    .push(fake::cloud_get(u64::from(i), &name));
            }
        }
        assert_eq!(restart.await.unwrap(), PhaseEnd::Completed);
    }
    let log = driving.driver.log().clone();
    assert_eq!(rig.target.restarts.len(), 1);
    let (called, deadline) = rig.target.restarts[0];
    assert_eq!(deadline - called, Duration::from_secs(30));
    let span = &log.spans[1];
    assert!(span.completed);
    assert!((7_000_000..=7_100_000).contains(&(span.end_us - span.start_us)));
}

/// Plays a provider that reconciles every bucket after `after` (a cloud Get each) and,
/// when `records`, writes the annotation's token into `status.lastHandledReconcileAt`.
async fn reconcile_requests(
    client: kube::Client,
    calls: std::sync::Arc<std::sync::Mutex<Vec<mock_cloud::Call>>>,
    s: &Scenario,
    after: Duration,
    records: bool,
) {
    tokio::time::sleep(after).await;
    let api: Api<DynamicObject> = Api::namespaced_with(
        client,
        &objects::namespace(s),
        &kind_info(crate::scenario::Kind::Bucket, "unused").resource,
    );
    for i in 0..s.groups[0].count {
        let name = s.groups[0].resource_name(i, &s.name);
        let seq = calls.lock().unwrap().len() as u64;
        calls.lock().unwrap().push(fake::cloud_get(seq, &name));
        if records {
            let obj = api.get(&name).await.unwrap();
            let token =
                obj.metadata.annotations.unwrap()[RECONCILE_REQUESTED_AT_ANNOTATION].clone();
            let status = json!({"status": {"lastHandledReconcileAt": token}});
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                .await
                .unwrap();
        }
    }
}

/// Runs the create phase (no provider: it times out, its buckets exist), then the resync
/// phase with a provider that reconciles after 2 s and records the token or not.
async fn resync_with(records: bool) -> (PhaseEnd, PhaseSpan) {
    let s = scenario(
        "  - {name: create, action: create, timeout: 1s}\n  - {name: resync, action: resync, handledGrace: 5s, timeout: 60s}\n",
    );
    let mut rig = rig(&s).await;
    let mut driving = Driving::new(&s, &rig);
    driving.phase(0, &mut rig).await.unwrap();
    let (client, calls) = (
        rig.target.client(),
        std::sync::Arc::clone(&rig.target.cloud().calls),
    );
    let end = {
        let resync = driving.phase(1, &mut rig);
        let provider = reconcile_requests(client, calls, &s, Duration::from_secs(2), records);
        let (end, ()) = tokio::join!(resync, provider);
        end.unwrap()
    };
    (end, driving.driver.log().spans[1].clone())
}

#[tokio::test(start_paused = true)]
async fn a_resync_whose_provider_reconciles_without_recording_the_token_fails_a_grace_after_the_first_reconcile()
 {
    let (end, span) = resync_with(false).await;
    let PhaseEnd::Failed(failure) = &end else {
        panic!("{end:?}");
    };
    assert!(end.run_goes_on(), "a verdict does not stop the run");
    assert_eq!(
        *failure,
        PhaseFailure::ReconcileRequestsNotImplemented {
            requested: 5,
            reconciled: 5,
            grace_ms: 5_000
        }
    );
    assert!(!span.completed);
    assert_eq!(span.failure.as_ref(), Some(failure));
    // The reconciles at 2 s are seen within one look (250 ms); the grace is 5 s.
    let took = span.end_us - span.start_us;
    assert!((7_000_000..=7_250_000).contains(&took), "{took} µs");
}

#[tokio::test(start_paused = true)]
async fn a_resync_whose_provider_records_the_token_completes_as_before() {
    let (end, span) = resync_with(true).await;
    assert_eq!(end, PhaseEnd::Completed);
    assert!(span.completed && span.failure.is_none());
    assert!(span.end_us - span.start_us <= 2_250_000);
}

#[test]
fn the_cleanups_estimate_is_the_pace_so_far_applied_to_the_rest() {
    assert_eq!(time_left(0, 100, Duration::from_secs(3)), None);
    assert_eq!(
        time_left(25, 100, Duration::from_secs(10)),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        time_left(100, 100, Duration::from_secs(10)),
        Some(Duration::ZERO)
    );
}

/// A clean-up stopped while the resources' finalizers hold them (no provider releases
/// them): what is left is every resource, then the seeded objects, and the line names
/// them.
#[tokio::test(start_paused = true)]
async fn a_cleanup_stopped_early_says_what_it_leaves() {
    let s = scenario("  - {name: create, action: create}\n");
    let target = FakeTarget::start(&s, ()).await.unwrap();
    let seeded = objects::seed(&target.client(), &s, None, None)
        .await
        .unwrap();
    let kinds = vec![kind_info(
        crate::scenario::Kind::Bucket,
        &objects::namespace(&s),
    )];
    let watches = Watches::start(&target.client(), &kinds, target.clock());
    let mut rig = Rig { target, watches };
    let mut driving = Driving::new(&s, &rig);
    let _ = tokio::time::timeout(Duration::from_secs(1), driving.phase(0, &mut rig)).await;
    let driver = &mut driving.driver;
    let api: Api<DynamicObject> = Api::namespaced_with(
        rig.target.client(),
        &objects::namespace(&s),
        &kind_info(crate::scenario::Kind::Bucket, "unused").resource,
    );
    let held = json!({"metadata": {"finalizers": ["test.loadtest/hold"]}});
    for i in 0..s.groups[0].count {
        let name = s.groups[0].resource_name(i, &s.name);
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&held))
            .await
            .unwrap();
    }
    // Let the watches see them.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopped = tokio::time::timeout(
        Duration::from_secs(3),
        driver.clean_up(
            &seeded,
            &rig.watches,
            Duration::from_secs(60),
            &Progress::quiet(),
        ),
    )
    .await;
    assert!(stopped.is_err(), "the finalizers hold the resources");
    let left = driver.left_after_cleanup(&seeded, &rig.watches);
    assert_eq!(left.len(), 5 + seeded.len(), "{left:?}");
    assert!(left[0].starts_with("Bucket "), "{left:?}");
    assert_eq!(left.len() - seeded.len(), 5);
    let line = crate::run::cleanup_interrupted(&left);
    assert!(
        line.starts_with(&format!(
            "cleanup interrupted: {} objects the run created are left in the cluster: Bucket ",
            left.len()
        )),
        "{line}"
    );
    assert_eq!(
        crate::run::cleanup_interrupted(&[]),
        "cleanup interrupted: nothing the run created is left"
    );
}
