//! Whole runs against the stubs: the commands in order, the files left, the failure paths
//! and the cleanup after each.

use super::*;

#[test]
fn a_new_cluster_is_created_run_against_and_deleted() {
    let f = Fake::new();
    assert_eq!(f.run(&Interrupt::default()), Ok(0));
    let expected = concat(
        &[&steps_to_the_harness(&f), &collecting()],
        &["kind delete cluster --name stub"],
    );
    assert_eq!(f.steps(), expected);
    assert_eq!(background(&f), expected_background(&f));
    // The followers start after the apply, the port-forwards after the rollouts. A
    // background stub appends its call when its shell gets to it, which may be after the
    // next steps' calls: only "started after" is in the calls file's order (the
    // port-forwards are up before the harness runs: their logs below).
    let calls = f.calls();
    let at = |what: &str| calls.iter().position(|c| c.contains(what)).unwrap();
    assert!(at("apply -k") < at("logs --follow"));
    assert!(at("rollout status deployment/provider") < at(" port-forward "));

    assert_eq!(f.read_out("junit.xml"), "<testsuites/>\n");
    assert_eq!(
        f.read_out("logs/provider-args.json"),
        "[\"--max-reconcile-rate=7\",\"--poll-interval=20s\"]\n"
    );
    assert_eq!(
        f.read_out("logs/versions.txt"),
        "Client Version: v1.33.7 (stub)\nkind v0.31.0 (stub)\n"
    );
    assert!(
        f.read_out("logs/cluster-state.txt")
            .starts_with("state of -n loadtest-system get")
    );
    assert!(
        f.read_out("logs/describe.txt")
            .starts_with("state of -n loadtest-system describe")
    );
    for app in ["provider", "mock-cloud"] {
        assert_eq!(
            f.read_out(&format!("logs/{app}.log")),
            format!("{app}: a log line\n")
        );
        assert!(!f.out().join(format!("logs/{app}.previous.log")).exists());
        let forward = f.read_out(&format!("logs/port-forward-{app}.log"));
        assert_eq!(forward, "Forwarding from 127.0.0.1 -> 8080\n");
    }
    assert!(
        !f.out().join("logs/kind").exists(),
        "kind's logs only after a failure"
    );

    // The kubeconfig was a private file outside OUT_DIR, removed at the end.
    let kubeconfig = PathBuf::from(f.read_state("harness-kubeconfig").unwrap());
    assert!(!kubeconfig.starts_with(f.out()) && kubeconfig.ends_with("kubeconfig"));
    assert!(!kubeconfig.parent().unwrap().exists());
    assert!(
        !all_text(&f.out()).contains("client-key-data"),
        "a kubeconfig in the reports"
    );
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn the_harness_s_exit_code_is_the_run_s_and_a_failed_run_keeps_kind_s_logs() {
    let mut f = Fake::new();
    f.set("STUB_HARNESS_EXIT", "1");
    assert_eq!(f.run(&Interrupt::default()), Ok(1));
    assert_eq!(f.steps(), whole_run(&f));
    assert_eq!(f.read_out("logs/kind/kind.log"), "node logs\n");
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn an_existing_cluster_is_reused_and_left_running_and_prebuilt_images_are_not_touched() {
    let mut f = Fake::new();
    f.set("STUB_CLUSTERS", "other stub")
        .set("SKIP_BUILD", "1")
        .set("SKIP_LOAD", "1");
    assert_eq!(f.run(&Interrupt::default()), Ok(0));
    let steps = f.steps();
    for absent in [
        "docker ",
        "kind create",
        "kind load",
        "kind delete",
        "kind export logs",
    ] {
        assert!(
            !steps.iter().any(|c| c.starts_with(absent)),
            "{absent}: {steps:#?}"
        );
    }
    let expected: Vec<String> = steps_to_the_harness(&f)
        .into_iter()
        .filter(|c| {
            !c.starts_with("docker ")
                && !c.starts_with("kind create")
                && !c.starts_with("kind load")
        })
        .chain(collecting())
        .collect();
    assert_eq!(steps, expected);
}

#[test]
fn the_environment_names_the_node_image_the_manifests_the_tag_and_keeps_the_cluster() {
    let mut f = Fake::new();
    f.set("KEEP_CLUSTER", "1")
        .set("KIND_IMAGE", "kindest/node:v1.33.7")
        .set("KIND_CONFIG", "ci/kind/other.yaml")
        .set("MANIFESTS", "deploy/loadtest")
        .set("IMAGE_TAG", "t1");
    assert_eq!(f.run(&Interrupt::default()), Ok(0));
    let steps = f.steps();
    for call in [
        "docker build --file ci/docker/provider.Dockerfile --tag loadtest/provider:t1 .",
        "kind create cluster --name stub --config ci/kind/other.yaml --image kindest/node:v1.33.7 --wait 120s",
        "kind load docker-image --name stub loadtest/provider:t1 loadtest/mock-cloud:t1",
        "kubectl apply -k deploy/loadtest",
    ] {
        assert!(steps.iter().any(|c| c == call), "no {call} in {steps:#?}");
    }
    assert!(
        !steps.iter().any(|c| c.starts_with("kind delete")),
        "{steps:#?}"
    );
}

#[test]
fn the_harness_is_built_when_none_is_given() {
    let mut f = Fake::new();
    let target = f.dir.0.join("target").display().to_string();
    f.vars.remove("HARNESS");
    f.set("CARGO_TARGET_DIR", &target);
    assert_eq!(f.run(&Interrupt::default()), Ok(0));
    let expected = concat(
        &[
            &["cargo build --release --locked -p harness".to_owned()],
            &steps_to_the_harness(&f),
            &collecting(),
        ],
        &["kind delete cluster --name stub"],
    );
    assert_eq!(f.steps(), expected);
    assert!(Path::new(&target).join("release/harness").is_file());
}

#[test]
fn a_missing_tool_stops_before_anything_runs() {
    let mut f = Fake::new();
    std::fs::remove_file(f.dir.0.join("bin/kubectl")).unwrap();
    let bin = f.dir.0.join("bin").display().to_string();
    f.set("PATH", &bin);
    let err = f.run(&Interrupt::default()).unwrap_err();
    assert_eq!(
        err,
        "kubectl is not installed (cargo xtask kind needs docker, kind and kubectl)"
    );
    assert_eq!(f.calls(), Vec::<String>::new());
    assert!(!f.out().exists());
}

#[test]
fn a_failing_step_stops_the_run_and_the_cleanup_still_runs() {
    let mut f = Fake::new();
    f.set("STUB_FAIL", "kubectl apply -k");
    assert_eq!(f.run(&Interrupt::default()), Ok(2));
    let upto = steps_to_the_harness(&f);
    let applied = upto
        .iter()
        .position(|c| c.starts_with("kubectl apply -k"))
        .unwrap();
    // No follower ran, so the logs are taken as they are at the end.
    let logs = "--all-containers --timestamps --pod-running-timeout=2s";
    let expected = concat(
        &[&upto[..=applied], &collecting()],
        &[
            &format!("kubectl -n loadtest-system logs deployment/provider {logs}"),
            &format!("kubectl -n loadtest-system logs deployment/mock-cloud {logs}"),
        ],
    );
    let expected = [expected, teardown(&f)].concat();
    assert_eq!(f.steps(), expected);
    assert!(
        background(&f).is_empty(),
        "nothing follows or forwards before the apply"
    );
    assert!(
        f.read_out("logs/provider.log")
            .starts_with("logs of -n loadtest-system logs")
    );
    assert!(!f.out().join("junit.xml").exists());
}

#[test]
fn a_cluster_that_cannot_be_created_is_deleted_with_nothing_to_collect() {
    let mut f = Fake::new();
    f.set("STUB_FAIL", "kind create");
    assert_eq!(f.run(&Interrupt::default()), Ok(2));
    let upto = steps_to_the_harness(&f);
    let expected = [&upto[..6], &teardown(&f)].concat();
    assert_eq!(f.steps(), expected);
    assert!(!f.out().join("logs/cluster-state.txt").exists());
}

#[test]
fn a_port_forward_that_ends_is_started_again() {
    let mut f = Fake::new();
    f.set("STUB_FORWARD_DIES", "mock-cloud");
    assert_eq!(f.run(&Interrupt::default()), Ok(0));
    assert_eq!(f.read_state("forward-mock-cloud").as_deref(), Some("2"));
    assert_eq!(f.read_state("forward-provider").as_deref(), Some("1"));
    let log = f.read_out("logs/port-forward-mock-cloud.log");
    assert!(
        log.starts_with(
            "error: lost connection to pod\n\
             cargo xtask kind: the port-forward to mock-cloud ended (exit status: 1) after "
        ) && log.ends_with("; started again in 0.0 s\nForwarding from 127.0.0.1 -> 8080\n"),
        "{log}"
    );
    assert_eq!(f.steps().last().unwrap(), "kind delete cluster --name stub");
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn a_port_forward_that_keeps_ending_is_given_up_and_the_harness_stopped() {
    let mut f = Fake::new();
    f.set("STUB_FORWARD_ENDS", "provider")
        .set("STUB_HARNESS_WAITS", "1");
    assert_eq!(f.run(&Interrupt::default()), Ok(2));
    assert_eq!(f.read_state("forward-provider").as_deref(), Some("3"));
    // The harness ran (the test answers the ports) until the port-forward was given up.
    assert_eq!(f.read_out("harness-stopped"), "stopped\n");
    let log = f.read_out("logs/port-forward-provider.log");
    assert!(
        log.ends_with(
            "cargo xtask kind: the port-forward to provider ended (exit status: 1), 3 times \
             in a row within 5.0 s of starting; not started again\n"
        ),
        "{log}"
    );
    let steps = f.steps();
    assert!(
        steps.iter().any(|c| c.starts_with("kind export logs")),
        "{steps:#?}"
    );
    assert_eq!(steps.last().unwrap(), "kind delete cluster --name stub");
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn a_forwarded_port_that_never_answers_stops_the_run_before_the_harness() {
    let mut f = Fake::new();
    let metrics = silent_port();
    f.ports(f.cloud_port, metrics);
    assert_eq!(f.run(&Interrupt::default()), Ok(2));
    let steps = f.steps();
    assert!(
        !steps.iter().any(|c| c.starts_with("harness run")),
        "{steps:#?}"
    );
    assert_eq!(steps.last().unwrap(), "kind delete cluster --name stub");
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn ctrl_c_stops_the_harness_then_collects_the_logs_and_deletes_the_cluster() {
    let mut f = Fake::new();
    f.set("STUB_HARNESS_WAITS", "1");
    let interrupt = Interrupt::default();
    let pid_file = f.dir.0.join("state/harness.pid");
    let ctrl_c = {
        let interrupt = interrupt.clone();
        std::thread::spawn(move || {
            while !pid_file.exists() {
                std::thread::sleep(Duration::from_millis(20));
            }
            interrupt.raise(INT);
        })
    };
    assert_eq!(f.run(&interrupt), Ok(130));
    ctrl_c.join().unwrap();
    // The harness got the SIGINT passed on, and wrote its reports before it exited.
    assert_eq!(f.read_out("harness-stopped"), "stopped\n");
    assert_eq!(f.steps(), whole_run(&f));
    assert_eq!(f.still_running(), Vec::<String>::new());
}

#[test]
fn a_real_sigint_is_noted_by_the_installed_handler() {
    let interrupt = Interrupt::install().unwrap();
    let status = std::process::Command::new("kill")
        .args(["-INT", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    for _ in 0..100 {
        if interrupt.signal().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(interrupt.signal(), Some(INT));
}
