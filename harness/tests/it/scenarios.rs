//! Every shipped scenario loads, validates and predicts, so none can rot.

use std::path::PathBuf;

use harness::predict::{Meaning, plan};
use harness::scenario::load;

fn shipped() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_scenario_validates_and_predicts() {
    let files = shipped();
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            f.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for want in [
        "smoke",
        "steady-1k",
        "restart-burst",
        "forced-resync",
        "per-resource-poll",
        "cloud-outage",
        "over-quota",
        "models-crossplane",
        "models-in-queue",
        "aws-upjet-calibrate",
        "upgrade-compare",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "scenarios/{want}.yaml is missing"
        );
    }
    for f in files {
        let s = load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let p = plan(&s);
        assert_eq!(p.phases.len(), s.phases.len(), "{}", f.display());
        assert!(
            p.all().all(|x| !x.value.is_nan() && !x.formula.is_empty()),
            "{}: a prediction without value or formula",
            f.display()
        );
        assert!(
            p.all().any(|x| x.meaning == Meaning::UpperBound),
            "{}",
            f.display()
        );
    }
}

#[test]
fn smoke_has_a_hundred_resources() {
    let s = load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml"))
        .expect("smoke loads");
    assert_eq!(s.total_resources(), 100);
}

#[test]
fn the_forced_resync_scenario_predicts_the_crossplane_excess() {
    let s =
        load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/forced-resync.yaml"))
            .expect("loads");
    let p = plan(&s);
    let bound = p.find("resync/cloud-calls/10s").expect("resync bound");
    assert!(bound.get("E").is_some_and(|e| e > 390.0), "{bound:?}");
    assert!(
        bound
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("flagged keys")
    );
    let models =
        load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/models-in-queue.yaml"))
            .expect("loads");
    let q = plan(&models);
    assert_eq!(
        q.find("resync/cloud-calls/10s").and_then(|b| b.get("E")),
        None,
        "in-queue has no excess term"
    );
}

#[test]
fn the_per_resource_poll_scenario_clamps_ten_seconds_to_the_minimum() {
    let s = load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/per-resource-poll.yaml"),
    )
    .expect("loads");
    let intervals = s.groups[0].poll_intervals(&s.settings, &s.name);
    let secs: Vec<(u64, u32)> = intervals.iter().map(|(d, n)| (d.as_secs(), *n)).collect();
    assert_eq!(secs, vec![(30, 100), (300, 200), (86_400, 200)]);
    assert_eq!(s.warnings.len(), 1);
}

#[test]
fn the_commented_reference_in_the_readme_validates() {
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/README.md"),
    )
    .expect("README exists");
    // The reference is the block that starts at the beginning of a line (the step-by-step
    // guide's profile example above it is indented).
    let block = readme
        .split("\n```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a yaml block");
    let s = harness::scenario::parse(block, "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.phases.len(), 9);
    assert_eq!(s.assertions.len(), 17);
}

/// The "about" column of scenarios/README.md's table: (file, duration as printed).
fn readme_durations() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/README.md"),
    )
    .expect("scenarios/README.md");
    let mut out = Vec::new();
    for line in readme
        .lines()
        .skip_while(|l| !l.starts_with("| file |"))
        .skip(2)
    {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let about = cells.last().copied().unwrap_or_default().to_owned();
        for file in cells[0].split(", ") {
            out.push((file.trim_matches('`').to_owned(), about.clone()));
        }
    }
    out
}

#[test]
fn the_readme_lists_each_scenarios_expected_duration() {
    let listed = readme_durations();
    for f in shipped() {
        let name = f
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let s = load(&f).expect("loads");
        let expected = harness::report::human_duration(plan(&s).expected_duration(&s).total);
        let about = listed
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(_, about)| about.as_str());
        assert_eq!(
            about,
            Some(expected.as_str()),
            "{name} in scenarios/README.md"
        );
    }
}

#[test]
fn the_kind_workflows_default_scenario_takes_ten_minutes_or_less() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let wf = std::fs::read_to_string(root.join("ci/github/loadtest.yml")).expect("workflow");
    let default = wf
        .lines()
        .find_map(|l| l.trim().strip_prefix("default: scenarios/"))
        .expect("the scenario input has a default");
    let s = load(&root.join("scenarios").join(default)).expect("loads");
    let d = plan(&s).expected_duration(&s).total;
    assert!(
        d <= std::time::Duration::from_secs(600),
        "{default} is expected to take {d:?}"
    );
}

/// A scenario whose hold lasts `duration` and whose group has `count` buckets.
fn with(duration: &str, count: &str) -> String {
    format!(
        "apiVersion: harness/v1\nname: t\nresources:\n  - {{name: b, kind: Bucket, count: {count}}}\nphases:\n  - {{name: create, action: create}}\n  - {{name: hold, action: hold, duration: \"{duration}\"}}\n"
    )
}

#[test]
fn the_json_schema_accepts_the_durations_and_counts_the_validator_accepts() {
    let schema = harness::scenario::json_schema();
    let defs = &schema["$defs"];
    let pattern = defs["GoDuration"]["pattern"].as_str().expect("a pattern");
    let re = regex_lite::Regex::new(pattern).expect("a valid pattern");
    // Zero is a duration to both; a hold (like a timeout) must be longer, which the field
    // says in words.
    for d in ["0", "+0"] {
        assert!(re.is_match(d));
        let e = harness::scenario::parse(&with(d, "1"), "t.yaml")
            .expect_err("a hold of zero")
            .to_string();
        assert!(
            e.ends_with("duration is zero, expected a duration > 0"),
            "{e}"
        );
    }
    for d in [
        "500ms", "10s", "1m30s", "1.5h", ".5s", "1.s", "2h45m", "1µs", "3us", "7ns", "10", "5x",
        "-1s", "1 m", "", "s", ".s", "1h-5m", "1e3s",
    ] {
        let validator = harness::scenario::parse(&with(d, "1"), "t.yaml").is_ok();
        assert_eq!(
            re.is_match(d),
            validator,
            "duration {d:?}: schema vs validator"
        );
    }
    assert_eq!(
        defs["RawPhase"]["properties"]["duration"]["anyOf"][0]["$ref"],
        "#/$defs/GoDuration"
    );
    let count = &defs["RawGroup"]["properties"]["count"];
    assert_eq!(count["minimum"], 1);
    assert!(harness::scenario::parse(&with("1s", "0"), "t.yaml").is_err());
    assert!(harness::scenario::parse(&with("1s", "1"), "t.yaml").is_ok());
    let provider = &defs["RawProvider"]["properties"];
    assert_eq!(provider["maxReconcileRate"]["minimum"], 1);
    assert_eq!(provider["pollJitterPercent"]["maximum"], 99);
}

/// The upgrade example's two profiles (credentials cached, and not) load with the
/// calibration the shipped profile names, which holds provider/README.md's calls per path.
#[test]
fn the_upgrade_example_takes_either_profile_and_the_shipped_calibration() {
    use harness::scenario::load_with;

    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let after = load(&dir.join("upgrade-compare.yaml")).unwrap_or_else(|e| panic!("{e}"));
    let set = "profile.file=profiles/aws-flavour-cache-all.yaml"
        .parse()
        .unwrap();
    let before =
        load_with(&dir.join("upgrade-compare.yaml"), &[set]).unwrap_or_else(|e| panic!("{e}"));
    let args = |s: &harness::scenario::Scenario| {
        s.profile
            .as_ref()
            .and_then(|p| p.process.as_ref())
            .map(|c| c.args.join(" "))
            .unwrap_or_default()
    };
    assert!(args(&after).contains("--credential-cache=none"));
    assert!(args(&before).contains("--credential-cache=all"));
    for s in [&before, &after] {
        let figures: Vec<(String, [u32; 5])> = s
            .calls
            .iter()
            .map(|(k, c)| {
                (
                    k.to_string(),
                    [c.observe, c.create, c.update, c.delete, c.connect],
                )
            })
            .collect();
        for (kind, want) in [
            ("Bucket", [15, 2, 1, 1, 1]),
            ("VPC", [1, 1, 1, 1, 1]),
            ("Table", [2, 1, 1, 1, 1]),
        ] {
            assert!(
                figures
                    .iter()
                    .any(|(k, f)| k.starts_with(&format!("{kind}.")) && *f == want),
                "{kind}: {figures:?}"
            );
        }
        assert!(
            s.call_detail
                .values()
                .all(|d| d.source.contains("aws-flavour-calibration.yaml")),
            "{:?}",
            s.call_detail
                .values()
                .map(|d| &d.source)
                .collect::<Vec<_>>()
        );
    }
}
