//! A synthetic run of scenarios/smoke.yaml: deterministic observations shaped like a real one
//! (a paced creation wave, polls with jitter, a re-sync wave, deletes), for the reports.

use std::collections::BTreeMap;

use harness::measure::{CloudResource, CustomResource};
use harness::result::provider_check::{ControllerMetrics, RestRequests};
use harness::result::waiting::{Condition, Pending, Waiting};
use harness::result::{
    ApiRequest, CallAction, CloudCall, Observations, PhaseSpan, ProviderMetrics, ResourceTimes,
    RunInfo, RunResult, Signal, StopCause, Stopped, Verdict,
};
use harness::run::{self, Progress, run_embedded};
use harness::scenario::Scenario;

/// A scenario's head, for a profile or settings to follow before [`BODY`].
pub const HEAD: &str = "apiVersion: harness/v1\nname: t\n";

/// Two cluster-scoped Widgets of a foreign provider (their calls per reconcile given),
/// created in one phase.
pub const BODY: &str = "resources:
  - {name: b, apiVersion: example.org/v1, kind: Widget, count: 2}
calls:
  - {apiVersion: example.org/v1, kind: Widget, observe: 3, create: 1, update: 1, delete: 1}
phases:
  - {name: c, action: create}
";

/// The path of the shipped scenario `scenarios/NAME`, as the command line takes it.
pub fn scenario(name: &str) -> String {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(name)
        .display()
        .to_string()
}

/// scenarios/xr-smoke.yaml as the composite tests run it: its hold 2 minutes, and a limit
/// of the run's own, `max_ttr`, on the XRs' p99 time to Ready. Small runs queue their
/// Buckets nowhere, and polled XRs read Ready up to a poll interval after them: the plan's
/// unloaded time to Ready is then no limit to hold them to.
pub fn xr_smoke_text(max_ttr: &str) -> String {
    std::fs::read_to_string(scenario("xr-smoke.yaml"))
        .expect("the shipped scenario")
        .replace("duration: 3m", "duration: 2m")
        .replace(
            "{check: xrTimeToReady, quantile: 0.99}",
            &format!("{{check: xrTimeToReady, quantile: 0.99, maxDuration: {max_ttr}}}"),
        )
}

/// The verdict of `check` in `r` (the first, where more than one assertion makes it).
pub fn verdict<'a>(r: &'a RunResult, check: &str) -> &'a Verdict {
    r.verdicts
        .iter()
        .find(|v| v.check == check)
        .unwrap_or_else(|| panic!("a {check} verdict"))
}

/// Runs `s` on the embedded stack, on the runtime its time mode asks for, to its end
/// (no interrupt).
pub fn run_to_end(s: &Scenario) -> RunResult {
    let runtime = run::time::runtime(s.time).expect("a runtime");
    let output = runtime
        .block_on(run_embedded(s, &Progress::quiet(), std::future::pending()))
        .expect("the stack starts");
    assert!(output.interrupted.is_none());
    output.result
}

const S: u64 = 1_000_000;

/// A small deterministic generator (no dependency, reproducible).
struct Lcg(u64);

impl Lcg {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn call(at_us: u64, action: CallAction, name: &str, throttled: bool) -> CloudCall {
    CloudCall {
        at_us,
        account: "default".into(),
        action,
        op: format!("generic:{}", action.as_str()).into(),
        name: name.into(),
        status: if throttled { 429 } else { 200 },
        throttled,
        retry_not_before_us: None,
    }
}

/// What a provider built on controller-runtime exports of the names the harness reads: the
/// standard ones only (no cloud-call counter, no limiter counters).
/// A request of the provider's to the API server at `at_us`.
fn provider_request(at_us: u64, verb: &str) -> ApiRequest {
    ApiRequest {
        at_us,
        verb: verb.into(),
        resource: None,
        from_provider: true,
        object: None,
        main_write: false,
        sent_from_us: None,
    }
}

fn standard_metrics(api_requests: u64) -> ProviderMetrics {
    let rest = |code: &str, method: &str, count| RestRequests {
        code: code.into(),
        method: method.into(),
        host: "10.96.0.1:443".into(),
        count,
    };
    ProviderMetrics {
        busy_s: BTreeMap::from([("managed/bucket.mockcloud.example.org".into(), 12.5)]),
        controllers: vec![ControllerMetrics {
            controller: "managed/bucket.mockcloud.example.org".into(),
            reconciles: BTreeMap::from([
                ("error".into(), 2),
                ("requeue".into(), 0),
                ("requeue_after".into(), 410),
                ("success".into(), 100),
            ]),
            reconcile_errors: Some(2),
            queue_adds: Some(530),
            queue_depth_max: Some(48.0),
        }],
        rest_requests: Some(vec![
            rest("200", "PUT", api_requests - 500 - 3),
            rest("200", "PATCH", 500),
            rest("409", "PUT", 3),
        ]),
        ..ProviderMetrics::default()
    }
}

/// Observations of a smoke-like run: 100 buckets, R = 10, poll 10 s.
pub fn smoke_observations() -> Observations {
    let mut rng = Lcg(42);
    let mut calls = Vec::new();
    let mut api = Vec::new();
    let mut resources = Vec::new();
    // create: 50/s from t = 0; the bucket serves 10/s after a burst of 100 reconciles.
    let mut ready_at = Vec::new();
    for i in 0..100u64 {
        let name = format!("bucket-{i}");
        let created = i * S / 50;
        let start = created.max((i.saturating_sub(50)) * S / 10) + (rng.unit() * 50_000.0) as u64;
        calls.push(call(start, CallAction::Get, &name, false));
        calls.push(call(start + 20_000, CallAction::Create, &name, false));
        let observe = start + S + (rng.unit() * 100_000.0) as u64;
        calls.push(call(observe, CallAction::Get, &name, false));
        for k in 0..5 {
            api.push(provider_request(start + k * 2_000, "patch"));
        }
        ready_at.push(observe + 10_000);
        resources.push(ResourceTimes {
            name: name.clone(),
            group: "bucket".into(),
            created_in: "create".into(),
            created_us: created,
            ready_us: Some(observe + 10_000),
            deleted_us: Some(45 * S),
            gone_us: Some(46 * S + i * 10_000),
            external_name: Some(name),
            expected_poll_s: 10.0,
        });
    }
    let create_end = ready_at.iter().copied().max().unwrap_or(0);
    // hold: polls every 10 s ± 1 s until the re-sync.
    let hold_end = create_end + 15 * S;
    for (i, &r) in ready_at.iter().enumerate() {
        let mut t = r;
        loop {
            t += ((9.0 + 2.0 * rng.unit()) * S as f64) as u64;
            if t > hold_end + 10 * S {
                break;
            }
            calls.push(call(t, CallAction::Get, &format!("bucket-{i}"), false));
            api.push(provider_request(t, "update"));
        }
    }
    // resync: every resource once, paced by the bucket (a few throttled reads to show them).
    let resync_start = hold_end;
    for i in 0..100u64 {
        let t = resync_start + i * S / 12;
        calls.push(call(
            t,
            CallAction::Get,
            &format!("bucket-{i}"),
            i % 37 == 0,
        ));
        api.push(provider_request(t + 1_000, "update"));
    }
    let resync_end = resync_start + 9 * S;
    // delete
    let delete_start = resync_end;
    for i in 0..100u64 {
        let t = delete_start + i * S / 10;
        let name = format!("bucket-{i}");
        calls.push(call(t, CallAction::Get, &name, false));
        calls.push(call(t + 15_000, CallAction::Delete, &name, false));
    }
    let end = delete_start + 11 * S;
    calls.sort_by_key(|c| c.at_us);
    api.sort_by_key(|a| a.at_us);
    let api_count = api.len() as u64;
    Observations {
        duration_us: end,
        phases: vec![
            PhaseSpan::complete("create", 0, create_end),
            PhaseSpan::complete("hold", create_end, hold_end),
            PhaseSpan::complete("resync", resync_start, resync_end),
            PhaseSpan::complete("delete", delete_start, end),
        ],
        cloud_calls: calls,
        api_requests: api,
        resources,
        inventory: vec![CloudResource {
            account: "default".into(),
            kind: "Bucket".into(),
            name: "leaked-0".into(),
            owner: None,
        }],
        custom_resources: Vec::<CustomResource>::new(),
        provider_metrics: Some(standard_metrics(api_count)),
        run: RunInfo {
            harness: env!("CARGO_PKG_VERSION").to_owned(),
            api_requests_measured_by:
                "mock-apiserver's request journal: every request, exact times".to_owned(),
            started_at: Some("2026-11-24T10:00:00Z".to_owned()),
            ..RunInfo::default()
        },
        partial: false,
        stopped: None,
        kills: Vec::new(),
        phase_audits: Vec::new(),
        memory: Vec::new(),
    }
}

/// The smoke run interrupted by SIGTERM during its hold: the hold is cut short, resync and
/// delete never ran.
pub fn interrupted_observations() -> Observations {
    let mut obs = smoke_observations();
    let hold = obs.phases[1].clone();
    let cut = hold.start_us + (hold.end_us - hold.start_us) / 2;
    obs.phases.truncate(2);
    obs.phases[1].end_us = cut;
    obs.phases[1].completed = false;
    obs.cloud_calls.retain(|c| c.at_us <= cut);
    obs.api_requests.retain(|a| a.at_us <= cut);
    obs.duration_us = cut;
    for r in &mut obs.resources {
        r.deleted_us = None;
        r.gone_us = None;
    }
    obs.partial = true;
    obs.stopped = Some(Stopped {
        phase: "hold".into(),
        cause: StopCause::Interrupted(Signal::Sigterm),
        waiting: None,
    });
    obs
}

/// The smoke run whose create timed out: its last 12 buckets never became Ready (their
/// ProviderConfig cannot be found; the last one was never reconciled), so hold, resync and
/// delete never ran.
pub fn timed_out_observations() -> Observations {
    let mut obs = smoke_observations();
    let end = obs.phases[0].end_us;
    obs.phases.truncate(1);
    obs.phases[0].completed = false;
    obs.cloud_calls.retain(|c| c.at_us <= end);
    obs.api_requests.retain(|a| a.at_us <= end);
    obs.duration_us = end;
    for (i, r) in obs.resources.iter_mut().enumerate() {
        if i >= 88 {
            r.ready_us = None;
        }
        r.deleted_us = None;
        r.gone_us = None;
    }
    let condition = |kind: &str, reason: &str, message: &str| Condition {
        kind: kind.into(),
        status: "False".into(),
        reason: reason.into(),
        message: message.into(),
    };
    let first = (88..98)
        .map(|i| Pending {
            kind: "Bucket".into(),
            name: format!("bucket-{i}"),
            conditions: if i == 97 {
                Vec::new()
            } else {
                vec![
                    condition(
                        "Synced",
                        "ReconcileError",
                        "connect failed: cannot get ProviderConfig \"team-b\": not found",
                    ),
                    condition("Ready", "Creating", ""),
                ]
            },
            composite: false,
        })
        .collect();
    obs.partial = true;
    obs.stopped = Some(Stopped {
        phase: "create".into(),
        cause: StopCause::TimedOut,
        waiting: Some(Waiting {
            until: "Ready".into(),
            of: 100,
            pending: 12,
            first,
        }),
    });
    obs
}
