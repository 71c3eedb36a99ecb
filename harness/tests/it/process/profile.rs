//! Provider profiles: a profile's settings, written out or read from the provider's command
//! line, with errors that say where and what was expected; its metrics URL and the
//! User-Agent the journal tells the provider by.

use harness::predict::plan;
use harness::scenario::{load, parse};

use crate::fixture::{BODY, HEAD};

/// A profile's one kind, a foreign provider's cluster-scoped Widget.
const KINDS: &str = "  kinds: [{apiVersion: example.org/v1, kind: Widget, scope: Cluster}]\n";

fn err(text: &str) -> String {
    parse(text, "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

#[test]
fn a_profile_without_a_command_line_must_give_every_setting_the_budget_needs() {
    let e = err(&format!(
        "{HEAD}profile:\n  settings: {{maxReconcileRate: 5, pollInterval: 5m}}\n{KINDS}{BODY}"
    ));
    assert_eq!(
        e,
        "t.yaml:4:3: the profile gives no rateLimitModel, pollJitterPercent, pollJitterSizing, minPollInterval, scopedBuckets, backoffBase, backoffMax, clientQps, clientBurst, expected every setting the budget needs in `settings`, or `flags` with the provider's command line"
    );
}

#[test]
fn a_profiles_unknown_field_and_a_bad_flag_are_placed_and_explained() {
    let e = err(&format!(
        "{HEAD}profile:\n  flags: upjet\n  args: [--poll=10m]\n  colour: red\n{BODY}"
    ));
    assert!(e.starts_with("t.yaml:6:3: unknown field `colour`"), "{e}");
    let e = err(&format!(
        "{HEAD}profile:\n  flags: upjet\n  args: [--poll=10m, --poll-jitter=45s]\n{KINDS}{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:5:9: --poll-jitter=\"45s\": expected a whole percentage below 100 of --poll (10m0s)"),
        "{e}"
    );
}

#[test]
fn settings_read_from_an_upjet_command_line_feed_the_prediction_and_must_agree_with_written_ones() {
    let text = format!(
        "{HEAD}profile:\n  flags: upjet\n  command: [provider, --max-reconcile-rate=3, --poll, 5m, --sync=1h, -d]\n{KINDS}{BODY}"
    );
    let s = parse(&text, "t.yaml").expect("valid");
    assert_eq!(s.settings.max_reconcile_rate.get(), 3);
    assert_eq!(s.settings.poll_interval.as_secs(), 300);
    assert!(s.settings.scoped_buckets, "upjet runs one bucket per scope");
    let client = s.prediction.client.expect("the profile's client limits");
    assert_eq!((client.qps, client.burst), (15.0, 30.0));
    let plan = plan(&s);
    let rs: Vec<f64> = plan
        .all()
        .flat_map(|p| p.inputs.iter().filter(|i| i.name == "R").map(|i| i.value))
        .collect();
    assert!(!rs.is_empty(), "the prediction reads R");
    assert!(
        rs.iter().all(|&r| r == 3.0),
        "R from the command line: {rs:?}"
    );
    let e = err(&text.replace("  kinds:", "  settings: {maxReconcileRate: 4}\n  kinds:"));
    assert!(
        e.starts_with("t.yaml:5:12: the command line's --max-reconcile-rate=3 disagrees with the profile's settings (4)"),
        "{e}"
    );
    let e = err(&text.replace("profile:", "provider: {maxReconcileRate: 4}\nprofile:"));
    assert!(
        e.contains("the scenario has a profile, which gives the provider's settings"),
        "{e}"
    );
}

#[test]
fn a_profile_file_is_read_beside_the_scenario_and_its_problems_name_it() {
    let dir = std::env::temp_dir().join(format!("harness-profile-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("profiles")).unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!("{HEAD}profile: {{file: profiles/p.yaml}}\n{BODY}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nargs: [--max-reconcile-rate=2]\nkinds:\n  - {apiVersion: example.org/v1, kind: Widget, scope: Namespaced}\n",
    )
    .unwrap();
    let s = load(&scenario).expect("valid");
    assert_eq!(s.settings.max_reconcile_rate.get(), 2);
    assert_eq!(
        s.settings.poll_jitter_percent, 0,
        "provider-template has no jitter"
    );
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nkinds: []\n",
    )
    .unwrap();
    let e = load(&scenario).expect_err("no command line").to_string();
    let file = dir.join("profiles/p.yaml").display().to_string();
    assert_eq!(
        e,
        format!(
            "{file}:1:8: flags needs the provider's command line, expected `args` or `command`"
        )
    );
    // A calibration file that is not there: placed at the profile's `calibration` field.
    std::fs::write(
        dir.join("profiles/p.yaml"),
        "flags: crossplane-runtime\nargs: []\ncalibration: cal.yaml\nkinds:\n  - {apiVersion: example.org/v1, kind: Widget, scope: Namespaced}\n",
    )
    .unwrap();
    let e = load(&scenario)
        .expect_err("no calibration file")
        .to_string();
    let cal = dir.join("profiles/cal.yaml").display().to_string();
    assert!(
        e.starts_with(&format!(
            "{file}:3:14: cannot read the calibration file {cal}: "
        )) && e.ends_with("(`harness calibrate SCENARIO` writes one)"),
        "{e}"
    );
    // A profile file that is not there: placed at the scenario's `file` field.
    std::fs::remove_file(dir.join("profiles/p.yaml")).unwrap();
    let e = load(&scenario).expect_err("no profile").to_string();
    let shown = scenario.display().to_string();
    assert!(
        e.starts_with(&format!(
            "{shown}:3:17: cannot read the profile {}: ",
            dir.join("profiles/p.yaml").display()
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_profiles_metrics_url_must_be_http_and_beside_a_command() {
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  command: [provider]\n  metricsUrl: 'https://p:{{{{metricsPort}}}}/metrics'\n{KINDS}{BODY}"
    ));
    assert!(
        e.starts_with(
            "t.yaml:6:15: metricsUrl \"https://p:{{metricsPort}}/metrics\" is not an http:// URL"
        ),
        "{e}"
    );
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  args: []\n  metricsUrl: http://127.0.0.1:8080/metrics\n{KINDS}{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:6:15: metricsUrl is for the process target"),
        "{e}"
    );
}

/// A profile's `userAgent` names the start of the provider's User-Agent; an empty one is
/// refused at its place, and a scenario without a profile names this workspace's provider.
#[test]
fn a_profiles_user_agent_is_what_the_journal_tells_the_provider_by() {
    use harness::run::own::ProviderAgent;
    let e = err(&format!(
        "{HEAD}profile:\n  flags: loadtest\n  args: []\n  userAgent: ' '\n{KINDS}{BODY}"
    ));
    assert!(
        e.starts_with("t.yaml:6:14: userAgent \" \" is not the start of a User-Agent header"),
        "{e}"
    );
    let s = parse(
        &format!(
            "{HEAD}profile:\n  flags: loadtest\n  args: []\n  userAgent: provider-aws-s3/\n{KINDS}{BODY}"
        ),
        "t.yaml",
    )
    .unwrap();
    let agent = ProviderAgent::of(&s);
    assert_eq!(agent, ProviderAgent::Prefix("provider-aws-s3/".to_owned()));
    assert!(
        agent.is_provider("provider-aws-s3/v1.20.0 (linux/amd64) kubernetes/abc/leader-election")
    );
    assert!(!agent.is_provider("provider/v0.1.0 (linux/amd64) kube-rs"));
    let s = parse(
        &format!("{HEAD}profile:\n  flags: loadtest\n  args: []\n{KINDS}{BODY}"),
        "t.yaml",
    )
    .unwrap();
    assert_eq!(ProviderAgent::of(&s), ProviderAgent::NotHarness);
}
