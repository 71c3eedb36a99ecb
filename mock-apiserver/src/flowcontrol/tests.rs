//! API Priority and Fairness on paused time: classification by the bootstrap schemas,
//! seats, queues, rejections and the `apiserver_flowcontrol_*` series.

use std::sync::Arc;
use std::time::Duration;

use super::apf::{Apf, Reason};
use super::config::{LevelKind, PriorityAndFairness, RequestDigest, deal, hash_flow};
use crate::identity::User;

fn digest<'a>(
    user: &'a User,
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    ns: &'a str,
) -> RequestDigest<'a> {
    RequestDigest {
        user,
        resource_request: true,
        verb,
        api_group: group,
        resource,
        subresource: "",
        namespace: ns,
        path: "",
    }
}

fn sa(ns: &str, name: &str) -> User {
    User::new(format!("system:serviceaccount:{ns}:{name}"), [])
}

/// One limited level `test` of one seat (server limit 2, shared with catch-all), with
/// one queue of two places, for user `tester`.
fn one_seat(queues: u32, hand_size: u32, queue_length_limit: u32) -> Arc<Apf> {
    let mut config = PriorityAndFairness::mandatory_only()
        .with_server_concurrency_limit(2)
        .with_request_wait_limit(Duration::from_secs(15));
    config
        .add_objects_yaml(&format!(
            "apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {{name: test}}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: 5
    limitResponse:
      type: Queue
      queuing: {{queues: {queues}, handSize: {hand_size}, queueLengthLimit: {queue_length_limit}}}
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {{name: test}}
spec:
  priorityLevelConfiguration: {{name: test}}
  matchingPrecedence: 500
  distinguisherMethod: {{type: ByUser}}
  rules:
  - subjects:
    - {{kind: Group, group: {{name: testers}}}}
    resourceRules:
    - {{verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true}}
"
        ))
        .unwrap();
    assert_eq!(
        config.nominal_limits(),
        [
            ("exempt".to_owned(), None),
            ("catch-all".to_owned(), Some(1)),
            ("test".to_owned(), Some(1))
        ]
    );
    Arc::new(Apf::new(config))
}

fn tester(name: &str) -> User {
    User::new(name, ["testers".to_owned()])
}

#[test]
fn the_bootstrap_levels_get_their_share_of_600_seats() {
    // ceil(600 × shares ÷ 245), apf_controller.go finishQueueSetReconfigsLocked.
    let limits = PriorityAndFairness::default().nominal_limits();
    let limit = |name: &str| limits.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(limit("exempt"), None);
    assert_eq!(limit("catch-all"), Some(13));
    assert_eq!(limit("system"), Some(74));
    assert_eq!(limit("node-high"), Some(98));
    assert_eq!(limit("leader-election"), Some(25));
    assert_eq!(limit("workload-high"), Some(98));
    assert_eq!(limit("workload-low"), Some(245));
    assert_eq!(limit("global-default"), Some(49));
}

#[tokio::test(start_paused = true)]
async fn requests_are_classified_by_the_bootstrap_flow_schemas() {
    // apis/flowcontrol/bootstrap/default.go.
    let apf = Arc::new(Apf::new(PriorityAndFairness::default()));
    let classify = async |d: RequestDigest<'_>| {
        let (_, c) = apf.admit(&d).await.unwrap();
        (c.flow_schema, c.priority_level)
    };
    let pair = |fs: &str, pl: &str| (fs.to_owned(), pl.to_owned());
    let admin = User::new("admin", ["system:masters".to_owned()]);
    let provider = sa("crossplane-system", "provider-aws");
    let kube_system = sa("kube-system", "generic-garbage-collector");
    let kcm = User::new("system:kube-controller-manager", []);
    let anonymous = User::anonymous();
    let cases = [
        // (user, verb, group, resource, namespace) → (flow schema, priority level)
        (
            (&admin, "create", "", "configmaps", "default"),
            ("exempt", "exempt"),
        ),
        (
            (&provider, "patch", "s3.aws.example.org", "buckets", ""),
            ("service-accounts", "workload-low"),
        ),
        (
            (
                &kube_system,
                "update",
                "coordination.k8s.io",
                "leases",
                "kube-system",
            ),
            ("system-leader-election", "leader-election"),
        ),
        (
            (&kube_system, "list", "", "configmaps", "default"),
            ("kube-system-service-accounts", "workload-high"),
        ),
        (
            (&kcm, "get", "coordination.k8s.io", "leases", "kube-system"),
            ("system-leader-election", "leader-election"),
        ),
        (
            (&kcm, "list", "apps", "deployments", ""),
            ("kube-controller-manager", "workload-high"),
        ),
        (
            (&anonymous, "list", "", "pods", "default"),
            ("global-default", "global-default"),
        ),
    ];
    for ((user, verb, group, resource, namespace), (fs, pl)) in cases {
        assert_eq!(
            classify(digest(user, verb, group, resource, namespace)).await,
            pair(fs, pl),
            "{verb} {group}/{resource} in {namespace:?}"
        );
    }
    let mut probe = digest(&anonymous, "get", "", "", "");
    probe.resource_request = false;
    probe.path = "/readyz";
    assert_eq!(classify(probe).await, pair("probes", "exempt"));
    let mut version = digest(&anonymous, "get", "", "", "");
    version.resource_request = false;
    version.path = "/version";
    assert_eq!(
        classify(version).await,
        pair("global-default", "global-default")
    );
}

#[test]
fn shuffle_sharding_deals_distinct_queues_from_the_flow_hash() {
    for distinguisher in ["alice", "bob", "system:serviceaccount:a:b", ""] {
        let hash = hash_flow("service-accounts", distinguisher);
        let hand = deal(hash, 128, 6);
        assert_eq!(hand.len(), 6);
        assert!(hand.iter().all(|q| *q < 128));
        let mut sorted = hand.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 6, "{hand:?}");
        assert_eq!(deal(hash, 128, 6), hand, "one flow, one hand");
    }
    // Dealer.Deal: the first card is hash mod deck; each next one skips the cards dealt.
    assert_eq!(deal(0, 8, 3), [0, 1, 2]);
    assert_eq!(deal(7 + 8 * 6, 8, 2), [7, 6]);
}

#[tokio::test(start_paused = true)]
async fn excess_requests_wait_in_their_queue_then_are_rejected_when_it_is_full_or_they_wait_too_long()
 {
    // queueset.go: every request is queued; with the seat taken, a full queue rejects
    // (queue-full); a request not dispatched within the wait limit is rejected
    // (time-out); a freed seat goes to the head of a queue.
    let apf = one_seat(1, 1, 2);
    let alice = tester("alice");
    let running = apf
        .admit(&digest(&alice, "list", "", "pods", "a"))
        .await
        .unwrap();
    let mut waiting = Vec::new();
    for _ in 0..2 {
        let apf = apf.clone();
        let alice = alice.clone();
        waiting.push(tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let result = apf.admit(&digest(&alice, "list", "", "pods", "a")).await;
            (result.map(|(_, c)| c.priority_level), started.elapsed())
        }));
    }
    tokio::task::yield_now().await;
    let text = apf.prometheus_text();
    assert!(
        text.contains("apiserver_flowcontrol_current_inqueue_requests{flow_schema=\"test\",priority_level=\"test\"} 2\n"),
        "{text}"
    );
    let full = apf
        .admit(&digest(&alice, "list", "", "pods", "a"))
        .await
        .unwrap_err();
    assert_eq!(full.reason, Reason::QueueFull);
    assert_eq!(full.retry_after_secs, 1);
    assert_eq!(full.classification.priority_level, "test");

    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(running);
    // The first waiter runs now, after 1 s; it holds its seat until its task drops it,
    // which it did when it returned: so the second runs too.
    let first = waiting.remove(0).await.unwrap();
    assert_eq!(first.0.as_deref(), Ok("test"));
    assert_eq!(first.1, Duration::from_secs(1));

    // Hold the seat again and let a new waiter time out after 15 s.
    let second = waiting.remove(0).await.unwrap();
    assert_eq!(second.0.as_deref(), Ok("test"));
    let held = apf
        .admit(&digest(&alice, "list", "", "pods", "a"))
        .await
        .unwrap();
    let late = {
        let apf = apf.clone();
        let alice = alice.clone();
        tokio::spawn(async move {
            apf.admit(&digest(&alice, "list", "", "pods", "a"))
                .await
                .map(|_| ())
        })
    };
    tokio::time::sleep(Duration::from_secs(16)).await;
    let timed_out = late.await.unwrap().unwrap_err();
    assert_eq!(timed_out.reason, Reason::TimeOut);
    drop(held);

    let text = apf.prometheus_text();
    for line in [
        "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"test\",priority_level=\"test\"} 4\n",
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"test\",priority_level=\"test\",reason=\"queue-full\"} 1\n",
        "apiserver_flowcontrol_rejected_requests_total{flow_schema=\"test\",priority_level=\"test\",reason=\"time-out\"} 1\n",
        "apiserver_flowcontrol_current_inqueue_requests{flow_schema=\"test\",priority_level=\"test\"} 0\n",
        "apiserver_flowcontrol_current_executing_requests{flow_schema=\"test\",priority_level=\"test\"} 0\n",
        // Four ran: two at once (0 s), one after 1 s, one after 1 s (queued behind it).
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"true\",flow_schema=\"test\",priority_level=\"test\",le=\"0\"} 2\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"true\",flow_schema=\"test\",priority_level=\"test\",le=\"1\"} 4\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_count{execute=\"true\",flow_schema=\"test\",priority_level=\"test\"} 4\n",
        // Rejected: one at once (queue full), one after 15 s.
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"false\",flow_schema=\"test\",priority_level=\"test\",le=\"0\"} 1\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"false\",flow_schema=\"test\",priority_level=\"test\",le=\"10\"} 1\n",
        "apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute=\"false\",flow_schema=\"test\",priority_level=\"test\",le=\"15\"} 2\n",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"test\"} 1\n",
        "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"exempt\"} 0\n",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}

#[tokio::test(start_paused = true)]
async fn exempt_requests_are_never_queued_or_rejected() {
    let apf = one_seat(1, 1, 1);
    let alice = tester("alice");
    let _held = apf
        .admit(&digest(&alice, "list", "", "pods", "a"))
        .await
        .unwrap();
    let admin = User::new("root", ["system:masters".to_owned(), "testers".to_owned()]);
    let mut seats = Vec::new();
    for _ in 0..1000 {
        let (seat, c) = apf
            .admit(&digest(&admin, "create", "", "pods", "a"))
            .await
            .expect("exempt");
        assert_eq!(c.priority_level, "exempt");
        seats.push(seat);
    }
    let text = apf.prometheus_text();
    assert!(
        text.contains("apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"exempt\",priority_level=\"exempt\"} 1000\n"),
        "{text}"
    );
    assert!(
        text.contains("apiserver_flowcontrol_current_executing_requests{flow_schema=\"exempt\",priority_level=\"exempt\"} 1000\n"),
        "{text}"
    );
    assert!(!text.contains("reason="), "nothing rejected: {text}");
    assert!(
        !text.contains("flow_schema=\"exempt\",priority_level=\"exempt\",le="),
        "exempt requests are not timed as waiting"
    );
}

#[tokio::test(start_paused = true)]
async fn a_reject_level_refuses_beyond_its_seats_and_retry_after_grows_while_it_keeps_dropping() {
    // catch-all: Reject, 13 of 600 seats. dropped_requests_tracker.go: retryAfter
    // doubles when a level dropped at least 3 × retryAfter in the last retryAfter seconds.
    let mut config = PriorityAndFairness::default();
    config
        .flow_schemas
        .retain(|s| s.name == "exempt" || s.name == "catch-all");
    let apf = Arc::new(Apf::new(config));
    let user = User::new("someone", []);
    let mut held = Vec::new();
    for _ in 0..13 {
        held.push(
            apf.admit(&digest(&user, "get", "", "pods", "a"))
                .await
                .unwrap(),
        );
    }
    let mut retry_afters = Vec::new();
    for _ in 0..4 {
        for _ in 0..4 {
            let r = apf
                .admit(&digest(&user, "get", "", "pods", "a"))
                .await
                .unwrap_err();
            assert_eq!(r.reason, Reason::ConcurrencyLimit);
            assert_eq!(r.classification.flow_schema, "catch-all");
            retry_afters.push(r.retry_after_secs);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Second 1 sees 4 ≥ 3 × 1 dropped in the last second: 2. Second 2 sees 8 in the
    // last two, but the last increase was under 2 s ago. Second 3: 8 ≥ 3 × 2: 4.
    assert_eq!(
        retry_afters,
        [1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 4, 4, 4, 4]
    );
    assert!(matches!(
        PriorityAndFairness::default().priority_levels[0].kind,
        LevelKind::Exempt
    ));
}

#[tokio::test(start_paused = true)]
async fn a_freed_seat_goes_to_the_flow_that_has_had_less_not_to_the_longest_queue() {
    // Fair queuing: with alice's queue holding many requests and bob's one, bob's request
    // is dispatched at the second free seat, not after all of alice's.
    let apf = one_seat(8, 1, 50);
    let (alice, bob) = (tester("alice"), tester("bob"));
    let hand = |u: &str| deal(hash_flow("test", u), 8, 1)[0];
    assert_ne!(
        hand("alice"),
        hand("bob"),
        "the two flows have their own queues"
    );
    let first = apf
        .admit(&digest(&alice, "list", "", "pods", "a"))
        .await
        .unwrap();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for (i, user) in [&alice, &alice, &alice, &alice, &bob]
        .into_iter()
        .enumerate()
    {
        let (apf, user, order) = (apf.clone(), user.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let seat = apf
                .admit(&digest(&user, "list", "", "pods", "a"))
                .await
                .unwrap();
            order.lock().unwrap().push(format!("{}{i}", user.name));
            tokio::time::sleep(Duration::from_secs(1)).await;
            drop(seat);
        }));
        tokio::task::yield_now().await;
    }
    drop(first);
    for task in tasks {
        task.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    let bob_at = order.iter().position(|o| o.starts_with("bob")).unwrap();
    assert!(bob_at <= 1, "{order:?}");
}
