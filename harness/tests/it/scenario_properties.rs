//! Property tests over generated scenarios: valid ones validate, and mutated ones never
//! panic the parser and get errors that each have a position and a message.

use harness::scenario::{ScenarioError, parse};
use proptest::prelude::*;

fn duration(min_s: u32, max_s: u32) -> impl Strategy<Value = String> {
    (min_s..=max_s).prop_map(|s| match s {
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    })
}

fn provider() -> impl Strategy<Value = String> {
    (
        1u32..=200,
        prop::sample::select(vec!["crossplane", "in-queue", "controller-runtime", "concurrency-only"]),
        duration(1, 3600),
        0u32..=99,
    )
        .prop_map(|(rate, model, poll, jitter)| {
            format!(
                "provider:\n  maxReconcileRate: {rate}\n  rateLimitModel: {model}\n  pollInterval: {poll}\n  pollJitterPercent: {jitter}\n  minPollInterval: 1s\n"
            )
        })
}

fn cloud() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        (1u32..=100, 1u32..=50, 0u32..=100, 1u32..=20).prop_map(|(burst, per_second, latency, size)| {
            format!(
                "cloud:\n  quotas:\n    mutate: {{burst: {burst}, perSecond: {per_second}}}\n    read: {{burst: 100, perSecond: 20}}\n  latency:\n    read: {{fixed: {latency}ms}}\n  provisioning:\n    databaseCreate: {size}s\n"
            )
        }),
    ]
}

fn group(index: usize) -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["Bucket", "Database", "Record"]),
        1u32..=50,
        any::<bool>(),
        prop::option::of((1u32..=50, duration(1, 86_400))),
    )
        .prop_map(move |(kind, count, spec, annotated)| {
            let mut g = format!("  - name: g{index}\n    kind: {kind}\n    count: {count}\n");
            if spec {
                g.push_str("    spec: {region: eu-west-1, note: \"{{group}}-{{index}}\"}\n");
            }
            if let Some((percent, poll)) = annotated {
                g.push_str(&format!(
                    "    annotations:\n      - percent: {percent}\n        values: {{crossplane.io/poll-interval: {poll}}}\n"
                ));
            }
            g
        })
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Hold,
    Resync,
    Update,
    Outage,
    Latency,
    Restart,
}

fn phase() -> impl Strategy<Value = Phase> {
    prop::sample::select(vec![
        Phase::Hold,
        Phase::Resync,
        Phase::Update,
        Phase::Outage,
        Phase::Latency,
        Phase::Restart,
    ])
}

fn phases() -> impl Strategy<Value = (String, bool)> {
    (
        prop::option::of(1u32..=100),
        prop::collection::vec((phase(), duration(1, 600)), 0..5),
        any::<bool>(),
    )
        .prop_map(|(rate, middle, delete)| {
            let mut text = String::from("phases:\n");
            match rate {
                Some(r) => text.push_str(&format!("  - {{name: create, action: create, rate: {r}}}\n")),
                None => text.push_str("  - {name: create, action: create}\n"),
            }
            let mut hold = false;
            for (i, (p, d)) in middle.iter().enumerate() {
                text.push_str(&match p {
                    Phase::Hold => {
                        hold = true;
                        format!("  - {{name: hold{i}, action: hold, duration: {d}}}\n")
                    }
                    Phase::Resync => format!("  - {{name: resync{i}, action: resync}}\n"),
                    Phase::Update => {
                        format!("  - {{name: update{i}, action: update, spec: {{versioning: true}}}}\n")
                    }
                    Phase::Outage => {
                        format!("  - {{name: outage{i}, action: cloudOutage, duration: {d}, status: 503}}\n")
                    }
                    Phase::Latency => format!(
                        "  - {{name: slow{i}, action: cloudLatency, duration: {d}, latency: {{read: {{fixed: 200ms}}}}}}\n"
                    ),
                    Phase::Restart => format!("  - {{name: restart{i}, action: restart}}\n"),
                });
            }
            if delete {
                text.push_str("  - {name: delete, action: delete}\n");
            }
            (text, hold)
        })
}

fn assertions() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(
        vec![
            "  - {check: cloudCalls, window: 10s}\n",
            "  - {check: cloudCalls, window: 1s}\n",
            "  - {check: apiRequests, window: 1s}\n",
            "  - {check: throttles, max: 0}\n",
            "  - {check: timeToReady, phase: create, quantile: 0.9}\n",
            "  - {check: orphans}\n",
            "  - {check: duplicates, max: 0}\n",
        ],
        0..=7,
    )
}

/// The text of a valid scenario.
fn scenario() -> impl Strategy<Value = String> {
    (
        "[a-z][a-z0-9]{0,12}",
        provider(),
        cloud(),
        (1usize..=4).prop_flat_map(|n| (0..n).map(group).collect::<Vec<_>>()),
        phases(),
        assertions(),
    )
        .prop_map(
            |(name, provider, cloud, groups, (phases, hold), assertions)| {
                let mut text = format!(
                    "apiVersion: harness/v1\nname: {name}\nseed: 7\n{provider}{cloud}resources:\n"
                );
                text.push_str(&groups.concat());
                text.push_str(&phases);
                if !assertions.is_empty() || hold {
                    text.push_str("assertions:\n");
                    text.push_str(&assertions.concat());
                }
                text
            },
        )
}

/// One change to a scenario's text.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(prop::sample::Index),
    DuplicateLine(prop::sample::Index),
    SwapLines(prop::sample::Index, prop::sample::Index),
    /// Replaces what follows a line's first `: ` with a token.
    ReplaceValue(prop::sample::Index, &'static str),
    /// Inserts text at a byte (moved back to a character boundary).
    Insert(prop::sample::Index, String),
    Truncate(prop::sample::Index),
    Indent(prop::sample::Index, bool),
}

const TOKENS: &[&str] = &[
    "",
    "-1",
    "0",
    "1e400",
    "-0",
    ".nan",
    ".inf",
    "~",
    "null",
    "[]",
    "{}",
    "\"x\"",
    "1 minute",
    "99999999999999999999",
    "4294967296",
    "true",
    "&a x",
    "*a",
    "!!binary AA==",
    "{{index}}",
    "'",
    "\"",
    "- x",
    "\t",
    "10s",
    "0s",
    "-5s",
    "1h",
    "abc",
    "Bucket",
    "create",
    "[1, 2]",
    "{burst: 0, perSecond: 0}",
    "{fixed: -1ms}",
    "200",
    "0.5",
    "101",
    "Z",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Mutation::DeleteLine),
        any::<prop::sample::Index>().prop_map(Mutation::DuplicateLine),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>())
            .prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<prop::sample::Index>(), prop::sample::select(TOKENS))
            .prop_map(|(i, t)| Mutation::ReplaceValue(i, t)),
        (
            any::<prop::sample::Index>(),
            "\\PC{0,6}|[:{}\\[\\],#&*!|>'\"%@` -]{1,3}"
        )
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
        any::<prop::sample::Index>().prop_map(Mutation::Truncate),
        (any::<prop::sample::Index>(), any::<bool>())
            .prop_map(|(i, more)| Mutation::Indent(i, more)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len();
    let by_line = !matches!(m, Mutation::Insert(..) | Mutation::Truncate(_));
    if by_line && n == 0 {
        return text.to_owned();
    }
    match m {
        Mutation::DeleteLine(i) => {
            lines.remove(i.index(n));
        }
        Mutation::DuplicateLine(i) => {
            let line = lines[i.index(n)].clone();
            lines.insert(i.index(n), line);
        }
        Mutation::SwapLines(a, b) => lines.swap(a.index(n), b.index(n)),
        Mutation::ReplaceValue(i, token) => {
            let line = &mut lines[i.index(n)];
            if let Some(at) = line.find(": ") {
                line.truncate(at + 2);
                line.push_str(token);
            }
        }
        Mutation::Insert(i, s) => {
            let mut at = i.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            return format!("{}{s}{}", &text[..at], &text[at..]);
        }
        Mutation::Truncate(i) => {
            let mut at = i.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            return text[..at].to_owned();
        }
        Mutation::Indent(i, more) => {
            let line = &mut lines[i.index(n)];
            if *more {
                line.insert(0, ' ');
            } else if line.starts_with(' ') {
                line.remove(0);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Every problem has a position inside the text (or just past its end) and a message,
/// and the listing places each at `t.yaml:LINE:COLUMN`.
fn assert_placed(text: &str, err: &ScenarioError) -> Result<(), TestCaseError> {
    let problems = err.problems();
    prop_assert!(!problems.is_empty(), "an error without problems: {err}");
    let lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX);
    for p in problems {
        prop_assert!(p.pos.line >= 1 && p.pos.column >= 1, "no position: {p:?}");
        prop_assert!(
            p.pos.line <= lines + 1,
            "line {} of {lines}: {p:?}",
            p.pos.line
        );
        prop_assert!(!p.message.trim().is_empty(), "no message: {p:?}");
    }
    for line in err.to_string().lines().filter(|l| !l.starts_with(' ')) {
        prop_assert!(
            line.starts_with("t.yaml:"),
            "a problem not placed: {line:?}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn generated_scenarios_validate(text in scenario()) {
        if let Err(e) = parse(&text, "t.yaml") {
            prop_assert!(false, "a valid scenario is refused:\n{e}\n---\n{text}");
        }
    }

    #[test]
    fn mutated_scenarios_never_panic_and_every_error_is_placed(
        text in scenario(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let mutated = mutations.iter().fold(text, |t, m| apply(&t, m));
        if let Err(e) = parse(&mutated, "t.yaml") {
            assert_placed(&mutated, &e)?;
        }
    }
}

/// What a run checks of a scenario before it starts anything, as `run` checks it: the
/// provider refuses settings that `Settings::validate` refuses, and the cloud is built
/// from `run::cloud::config` (`Rate::try_new` for every quota) and `Config::validate`.
fn run_accepts(s: &harness::scenario::Scenario) -> Result<(), String> {
    s.settings.validate().map_err(|e| e.to_string())?;
    let config = harness::run::cloud::config(s).map_err(|e| e.to_string())?;
    config.validate().map_err(|e| e.to_string())
}

/// A scenario with the provider settings and a quota at or past the edges of what a run
/// takes: `validate` may refuse it, but what it accepts, a run must accept.
fn edge_scenario() -> impl Strategy<Value = String> {
    let per_second = prop::sample::select(vec![
        "0",
        "1e-6",
        "0.0000115",
        "0.00001157407407407408",
        "0.5",
        "1",
        "1e9",
        "1.5e9",
        "1e300",
    ]);
    let burst = prop::sample::select(vec!["0.4", "0.5", "1", "1.5", "1e9", "1e12"]);
    let duration = || prop::sample::select(vec!["0s", "1ns", "1ms", "1s", "1m", "24h"]);
    (
        (0u32..=3, 95u32..=101, duration(), duration()),
        (duration(), duration(), per_second, burst),
    )
        .prop_map(
            |((rate, jitter, poll, min_poll), (base, max, per_second, burst))| {
                format!(
                    "apiVersion: harness/v1\nname: edges\nprovider:\n  maxReconcileRate: {rate}\n  pollJitterPercent: {jitter}\n  pollInterval: {poll}\n  minPollInterval: {min_poll}\n  backoffBase: {base}\n  backoffMax: {max}\ncloud:\n  quotas:\n    mutate: {{burst: {burst}, perSecond: {per_second}}}\nresources:\n  - {{name: b, kind: Bucket, count: 1}}\nphases:\n  - {{name: create, action: create}}\n"
                )
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_scenario_validate_accepts_run_accepts(text in edge_scenario()) {
        if let Ok(s) = parse(&text, "t.yaml") {
            let run = run_accepts(&s);
            prop_assert!(run.is_ok(), "validated, but a run refuses it: {run:?}\n---\n{text}");
        }
    }

    #[test]
    fn generated_scenarios_validate_and_run_accepts_them(seed in 0u64..1_000_000) {
        use harness::scenario::generate::{Shape, generate};
        for shape in [Shape::default(), Shape::runnable()] {
            let text = generate(seed, &shape);
            let s = parse(&text, "generated.yaml");
            prop_assert!(s.is_ok(), "the generator wrote an invalid scenario: {s:?}\n---\n{text}");
            if let Ok(s) = s {
                let run = run_accepts(&s);
                prop_assert!(run.is_ok(), "validated, but a run refuses it: {run:?}\n---\n{text}");
            }
        }
    }
}

/// A quota refill below one token a day, or above one a nanosecond, is refused where it is
/// written (a run would refuse it when it builds the cloud).
#[test]
fn quota_rates_outside_what_mock_cloud_takes_are_refused_at_their_place() {
    for per_second in ["0.000001", "2e9"] {
        let text = format!(
            "apiVersion: harness/v1\nname: q\ncloud:\n  quotas:\n    mutate: {{burst: 5, perSecond: {per_second}}}\nresources:\n  - {{name: b, kind: Bucket, count: 1}}\nphases:\n  - {{name: create, action: create}}\n"
        );
        let err = parse(&text, "t.yaml")
            .expect_err("an out-of-range refill")
            .to_string();
        assert!(
            err.contains("t.yaml:5:") && err.contains("expected a number from 1/86400"),
            "{err}"
        );
    }
}
