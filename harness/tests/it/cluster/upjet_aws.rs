//! Providers the harness does not deploy, in cluster mode: the provider-upjet-aws
//! example's Deployment checked offline, and the AWS flavour calibrated.

use std::path::PathBuf;

#[cfg(feature = "aws")]
use super::Cluster;
#[cfg(feature = "aws")]
use crate::aws_flavour;

/// The provider-upjet-aws example (`ci/examples/provider-upjet-aws`): its scenario
/// validates, and its Deployment passes the checks a cluster run makes of it with the
/// options its README gives (the profile's flags read from the container's args, the
/// ServiceAccount), offline.
#[test]
fn the_upjet_example_overlays_deployment_passes_the_checks_of_a_cluster_run_of_its_scenario() {
    use harness::run::target::cluster::check_deployment;
    use k8s_openapi::api::apps::v1::Deployment;

    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ci/examples/provider-upjet-aws");
    let s = harness::scenario::load(&dir.join("scenario.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(dir.join("provider-aws-s3.yaml")).unwrap();
    let deployment: Deployment = text
        .split("\n---\n")
        .filter_map(|doc| serde_saphyr::from_str::<serde_json::Value>(doc).ok())
        .find(|d| d["kind"] == "Deployment")
        .map(|d| serde_json::from_value(d).unwrap())
        .expect("a Deployment");
    let options = harness::run::ClusterOptions {
        kubeconfig: PathBuf::from("kubeconfig"),
        context: None,
        cloud_url: "http://127.0.0.1:18080".to_owned(),
        provider_cloud_url: "http://mock-cloud.loadtest-system:8080".to_owned(),
        provider_metrics_url: None,
        provider_deployment: ("loadtest-system".to_owned(), "provider-aws-s3".to_owned()),
        provider_container: Some("provider-aws-s3".to_owned()),
        provider_service_account: Some("provider-aws-s3".to_owned()),
        keep: false,
        api_source: harness::run::source::ApiSource::Auto,
        settings_check: true,
        api_scrape_interval: std::time::Duration::from_secs(1),
        core: harness::run::core::cluster::CoreOptions::default(),
    };
    let mut notes = Vec::new();
    check_deployment(&s, &options, &deployment, &mut notes).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        notes[0].starts_with("the provider's container provider-aws-s3 runs with the profile's settings (upjet flags:"),
        "{notes:?}"
    );
}

/// Calibration in cluster mode of a provider the harness does not deploy: the AWS flavour
/// as separate processes, its profile's settings read from its Deployment's args, its
/// kinds named by `apiVersion` and `kind` only. Each kind's calls per path are the ones
/// `provider/README.md` documents.
#[cfg(feature = "aws")]
#[test]
fn the_aws_flavour_calibrates_in_cluster_mode_to_its_documented_calls() {
    let _cores = crate::timing::sensitive();
    let mut flags = aws_flavour::settings_flags("4s", "none");
    // crossplane-runtime's default grace, which this test ran with when its figures were
    // documented: with a 1 s grace the calibration read 2 GetCallerIdentity calls per
    // Connect for the VPC in two of three runs (not looked into further).
    flags.push("--creation-grace-period=30s".to_owned());
    let args: Vec<String> = flags.iter().map(|f| format!("\"{f}\"")).collect();
    let scenario = [
        "apiVersion: harness/v1\nname: cluster-calibrate-aws\nprofile:\n  flags: loadtest\n",
        &format!("  args: [{}]\n", args.join(", ")),
        &aws_flavour::KINDS
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>(),
        aws_flavour::OBJECTS,
        &aws_flavour::resources(2),
        "phases:
  - {name: create, action: create}
  - {name: retag, action: update, spec: {tags: {team: load, tier: gold}}}
  - {name: delete, action: delete}
",
    ]
    .concat();
    let mut cluster = Cluster::start_with("cluster-calibrate-aws", flags);
    let (status, stdout, stderr) = cluster.harness(
        "calibrate",
        &scenario,
        &["--sample=2", "--polls=2", "--rate=3"],
    );
    assert!(status.success(), "exit {status}\n{stdout}\n{stderr}");
    // The documented 15 calls per steady observe, on average: on a loaded machine some
    // reconciles overlap others, calibrate says so, and a call it cannot tell apart goes
    // to one of them, which shows as a range beside the same mean ("15 calls (10–19)").
    let steady = "Bucket.s3.aws.m.loadtest.dev steady observe: 15 calls";
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with(steady))
        .unwrap_or_else(|| panic!("no line {steady:?}\n{stdout}"));
    let rest = &line.trim_start()[steady.len()..];
    assert!(
        rest.starts_with(": GetBucketAccelerateConfiguration 1,")
            || (rest.starts_with(" (") && line.contains("): GetBucketAccelerateConfiguration 1,")),
        "{stdout}"
    );
    let text = std::fs::read_to_string(cluster.dir.join("out/calibration.yaml")).unwrap();
    let file: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(file["target"], "cluster", "{text}");
    aws_flavour::assert_documented_calls(&text);
}
