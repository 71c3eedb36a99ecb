//! Error text, asserted whole: file, line, column and what was expected.

use harness::scenario::parse;

const HEAD: &str = "apiVersion: harness/v1\nname: t\n";

fn err(body: &str) -> String {
    parse(&format!("{HEAD}{body}"), "t.yaml")
        .expect_err("must not validate")
        .to_string()
}

#[test]
fn an_unknown_field_names_its_place_and_the_expected_fields() {
    let e = err("resources:\n  - {name: b, kind: Bucket, count: 1, colour: red}\nphases: []\n");
    assert!(e.starts_with("t.yaml:4:"), "{e}");
    assert!(e.contains("unknown field `colour`, expected one of"), "{e}");
}

#[test]
fn an_unknown_kind_lists_the_kinds() {
    let e = err(
        "resources:\n  - {name: b, kind: Bukket, count: 1}\nphases:\n  - {name: c, action: create}\n",
    );
    assert_eq!(
        e,
        "t.yaml:4:21: unknown kind \"Bukket\", expected one of Bucket, Database, Record, or an `apiVersion` with a kind the target serves"
    );
}

#[test]
fn second_stage_errors_point_at_the_offending_value() {
    let e = err(
        "provider: {pollInterval: 1 minute, pollJitterPercent: 100}\nresources:\n  - {name: b, kind: Bucket, count: 0, account: nope}\nphases:\n  - {name: h, action: hold, rate: 5}\n",
    );
    let want = "t.yaml:3:26: pollInterval: time: unknown unit \" minute\" in duration \"1 minute\", expected a Go duration such as 500ms, 10s, 1m or 1h30m\n\
t.yaml:3:55: pollJitterPercent 100 is too large, expected 0 to 99\n\
t.yaml:5:36: count is 0, expected at least 1\n\
t.yaml:5:48: unknown account \"nope\", expected one of default\n\
t.yaml:7:23: a hold phase needs `duration`\n\
t.yaml:7:35: `rate` does not apply to a hold phase, expected only duration";
    assert_eq!(e, want);
}

#[test]
fn assertions_must_name_existing_phases_of_the_right_kind() {
    let e = err(
        "resources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: c, action: create}\nassertions:\n  - {check: steadyRate, phase: c}\n  - {check: throttles, phase: x}\n",
    );
    assert_eq!(
        e,
        "t.yaml:8:13: a steadyRate check needs `phase` naming a hold phase\n\
t.yaml:9:31: unknown phase \"x\", expected one of c"
    );
}

#[test]
fn a_phase_whose_body_fails_its_checks_is_still_a_phase_assertions_can_name() {
    let e = err(
        "resources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: c, action: create}\n  - {name: hold, action: hold, duration: 5 minutes}\nassertions:\n  - {check: steadyRate, phase: hold}\n  - {check: throttles, phase: x}\n",
    );
    assert_eq!(
        e,
        "t.yaml:7:42: duration: time: unknown unit \" minutes\" in duration \"5 minutes\", expected a Go duration such as 500ms, 10s, 1m or 1h30m\n\
t.yaml:10:31: unknown phase \"x\", expected one of c, hold"
    );
}

#[test]
fn templates_with_unknown_placeholders_are_rejected_where_written() {
    let e = err(
        "resources:\n  - {name: b, kind: Bucket, count: 2, namePattern: \"b-{{idx}}\"}\nphases:\n  - {name: c, action: create}\n",
    );
    assert_eq!(
        e,
        "t.yaml:4:52: unknown placeholder `{{idx}}`, expected one of {{index}}, {{group}}, {{scenario}}, {{cloudUrl}}"
    );
}

#[test]
fn a_missing_file_is_a_read_error_with_its_cause() {
    let e = harness::scenario::load(std::path::Path::new("no/such.yaml")).expect_err("missing");
    assert_eq!(e.to_string(), "cannot read scenario no/such.yaml");
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn a_value_of_the_wrong_type_names_its_field_and_what_was_expected() {
    let e = err("resources:\n  - {name: b, kind: Bucket, count: 1.5}\nphases: []\n");
    assert_eq!(
        e,
        "t.yaml:4:36: count: expected a whole number ≥ 1, got 1.5"
    );
    let e = err("provider:\n  maxReconcileRate: ten\nresources: []\nphases: []\n");
    assert_eq!(
        e,
        "t.yaml:4:21: maxReconcileRate: expected a whole number ≥ 1, got ten"
    );
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml");
    let sets = ["provider.pollJitterPercent=1.5".parse().expect("a set")];
    let e = harness::scenario::load_with(&path, &sets)
        .expect_err("must not validate")
        .to_string();
    assert!(
        e.ends_with("--set provider.pollJitterPercent: pollJitterPercent: expected a whole number ≥ 0, got 1.5"),
        "{e}"
    );
}

#[test]
fn the_settings_of_todays_providers_are_checked_at_their_values() {
    let e = err(
        "provider: {backoffBase: 2m, backoffMax: 30s, minPollInterval: -1s, pollJitterSizing: fixed}\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: h, action: hold, duration: 1m}\n",
    );
    assert_eq!(
        e,
        "t.yaml:3:86: unknown variant `fixed`, expected one of per-resource, poll-interval"
    );
    let e = err(
        "provider: {backoffBase: 2m, backoffMax: 30s, minPollInterval: -1s}\nresources:\n  - {name: b, kind: Bucket, count: 1}\nphases:\n  - {name: h, action: hold, duration: 1m}\n",
    );
    let want = "t.yaml:3:41: backoffMax 30s is below backoffBase 2m0s, expected backoffBase ≤ backoffMax\n\
t.yaml:3:63: minPollInterval \"-1s\" is negative, expected a duration ≥ 0";
    assert_eq!(e, want);
}

#[test]
fn fault_shares_are_checked_where_written() {
    let e = err(
        "resources:\n  - name: b\n    kind: Bucket\n    count: 10\n    faults:\n      - {percent: 60, error: AccessDenied, slowCreate: 1m}\n      - {percent: 30, error: Forbidden}\n      - {percent: 30, notFoundAfterCreate: 10s}\n    drift: {percent: 50}\nphases:\n  - {name: c, action: create}\n",
    );
    assert!(e.starts_with("t.yaml:9:"), "{e}");
    assert!(
        e.contains(
            "unknown variant `Forbidden`, expected one of AccessDenied, Conflict, Validation"
        ),
        "{e}"
    );
    let e = err(
        "resources:\n  - name: b\n    kind: Bucket\n    count: 10\n    faults:\n      - {percent: 60, error: AccessDenied, slowCreate: 1m}\n      - {percent: 30, notFoundAfterCreate: 10s}\n    drift: {percent: 80}\nphases:\n  - {name: c, action: create}\n",
    );
    let want = "t.yaml:8:19: a fault share names more than one fault, expected one of error, notFoundAfterCreate, slowCreate\n\
t.yaml:10:22: fault and drift shares add up to 110%, expected at most 100%";
    assert_eq!(e, want);
}

#[test]
fn a_cloud_fault_phase_is_checked_where_written() {
    let e = err(
        "resources:\n  - {name: b, kind: Bucket, count: 10}\n  - {name: o, kind: Bucket, count: 10, managementPolicies: [Observe]}\nphases:\n  - {name: f, action: cloudFault, groups: [b, o], faults: [{percent: 60, error: AccessDenied}, {percent: 50, slowCreate: 1m}]}\n  - {name: g, action: cloudFault, rate: 3}\n  - {name: h, action: hold, duration: 1m, drift: {percent: 5}}\n",
    );
    let want = "t.yaml:7:59: group \"o\" is observe-only and has no cloud resources to fault, expected `groups` without it\n\
t.yaml:7:106: fault and drift shares add up to 110%, expected at most 100%\n\
t.yaml:8:23: a cloudFault phase needs `faults` or `drift` (`faults: []` clears the faults of its groups)\n\
t.yaml:8:41: `rate` does not apply to a cloudFault phase, expected only groups, duration, faults, drift\n\
t.yaml:9:60: `drift` does not apply to a hold phase, expected only duration";
    assert_eq!(e, want);
}

#[test]
fn a_cloud_fault_phase_gives_each_of_its_groups_its_shares_from_the_top_index_down() {
    let s = harness::scenario::parse(
        &format!(
            "{HEAD}resources:\n  - {{name: a, kind: Bucket, count: 10}}\n  - {{name: b, kind: Bucket, count: 20}}\nphases:\n  - {{name: c, action: create}}\n  - {{name: f, action: cloudFault, faults: [{{percent: 10, error: Conflict, code: BucketAlreadyExists}}], drift: {{percent: 10}}, duration: 1m}}\n  - {{name: h, action: hold, duration: 1m}}\n"
        ),
        "t.yaml",
    )
    .unwrap();
    let during = s.faults_during(1);
    assert_eq!(
        during
            .iter()
            .map(|g| g
                .iter()
                .map(|f| (f.start, f.end, f.fault.label()))
                .collect::<Vec<_>>())
            .collect::<Vec<_>>(),
        [
            vec![(9, 10, "Conflict"), (8, 9, "drift")],
            vec![(18, 20, "Conflict"), (16, 18, "drift")]
        ]
    );
    // With a duration, only its own phase sees them.
    assert!(s.faults_during(0).iter().all(Vec::is_empty));
    assert!(s.faults_during(2).iter().all(Vec::is_empty));
}
