//! The XR section of every report, from one known result: the smoke fixture given a core
//! report of 45 XRs, 42 of whose circuits opened (one still open at the end, one with a
//! half-open span), core's requests with their no-op applies, two functions' calls and
//! latency. The text section is snapshotted; the HTML and its SVG are checked for their
//! parts and values; the JSON round-trips.

use std::collections::BTreeMap;
use std::path::PathBuf;

use harness::predict::plan;
use harness::report::{assertion_table, html};
use harness::result::core::{BreakerCounts, CoreReport, CoreRequests, OpenSpan, XrTiming};
use harness::result::{RunResult, evaluate};
use harness::scenario::load;

use crate::fixture::smoke_observations;

fn xr(i: usize, opens: u32, open_s: f64) -> XrTiming {
    XrTiming {
        group: "sets".to_owned(),
        name: format!("set-{i}"),
        ready_s: Some(10.0 + i as f64),
        slowest_composed_s: Some(9.0 + i as f64),
        composed: 5,
        opens,
        open_s,
    }
}

fn span(xr: usize, opened_s: f64, closed_s: Option<f64>, half_open_s: Vec<[f64; 2]>) -> OpenSpan {
    OpenSpan {
        xrd: "xbucketsets.example.org".to_owned(),
        xr: format!("set-{xr}"),
        opened_s,
        closed_s,
        triggered_by: format!("Bucket/set-{xr}-data-0"),
        half_open_s,
    }
}

fn core() -> CoreReport {
    // XRs 0–41 opened: 0 twice (one span with a half-open stretch), 1 still open at the end,
    // the rest once for 10 s; 42–44 stayed closed.
    let mut xrs: Vec<XrTiming> = (0..45)
        .map(|i| match i {
            0 => xr(0, 2, 70.0),
            1 => xr(1, 1, 100.0),
            i if i < 42 => xr(i, 1, 10.0),
            i => xr(i, 0, 0.0),
        })
        .collect();
    xrs[44].ready_s = None;
    let mut open_spans = vec![
        span(0, 20.0, Some(80.0), vec![[50.0, 80.0]]),
        span(0, 100.0, Some(110.0), Vec::new()),
        span(1, 60.0, None, Vec::new()),
    ];
    open_spans.extend((2..42).map(|i| span(i, 30.0, Some(40.0), Vec::new())));
    CoreReport {
        user_agent: "crossplane".to_owned(),
        requests: 900,
        by_verb: vec![
            CoreRequests {
                verb: "patch".to_owned(),
                resource: "buckets.mockcloud.example.org".to_owned(),
                count: 600,
                no_op: 450,
            },
            CoreRequests {
                verb: "patch".to_owned(),
                resource: "xbucketsets.example.org/status".to_owned(),
                count: 200,
                no_op: 150,
            },
            CoreRequests {
                verb: "get".to_owned(),
                resource: "buckets.mockcloud.example.org".to_owned(),
                count: 100,
                no_op: 0,
            },
        ],
        patches_changed: 200,
        patches_no_op: 600,
        function_calls: BTreeMap::from([("resources".to_owned(), 400), ("slow".to_owned(), 10)]),
        function_responses: BTreeMap::from([("resources".to_owned(), 400), ("slow".to_owned(), 8)]),
        function_seconds: BTreeMap::from([
            ("resources".to_owned(), 0.8),
            ("slow".to_owned(), 20.0),
        ]),
        // resources: all 400 within 5 ms; slow: 2 within 1 s, the other 6 within 5 s.
        function_buckets: BTreeMap::from([
            ("resources".to_owned(), vec![400; 11]),
            ("slow".to_owned(), vec![0, 0, 0, 0, 0, 0, 0, 2, 2, 8, 8]),
        ]),
        requests_per_bin: (0..120).map(|i| if i < 30 { 20 } else { 2 }).collect(),
        bin_s: 1.0,
        breakers: vec![BreakerCounts {
            xrd: "xbucketsets.example.org".to_owned(),
            opens: 43,
            closes: 42,
            allowed: 5000,
            dropped: 700,
            half_open_allowed: 3,
        }],
        xrs,
        open_spans,
        ended_s: 120.0,
        ..CoreReport::default()
    }
}

fn result() -> RunResult {
    let s = load(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/smoke.yaml"))
        .expect("loads");
    let mut r = evaluate(&s, &plan(&s), &smoke_observations());
    r.run.commit = Some("0123456789ab".to_owned());
    r.scenario.file = "scenarios/smoke.yaml".to_owned();
    r.core = Some(core());
    r
}

#[test]
fn the_text_reports_xr_section_is_as_snapshotted() {
    let table = assertion_table(&result());
    let section: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("Crossplane core"))
        .take_while(|l| l.starts_with("Crossplane core") || l.starts_with("  "))
        .collect();
    assert!(!section.is_empty(), "{table}");
    insta::assert_snapshot!("text_xr_section", section.join("\n"));
}

#[test]
fn the_html_reports_xr_section_draws_the_circuits_requests_functions_and_ttr() {
    let page = html(&result());
    let at = page
        .find("<h2>Crossplane core: composite resources</h2>")
        .expect("the section");
    let section = &page[at..page[at..].find("<h2>Phases").map_or(page.len(), |e| at + e)];
    // The applies that changed nothing beside those that did.
    assert!(
        section.contains(
            "800 PATCHes (server-side applies): 200 changed their object, 600 changed nothing"
        ),
        "{section}"
    );
    assert!(section.contains("<td class=\"n\">450</td>"));
    // The strip chart: the 40 longest-open of the 42 XRs that left closed, the rest counted.
    let strip_at = section
        .find("aria-label=\"circuit state per XR over the run\"")
        .expect("the strip chart");
    let strip = &section[strip_at..strip_at + section[strip_at..].find("</svg>").expect("closed")];
    assert!(section.contains("(42 of 45 XRs; the 3 others stayed closed throughout)"));
    assert!(section.contains("… and 2 more XRs whose circuit opened"));
    assert_eq!(strip.matches("<title>open ").count(), 3 + 38, "{strip}");
    // Longest open first: set-1 (open at the end), then set-0 with its half-open stretch.
    let first = strip.find("<title>set-1</title>").expect("set-1 drawn");
    let second = strip.find("<title>set-0</title>").expect("set-0 drawn");
    assert!(first < second);
    // Still open: its span runs to the end of the run.
    assert!(strip.contains("<title>open 60s–"), "{strip}");
    assert!(
        strip.contains(
            "(still open at its delete or the end), triggered by Bucket/set-1-data-0</title>"
        ),
        "{strip}"
    );
    assert_eq!(
        strip.matches("<title>half-open 50s–80s</title>").count(),
        1,
        "{strip}"
    );
    assert!(strip.contains("2× open, 70 s · Bucket/set-0-data-0"));
    for legend in [
        ">closed<",
        ">open<",
        ">half-open<",
        "time since the run started",
    ] {
        assert!(strip.contains(legend), "{legend}");
    }
    // Core stacked on the provider, and core per window against its bound.
    assert!(section.contains("aria-label=\"API requests per bin, provider and core\""));
    assert!(section.contains(">provider + core<"));
    // Function calls and their mean latency: 0.8 s over 400 responses, 20 s over 8.
    assert!(section.contains("<td>resources</td><td class=\"n\">400</td><td class=\"n\">400</td><td class=\"n\">2 ms</td>"), "{section}");
    assert!(
        section.contains("<td class=\"n\">2500 ms</td>"),
        "{section}"
    );
    // The XRs' time to Ready beside the managed resources'.
    assert!(section.contains("44 of 45 XRs Ready"), "{section}");
    assert!(section.contains("aria-label=\"XR time to Ready (XRs per bucket, seconds)\""));
    assert!(
        section.contains(">MR p50<") && section.contains(">XR p50<"),
        "{section}"
    );
}

#[test]
fn the_json_carries_the_spans_triggers_and_no_op_applies() {
    let r = result();
    let text = serde_json::to_string(&r).expect("serialises");
    let back: RunResult = serde_json::from_str(&text).expect("parses");
    let core = back.core.expect("core");
    assert_eq!((core.patches_changed, core.patches_no_op), (200, 600));
    assert_eq!(core.open_spans[0].triggered_by, "Bucket/set-0-data-0");
    assert_eq!(core.open_spans[0].half_open_s, [[50.0, 80.0]]);
    assert_eq!(core.requests_per_bin.len(), 120);
    // A result read back draws the same XR section (its bins kept, its request times not).
    let again = RunResult {
        core: Some(core),
        ..r.clone()
    };
    assert_eq!(html(&again), html(&r));
}

#[test]
fn function_latency_quantiles_are_read_from_the_histogram_as_prometheus_reads_them() {
    let c = core();
    // resources: 400 responses, all within the first bucket (5 ms).
    let p50 = c.function_quantile_s("resources", 0.5).unwrap();
    assert!((p50 - 0.0025).abs() < 1e-12, "{p50}");
    // slow: 2 within 1 s, 6 more within 5 s: the 4th of 8 is a third into (2.5 s, 5 s].
    let p50 = c.function_quantile_s("slow", 0.5).unwrap();
    assert!((p50 - (2.5 + 2.5 / 3.0)).abs() < 1e-12, "{p50}");
    // Past every finite bucket: the highest bound, 10 s.
    let mut past = c.clone();
    past.function_buckets.insert("slow".to_owned(), vec![0; 11]);
    assert_eq!(past.function_quantile_s("slow", 0.99), Some(10.0));
    assert_eq!(c.function_quantile_s("absent", 0.5), None);
}

#[test]
fn each_phases_function_latency_is_the_histograms_difference_over_the_phase() {
    use harness::result::core::{CorePhase, FunctionLatency};
    let of = |responses: u64, seconds: f64, first: u64| FunctionLatency {
        responses: BTreeMap::from([("resources".to_owned(), responses)]),
        seconds: BTreeMap::from([("resources".to_owned(), seconds)]),
        // Cumulative over core's 11 bounds: `first` within 5 ms, none more below 10 s.
        buckets: BTreeMap::from([("resources".to_owned(), vec![first; 11])]),
    };
    // At the fault's start: 10 responses, each within 5 ms; at its end 4 more of 90 s.
    let (start, end) = (of(10, 0.01, 10), of(14, 360.01, 10));
    let slow = end.since(&start);
    assert_eq!(slow.responses["resources"], 4);
    assert_eq!(slow.buckets["resources"], vec![0; 11]);
    assert!((slow.mean_s("resources").unwrap() - 90.0).abs() < 1e-9);
    // Past every finite bound: the highest, 10 s; the creation's within the first bucket.
    assert_eq!(slow.quantile_s("resources", 0.5), Some(10.0));
    let create = start.since(&FunctionLatency::default());
    let p99 = create.quantile_s("resources", 0.99).unwrap();
    assert!((p99 - 0.00495).abs() < 1e-12, "{p99}");
    let phase = |name: &str, l: FunctionLatency| CorePhase {
        phase: name.to_owned(),
        action: "hold".to_owned(),
        function_latency: l,
        ..CorePhase::default()
    };
    let mut r = result();
    r.core.as_mut().unwrap().phases = vec![phase("create", create), phase("slow", slow)];
    let table = assertion_table(&r);
    let at = table
        .find("  function latency by phase (p50 / p99, responses):")
        .unwrap_or_else(|| panic!("{table}"));
    let lines: Vec<&str> = table[at..].lines().skip(1).take(2).collect();
    assert_eq!(
        lines,
        [
            "    create: resources 2.5 ms / 5 ms (10)",
            "    slow: resources 10000 ms / 10000 ms (4)"
        ],
        "{table}"
    );
    let page = html(&r);
    assert!(
        page.contains("<tr><td>slow</td><td>resources</td><td class=\"n\">4</td><td class=\"n\">90000 ms</td><td class=\"n\">10000 ms</td><td class=\"n\">10000 ms</td></tr>"),
        "{page}"
    );
    // The shares round-trip through result.json; a phase without responses writes none.
    let text = serde_json::to_string(&r).unwrap();
    assert!(text.contains("\"function_latency\""));
    let back: RunResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back.core.unwrap().phases, r.core.unwrap().phases);
    let none = serde_json::to_value(phase("hold", FunctionLatency::default())).unwrap();
    assert!(none.get("function_latency").is_none(), "{none}");
}

#[test]
fn the_headline_counts_unmodeled_and_unmeasured_verdicts_apart_from_those_that_held() {
    use harness::result::Outcome;
    let mut r = result();
    // Every verdict held, then one is UNMEASURED (as a core process's breakerOpens is).
    for v in &mut r.verdicts {
        v.pass = true;
        v.outcome = Outcome::Pass;
    }
    let n = r.verdicts.len();
    assert_eq!(r.headline(), format!("PASS: all {n} assertions held"));
    r.verdicts[0].outcome = Outcome::Unmeasured;
    assert_eq!(
        r.headline(),
        format!(
            "PASS: {} of {n} assertions held, 1 UNMEASURED (what they read was not there to read: see their notes)",
            n - 1
        )
    ); // With an UNMODELED one too, both are named and neither counts as held.
    r.verdicts[1].outcome = Outcome::Unmodeled;
    assert_eq!(
        r.headline(),
        format!(
            "PASS: {} of {n} assertions held, 1 UNMODELED (the model does not cover them: see their notes), 1 UNMEASURED (what they read was not there to read: see their notes)",
            n - 2
        )
    );
}
