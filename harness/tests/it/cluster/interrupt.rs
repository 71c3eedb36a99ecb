//! Ctrl-C twice in a cluster run, sent as SIGINT to the harness process: the first stops
//! the phases and starts the clean-up, which shows where it stands and the time left; the
//! second leaves the rest and says what stays in the cluster.

use std::process::Command;
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams};

use super::procs::Proc;
use super::{Cluster, scenario};

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid}");
}

/// Waits (at most `within`) until the harness's standard error has a line holding `text`;
/// returns that line.
fn wait_for_line(cluster: &Cluster, text: &str, within: Duration) -> String {
    let err = wait_for_err(cluster, text, within);
    err.lines()
        .find(|l| l.contains(text))
        .expect("the text is in a line")
        .to_owned()
}

/// Waits (at most `within`) until the harness's standard error holds `text`; returns it.
fn wait_for_err(cluster: &Cluster, text: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let err = std::fs::read_to_string(cluster.dir.join("harness.err")).unwrap_or_default();
        if err.contains(text) {
            return err;
        }
        assert!(Instant::now() < deadline, "no {text:?} in:\n{err}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Each Bucket gets a finalizer of the test's own during the hold, so the clean-up waits
/// on them: its progress line says none is gone yet; once the test lets two go, the next
/// says so with the time left at that pace; the second Ctrl-C names the Buckets and the
/// seeded objects left behind.
#[test]
fn a_second_ctrl_c_leaves_the_clean_up_and_says_what_stays_in_the_cluster() {
    let cluster = Cluster::start("cluster-interrupt");
    let scenario = scenario()
        .replace("  - {name: restart, action: restart, timeout: 60s}\n", "")
        .replace("count: 20", "count: 5")
        .replace("duration: 3s", "duration: 120s");
    // Killed if the test fails before it ends.
    let mut harness = Proc(
        cluster
            .harness_command("run", &scenario, &[])
            .spawn()
            .expect("harness starts"),
    );
    let pid = harness.0.id();
    wait_for_err(&cluster, "(hold): started", Duration::from_secs(90));
    let s = harness::scenario::parse(&scenario, "scenario.yaml").expect("valid");
    let info = harness::run::objects::kind_info(harness::scenario::Kind::Bucket, "");
    let buckets: Api<DynamicObject> = Api::namespaced_with(
        cluster.client.clone(),
        &harness::run::objects::namespace(&s),
        &info.resource,
    );
    let held = serde_json::json!({"metadata": {"finalizers": ["test.loadtest/hold"]}});
    for i in 0..s.groups[0].count {
        let name = s.groups[0].resource_name(i, &s.name);
        cluster
            .runtime
            .block_on(buckets.patch(&name, &PatchParams::default(), &Patch::Merge(&held)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    signal(pid, "INT");
    let err = wait_for_err(
        &cluster,
        "cleaning up: deleting 5 resources",
        Duration::from_secs(30),
    );
    assert!(
        err.contains("Ctrl-C again leaves the rest and lists it"),
        "{err}"
    );
    // Without a terminal the clean-up prints where it stands every 5 s.
    let progress = wait_for_line(
        &cluster,
        "cleanup (delete): 0/5 after",
        Duration::from_secs(15),
    );
    assert!(
        progress.ends_with(", waiting for the provider to release the first"),
        "{progress}"
    );
    // Two let go: the next line has the pace, and the time left at it.
    let free = serde_json::json!({"metadata": {"finalizers": []}});
    for i in 0..2 {
        let name = s.groups[0].resource_name(i, &s.name);
        cluster
            .runtime
            .block_on(buckets.patch(&name, &PatchParams::default(), &Patch::Merge(&free)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let estimate = wait_for_line(
        &cluster,
        "cleanup (delete): 2/5 after",
        Duration::from_secs(15),
    );
    let left: f64 = estimate
        .split_once(", about ")
        .and_then(|(_, rest)| rest.strip_suffix("s left"))
        .unwrap_or_else(|| panic!("no time left in {estimate:?}"))
        .parse()
        .unwrap();
    // Two of five gone in the time so far: the three left take 1.5 times as long (the
    // estimate made within the 250 ms before the line, its time since the bar began; the
    // line shows that time rounded to a tenth, so the estimate's may be up to 0.05 s past
    // it: "after 10.0s, about 16s left" is 10.04 s × 1.5 rounded up).
    let after: f64 = estimate
        .split_once(" after ")
        .and_then(|(_, rest)| rest.split_once("s,"))
        .unwrap()
        .0
        .parse()
        .unwrap();
    assert!(
        ((after - 0.5) * 1.5).ceil() <= left && left <= ((after + 0.05) * 1.5).ceil(),
        "{estimate}"
    );
    signal(pid, "INT");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = harness.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the harness did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    let err = std::fs::read_to_string(cluster.dir.join("harness.err")).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("cleanup interrupted: "))
        .unwrap_or_else(|| panic!("no cleanup interrupted line in:\n{err}"));
    // The three Buckets still held, then the seeded objects (ProviderConfig, Secret,
    // namespace).
    assert!(
        line.contains("objects the run created are left in the cluster: Bucket "),
        "{line}"
    );
    eprintln!("{progress}\n{estimate}\n{line}");
    let buckets = line.matches("Bucket ").count();
    assert_eq!(buckets, 3, "{line}");
    let left: usize = line
        .trim_start_matches("cleanup interrupted: ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(left > buckets, "the seeded objects are named too: {line}");
    assert!(cluster.secret_exists("mock-cloud-team-a"), "{line}");
}
