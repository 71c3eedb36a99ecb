//! What a run is told by its arguments and environment, and the args patch.

use super::*;

fn settings(flags: &[&str], vars: &[(&str, &str)]) -> Result<Settings, String> {
    let env = Env::fixed(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let flags: Vec<String> = flags.iter().map(|f| (*f).to_owned()).collect();
    Settings::new(
        &step::workspace_root(),
        "scenarios/smoke.yaml",
        &flags,
        &env,
    )
    .map_err(|e| e.to_string())
}

#[test]
fn the_defaults_are_run_sh_s() {
    let s = settings(&[], &[]).unwrap();
    assert_eq!(
        s,
        Settings {
            scenario: "scenarios/smoke.yaml".to_owned(),
            flags: vec![],
            sets: vec![],
            cluster: "loadtest".to_owned(),
            keep_cluster: false,
            kind_image: None,
            kind_config: "ci/kind/cluster.yaml".to_owned(),
            manifests: "ci/manifests".to_owned(),
            out_dir: "out/kind/smoke".to_owned(),
            log_dir: "out/kind/smoke/logs".to_owned(),
            harness: None,
            built_harness: "target/release/harness".to_owned(),
            skip_build: false,
            skip_load: false,
            image_tag: "dev".to_owned(),
            cloud_port: 18080,
            metrics_port: 18081,
            wait_timeout: "180s".to_owned(),
        }
    );
    // Empty values count as unset; only 1 turns a switch on.
    let s = settings(
        &[],
        &[
            ("CLUSTER_NAME", ""),
            ("KEEP_CLUSTER", "yes"),
            ("SKIP_BUILD", "1"),
        ],
    )
    .unwrap();
    assert_eq!(
        (s.cluster.as_str(), s.keep_cluster, s.skip_build),
        ("loadtest", false, true)
    );
    let s = settings(&[], &[("CARGO_TARGET_DIR", "/t"), ("OUT_DIR", "o")]).unwrap();
    assert_eq!(
        (s.built_harness.as_str(), s.log_dir.as_str()),
        ("/t/release/harness", "o/logs")
    );
}

#[test]
fn set_flags_reach_provider_args_and_the_flags_the_run_sets_are_refused() {
    let s = settings(
        &["--duration", "5m", "--set", "a=1", "--set=b=2", "-v"],
        &[],
    )
    .unwrap();
    assert_eq!(s.sets, ["--set", "a=1", "--set=b=2"]);
    assert_eq!(
        s.flags,
        ["--duration", "5m", "--set", "a=1", "--set=b=2", "-v"]
    );
    assert_eq!(
        settings(&["--set"], &[]).unwrap_err(),
        "--set needs PATH=VALUE"
    );
    for flag in ["--out", "--out=x", "--kubeconfig", "--cloud-url=http://x"] {
        let name = flag.split('=').next().unwrap();
        assert_eq!(
            settings(&[flag], &[]).unwrap_err(),
            format!("{name} is set by cargo xtask kind (use OUT_DIR for the reports)")
        );
    }
    assert_eq!(
        settings(&[], &[("CLOUD_PORT", "http")]).unwrap_err(),
        "CLOUD_PORT=http is not a port number"
    );
    let env = Env::fixed([]);
    let err = Settings::new(&step::workspace_root(), "scenarios/nope.yaml", &[], &env);
    assert_eq!(
        err.unwrap_err().to_string(),
        "no such scenario file: scenarios/nope.yaml"
    );
}

#[test]
fn the_args_patch_replaces_the_container_s_args_and_nothing_else() {
    assert_eq!(
        args_patch(r#"["--max-reconcile-rate=7", "--poll-interval=20s"]"#).unwrap(),
        PATCH.split_once(" -p ").unwrap().1
    );
    assert!(
        args_patch("--max-reconcile-rate=7")
            .unwrap_err()
            .contains("not JSON")
    );
    assert!(
        args_patch(r#"{"a": 1}"#)
            .unwrap_err()
            .contains("not an array of strings")
    );
    assert!(
        args_patch("[1]")
            .unwrap_err()
            .contains("not an array of strings")
    );
}
