//! The metrics sources on scrapes written by hand.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::result::{ApiCount, ApiRequest, ServerThrottling};
use crate::run::clock::RunClock;
use crate::run::own::OwnRequests;
use crate::run::source::report::PROVIDER_FLOW_SCHEMA;

/// A scraper of one server (its reads are made by the tests).
fn scraper() -> Scraper {
    Scraper {
        targets: Vec::new(),
        growth: Growth::Resets,
    }
}

/// One server's scrape.
fn one(text: &str) -> Scrapes {
    vec![(Arc::from("a"), text.to_owned())]
}

fn series(verb: &str, group: &str, resource: &str, sub: &str, n: u64) -> String {
    format!(
        "apiserver_request_total{{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"{group}\",resource=\"{resource}\",scope=\"namespace\",subresource=\"{sub}\",verb=\"{verb}\",version=\"v1\"}} {n}\n"
    )
}

fn table(requests: &[ApiRequest]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for r in requests {
        let key = format!("{} {}", r.verb, r.resource.as_deref().unwrap_or("?"));
        *out.entry(key).or_default() += 1;
    }
    out
}

#[test]
fn the_flow_schema_counters_are_found_by_their_label() {
    let text = "apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"} 41\n\
apiserver_flowcontrol_rejected_requests_total{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\",reason=\"queue-full\"} 2\n\
apiserver_flowcontrol_dispatched_requests_total{flow_schema=\"service-accounts\",priority_level=\"workload-low\"} 7\n";
    assert_eq!(flow_schema_total(text, PROVIDER_FLOW_SCHEMA), Some(43));
    assert_eq!(flow_schema_total(text, "absent"), None);
}

#[test]
fn request_counts_cover_every_group_and_count_watches_from_their_start() {
    let text = [
        series("LIST", "mockcloud.example.org", "buckets", "", 3),
        series("PATCH", "mockcloud.example.org", "buckets", "status", 5),
        series("APPLY", "mockcloud.example.org", "buckets", "status", 2),
        series("POST", "events.k8s.io", "events", "", 4),
        series("POST", "", "events", "", 1),
        series("GET", "", "secrets", "", 6),
        series("WATCH", "", "secrets", "", 1),
        series("GET", "", "", "/apis", 2),
        "apiserver_longrunning_requests{component=\"apiserver\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"} 2\n".to_owned(),
    ]
    .concat();
    let counts: Vec<(String, u64)> = request_counts(&text)
        .into_iter()
        .map(|(k, n)| (format!("{} {}", k.verb, k.resource), n))
        .collect();
    let want = [
        ("create events", 1),
        ("create events.events.k8s.io", 4),
        ("discovery /apis", 2),
        ("get secrets", 6),
        ("list buckets.mockcloud.example.org", 3),
        ("patch buckets.mockcloud.example.org/status", 7),
        ("watch secrets", 3),
    ]
    .map(|(k, n)| (k.to_owned(), n));
    assert_eq!(counts, want);
}

#[test]
fn a_request_the_server_counts_without_a_resource_is_named_alike_from_the_label_and_the_path() {
    use crate::run::own::request_key;
    let get = http::Method::GET;
    for (path, label) in [
        (
            "/openapi/v3/apis/mockcloud.example.org/v1alpha1",
            "openapi/v3/",
        ),
        ("/openapi/v3", "openapi/v3"),
        ("/livez", "/livez"),
    ] {
        let text = format!(
            "apiserver_request_total{{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"{label}\",verb=\"GET\",version=\"\"}} 1\n"
        );
        let counts = request_counts(&text);
        assert_eq!(
            counts.keys().collect::<Vec<_>>(),
            [&request_key(&get, path, "")],
            "{path}"
        );
    }
}

#[tokio::test]
async fn the_harness_own_requests_are_taken_out_even_when_the_server_counts_them_later() {
    let own = OwnRequests::default();
    let first = series("GET", "", "secrets", "", 10);
    let mut totals = RequestTotals::start(scraper(), RunClock::start(), own.clone(), &one(&first));
    totals.first_read_from(400_000);
    // The harness reads a Secret; the server has not counted it yet, the provider's
    // two reads it has.
    let get = http::Request::get("/api/v1/namespaces/a/secrets/s")
        .body(kube::client::Body::empty())
        .unwrap();
    own.count(&get);
    let got = totals.absorb(&one(&series("GET", "", "secrets", "", 12)), 1_000_000);
    assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 1)]));
    assert_eq!(
        got[0].sent_from_us,
        Some(400_000),
        "after the baseline began"
    );
    // Now it has, and one more of the provider's.
    let got = totals.absorb(&one(&series("GET", "", "secrets", "", 14)), 2_000_000);
    assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
    assert!(got.iter().all(|r| r.at_us == 2_000_000 && r.from_provider));
}

/// `apiserver_request_duration_seconds` of one series of `verb`, with `counts[i]`
/// requests at or under the `i`-th of the bounds 0.005, 0.025, 0.05 (cumulative), and
/// `all` in all.
fn durations(verb: &str, counts: [u64; 3], all: u64) -> String {
    let labels = format!(
        "component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"secrets\",scope=\"namespace\",subresource=\"\",verb=\"{verb}\",version=\"v1\""
    );
    let mut out = String::new();
    for (le, n) in ["0.005", "0.025", "0.05"].into_iter().zip(counts) {
        out.push_str(&format!(
            "apiserver_request_duration_seconds_bucket{{{labels},le=\"{le}\"}} {n}\n"
        ));
    }
    out + &format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {all}\n")
}

#[tokio::test]
async fn the_longest_request_is_the_smallest_duration_bucket_that_holds_every_one_since_the_first_scrape()
 {
    let own = OwnRequests::default();
    // Before the run: one GET of 1 s (past every bucket but +Inf); watches left out.
    let first = durations("GET", [5, 5, 5], 6) + &durations("WATCH", [0, 0, 0], 3);
    let mut totals = RequestTotals::start(scraper(), RunClock::start(), own, &one(&first));
    assert_eq!(totals.longest_request(), Some(0.0), "none since the first");
    // Two more GETs, one under 5 ms and one under 25 ms; a watch of 10 minutes ended.
    let text = durations("GET", [6, 7, 7], 8) + &durations("WATCH", [0, 0, 0], 4);
    totals.absorb(&one(&text), 1_000_000);
    assert_eq!(totals.longest_request(), Some(0.025));
    // One past the last bucket: not bounded.
    let text = durations("GET", [6, 7, 7], 9) + &durations("WATCH", [0, 0, 0], 4);
    totals.absorb(&one(&text), 2_000_000);
    assert_eq!(totals.longest_request(), None);
}

#[tokio::test]
async fn the_servers_throttling_of_the_flow_schema_is_its_rejections_and_queued_requests() {
    let text = |rejected: u64, count: u64, zero: u64, sum: f64| {
        let l = "flow_schema=\"loadtest-provider\",priority_level=\"tiny\"";
        format!(
            "apiserver_flowcontrol_dispatched_requests_total{{{l}}} 10\n\
apiserver_flowcontrol_rejected_requests_total{{{l},reason=\"time-out\"}} {rejected}\n\
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute=\"true\",{l},le=\"0.005\"}} {zero}\n\
apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute=\"true\",{l},le=\"1\"}} {count}\n\
apiserver_flowcontrol_request_wait_duration_seconds_sum{{execute=\"true\",{l}}} {sum}\n\
apiserver_flowcontrol_request_wait_duration_seconds_count{{execute=\"true\",{l}}} {count}\n\
apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"other\",priority_level=\"tiny\",reason=\"time-out\"}} 99\n"
        )
    };
    let mut fs = FlowSchema::start(
        scraper(),
        RunClock::start(),
        OwnRequests::default(),
        &one(&text(1, 10, 8, 0.5)),
    )
    .unwrap();
    assert!(!fs.throttling().held_back());
    let _ = fs.absorb(&one(&text(4, 30, 20, 2.75)), 1);
    let th = fs.throttling();
    assert_eq!(
        th,
        ServerThrottling {
            priority_level: "tiny".into(),
            rejected: 3,
            queued: 8,
            queued_s: 2.25
        }
    );
    assert!(th.held_back());
    assert_eq!(throttling("", PROVIDER_FLOW_SCHEMA), None);
}

#[tokio::test]
async fn the_flow_schema_counts_and_request_totals_name_the_verbs() {
    let flow = |n: u64| {
        format!(
            "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"}} {n}\n"
        )
    };
    let first = [flow(5), series("GET", "", "secrets", "", 5)].concat();
    let mut fs = FlowSchema::start(
        scraper(),
        RunClock::start(),
        OwnRequests::default(),
        &one(&first),
    )
    .expect("the series is there");
    // The baseline scrape began at 0.5 s: what the next read counts was sent after that,
    // less the longest request.
    fs.first_read_from(500_000);
    // Two dispatched; one finished so far.
    let mut got = fs.absorb(
        &one(&[flow(7), series("GET", "", "secrets", "", 6)].concat()),
        1,
    );
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|r| r.sent_from_us == Some(500_000)),
        "{got:?}"
    );
    // The second finished, and another client's request too.
    got.extend(
        fs.absorb(
            &one(&[
                flow(7),
                series("GET", "", "secrets", "", 7),
                series("LIST", "", "pods", "", 1),
            ]
            .concat()),
            2,
        ),
    );
    let (count, notes) = fs.settle(&mut got);
    assert_eq!(count, ApiCount::Exact);
    assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("counted 1 requests beyond"), "{notes:?}");
}

#[tokio::test]
async fn replicas_are_summed_each_its_own_series_so_a_lower_count_on_another_is_no_reset() {
    // Two replicas' scrapes, each with its count of GET secrets.
    let replicas = |first: u64, second: u64| {
        vec![
            (
                Arc::from("10.0.0.1:6443"),
                series("GET", "", "secrets", "", first),
            ),
            (
                Arc::from("10.0.0.2:6443"),
                series("GET", "", "secrets", "", second),
            ),
        ]
    };
    let mut totals = RequestTotals::start(
        scraper(),
        RunClock::start(),
        OwnRequests::default(),
        &replicas(10, 3),
    );
    let got = totals.absorb(&replicas(12, 4), 1);
    assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 3)]));
    // The second replica restarted: its counter's new value is all growth.
    let got = totals.absorb(&replicas(12, 2), 2);
    assert_eq!(table(&got), BTreeMap::from([("get secrets".to_owned(), 2)]));
}

#[test]
fn behind_one_address_a_lower_count_is_another_replica_and_only_a_new_high_is_growth() {
    // Reads through a load balancer land on replica A (10), B (3), A (12), B (6).
    let mut seen = 10;
    let mut grew = 0;
    for now in [3, 12, 6, 13] {
        let (g, keep) = Growth::HighWater.step(seen, now);
        grew += g;
        seen = keep;
    }
    // A's 3 more; B's counts are another series, not resets.
    assert_eq!((grew, seen), (3, 13));
    let (mut seen, mut as_resets) = (10, 0);
    for now in [3, 12, 6, 13] {
        as_resets += Growth::Resets.step(seen, now).0;
        seen = now;
    }
    assert_eq!(
        as_resets,
        3 + 9 + 6 + 7,
        "what taking them for resets counts"
    );
    assert_eq!(Growth::Resets.step(10, 3), (3, 3));
    assert_eq!(Growth::Resets.step(10, 12), (2, 12));
}

#[tokio::test]
async fn the_flow_schema_is_summed_over_replicas_each_from_zero_until_its_series_appears() {
    let flow = |n: u64| {
        format!(
            "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"loadtest-provider\",priority_level=\"workload-low\"}} {n}\n"
        )
    };
    let a = |text: String| (Arc::<str>::from("a"), text);
    let b = |text: String| (Arc::<str>::from("b"), text);
    let start = |first: &Scrapes| {
        FlowSchema::start(scraper(), RunClock::start(), OwnRequests::default(), first)
    };
    assert!(start(&vec![a(String::new()), b(String::new())]).is_none());
    // B has classified none of the provider's requests yet: its series appears later.
    let mut fs = start(&vec![a(flow(5)), b(String::new())]).unwrap();
    assert_eq!(fs.absorb(&vec![a(flow(6)), b(flow(2))], 1).len(), 3);
    assert_eq!(fs.absorb(&vec![a(flow(6)), b(flow(4))], 2).len(), 2);
}

/// `RequestTotals` fed scrapes at `scrapes_us` of requests at `true_us` (sorted),
/// the dates it gives them.
fn dated(true_us: &[u64], scrapes_us: &[u64]) -> Vec<u64> {
    let text = |at: u64| {
        series(
            "GET",
            "",
            "secrets",
            "",
            true_us.iter().filter(|&&t| t <= at).count() as u64,
        )
    };
    let mut totals = RequestTotals::start(
        scraper(),
        RunClock::start(),
        OwnRequests::default(),
        &one(&text(0)),
    );
    let mut out: Vec<u64> = scrapes_us
        .iter()
        .flat_map(|&at| totals.absorb(&one(&text(at)), at))
        .map(|r| r.at_us)
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn a_scraped_counters_busiest_second_is_within_the_most_requests_of_its_longest_gap() {
    use crate::measure::windowed_max;
    const SECOND: u64 = 1_000_000;
    // Requests at 0.1 s and 1.9 s, three each: at most three in any second; scraped
    // at 1 s and 2 s, six in one. The bound is reached: three in a gap of 1 s.
    let true_us = [100_000; 3]
        .into_iter()
        .chain([1_900_000; 3])
        .collect::<Vec<_>>();
    let got = dated(&true_us, &[SECOND, 2 * SECOND]);
    assert_eq!(windowed_max(&true_us, SECOND).count, 3);
    assert_eq!(windowed_max(&got, SECOND).count, 6);
    assert_eq!(windowed_max(&true_us, SECOND).count + 3, 6);
    // Bursts and lulls over 20 s, scraped every 100 ms with up to 60 ms of jitter: the
    // busiest second is off by no more than the most requests in the longest gap.
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut true_us: Vec<u64> = (0..3_000)
        .map(|i| {
            let burst = (i % 5) * 4 * SECOND;
            burst + next(if i % 3 == 0 { 4 * SECOND } else { 800_000 }) + 1
        })
        .collect();
    true_us.sort_unstable();
    let mut scrapes = Vec::new();
    let mut at = 0;
    while at <= 21 * SECOND {
        at += 100_000 + next(60_000);
        scrapes.push(at);
    }
    let gap = scrapes.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    let got = dated(&true_us, &scrapes);
    assert_eq!(got.len(), true_us.len(), "every request dated once");
    let (observed, truth) = (
        windowed_max(&got, SECOND).count,
        windowed_max(&true_us, SECOND).count,
    );
    let bound = windowed_max(&true_us, gap).count;
    assert!(
        observed.abs_diff(truth) <= bound,
        "busiest second {observed}, truly {truth}, bound {bound}"
    );
    // What the apiRequests check judges, from the dated requests alone: each is dated at
    // most `gap` after it was sent, so the busiest second lies between the most dated in
    // any 1 s − gap and the most dated in any 1 s + gap.
    let (low, high) = (
        windowed_max(&got, SECOND - gap).count,
        windowed_max(&got, SECOND + gap).count,
    );
    assert!(
        low <= truth && truth <= high,
        "{truth} not in [{low}, {high}]"
    );
    assert!(
        bound < truth / 2,
        "the bound is not trivial: {bound} of {truth}"
    );
}
