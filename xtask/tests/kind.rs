//! The `xtask` binary itself, as `cargo xtask kind` runs it: its help, and a real SIGINT
//! sent to it (to it alone, not to its process group) while the harness runs, with the
//! tools stubbed as in the crate's unit tests (src/kind/tests/stubs.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../src/kind/tests/stubs.rs"]
mod stubs;

fn xtask() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_xtask"));
    c.stdin(Stdio::null());
    c
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        let dir = std::env::temp_dir().join(format!("xtask-kind-it-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_help_explains_the_command_and_its_environment() {
    let out = xtask().arg("--help").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kind         One scenario against a kind cluster"),
        "{text}"
    );
    assert!(text.contains("kind-images  Builds the images"), "{text}");
    let out = xtask().args(["kind", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for needed in [
        "Usage: cargo xtask kind <SCENARIO> [HARNESS_RUN_FLAGS]...",
        "CLUSTER_NAME",
        "KEEP_CLUSTER",
        "KIND_IMAGE",
        "KIND_CONFIG",
        "MANIFESTS",
        "OUT_DIR",
        "HARNESS",
        "SKIP_BUILD",
        "SKIP_LOAD",
        "IMAGE_TAG",
        "CLOUD_PORT",
        "METRICS_PORT",
        "WAIT_TIMEOUT",
        "port-forward",
        "130 on Ctrl-C",
    ] {
        assert!(text.contains(needed), "no {needed} in {text}");
    }
}

#[test]
fn a_sigint_stops_the_harness_collects_the_logs_and_deletes_the_cluster() {
    let scratch = Scratch::new();
    let dir = &scratch.0;
    let bin = dir.join("bin");
    stubs::write(&bin);
    let at = |p: &str| dir.join(p);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut child = xtask()
        .args([
            "kind",
            "scenarios/smoke.yaml",
            "--set",
            "provider.maxReconcileRate=7",
        ])
        .env("PATH", path)
        .env("STUB_BIN", &bin)
        .env("STUB_CALLS", at("calls"))
        .env("STUB_PIDS", at("pids"))
        .env("STUB_STATE", at("state"))
        .env("STUB_HARNESS_WAITS", "1")
        .env("HARNESS", bin.join("harness"))
        .env("OUT_DIR", at("out"))
        .env("CLUSTER_NAME", "stub")
        .env("CLOUD_PORT", stubs::answering_port().to_string())
        .env("METRICS_PORT", stubs::answering_port().to_string())
        .env_remove("KEEP_CLUSTER")
        .env_remove("SKIP_BUILD")
        .env_remove("SKIP_LOAD")
        .env_remove("STUB_FAIL")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let harness = at("state/harness.pid");
    wait_for("the harness's run", Duration::from_secs(60), || {
        harness.exists()
    });
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut status = None;
    wait_for("the end of the run", Duration::from_secs(60), || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(130));
    // The harness got the signal passed on and exited by itself.
    let stopped = std::fs::read_to_string(at("out/harness-stopped")).unwrap();
    assert_eq!(stopped, "stopped\n");
    let calls = std::fs::read_to_string(at("calls")).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    let position = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix));
    let (run, export, delete) = (
        position("harness run").unwrap(),
        position("kind export logs --name stub").unwrap(),
        position("kind delete cluster --name stub").unwrap(),
    );
    assert!(run < export && export < delete, "{calls}");
    assert_eq!(
        lines.last(),
        Some(&"kind delete cluster --name stub"),
        "{calls}"
    );
    let pids = std::fs::read_to_string(at("pids")).unwrap();
    assert_eq!(
        pids.lines().count(),
        4,
        "two followers, two port-forwards: {pids}"
    );
    for pid in pids.lines() {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} left running"
        );
    }
}
