use super::*;

fn entry(agent: &str) -> Entry {
    Entry {
        seq: 0,
        at_us: 0,
        verb: Verb::List,
        group: "".into(),
        resource: "configmaps".into(),
        namespace: "default".into(),
        name: "".into(),
        user_agent: agent.into(),
        status: 200,
        latency_us: 1_000,
        changed: None,
    }
}

#[test]
fn entries_are_numbered_and_read_back_from_a_sequence_number() {
    let journal = Journal::new(10, Clock::new());
    for agent in ["a", "b", "a"] {
        journal.record(entry(agent));
    }
    assert_eq!(journal.last_seq(), 3);
    assert_eq!(
        journal.since(1).iter().map(|e| e.seq).collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(journal.counts_by_user_agent()["a"], 2);
    let page = journal.page(2);
    assert_eq!((page.last_seq, page.entries.len()), (3, 1));
    let wire = serde_json::to_value(&page).unwrap();
    assert_eq!(wire["entries"][0]["verb"], "list");
    assert_eq!(wire["entries"][0]["atUs"], 0);
    assert_eq!(wire["countsByUserAgent"]["a"], 2);
    let back: JournalPage = serde_json::from_value(wire).unwrap();
    assert_eq!(back, page);
}

#[test]
fn a_full_journal_drops_its_oldest_entries_but_keeps_counting() {
    let journal = Journal::new(2, Clock::new());
    for _ in 0..5 {
        journal.record(entry("a"));
    }
    assert_eq!(
        journal.since(0).iter().map(|e| e.seq).collect::<Vec<_>>(),
        [4, 5]
    );
    assert_eq!(journal.counts_by_user_agent()["a"], 5);
}

#[test]
fn the_heap_it_holds_follows_the_kept_entries_and_their_distinct_strings() {
    let journal = Journal::new(2, Clock::new());
    assert_eq!(journal.heap_bytes(), 0);
    let slots = |j: &Journal| j.inner.lock().entries.capacity() * std::mem::size_of::<Slot>();
    let strings = |j: &Journal| j.inner.lock().strings.heap_bytes();
    assert_eq!(std::mem::size_of::<Slot>(), 48);
    journal.record(entry("agent"));
    // "", "configmaps", "default", "agent": 0 + 10 + 7 + 5 bytes of text, each once.
    assert_eq!(journal.inner.lock().strings.bytes, 22);
    assert_eq!(journal.heap_bytes(), slots(&journal) + strings(&journal));
    // A thousand more of the same strings add no text, and two slots are kept.
    for _ in 0..1000 {
        journal.record(entry("agent"));
    }
    assert_eq!(journal.inner.lock().strings.bytes, 22);
    assert_eq!(journal.inner.lock().entries.len(), 2);
    journal.record(entry("ab"));
    assert_eq!(journal.inner.lock().strings.bytes, 24);
    // Read back, an entry names its strings as recorded.
    let last = journal.since(0).pop().unwrap();
    assert_eq!(
        (
            &*last.user_agent,
            &*last.resource,
            &*last.namespace,
            &*last.name
        ),
        ("ab", "configmaps", "default", "")
    );
    assert_eq!(journal.heap_bytes(), slots(&journal) + strings(&journal));
}

#[test]
fn request_totals_count_every_request_by_series_like_the_real_metric() {
    let journal = Journal::new(1, Clock::new());
    let mut patch = entry("p");
    patch.verb = Verb::Patch;
    patch.group = "mockcloud.example.org".into();
    patch.resource = "buckets/status".into();
    for e in [entry("a"), entry("b"), patch, {
        let mut d = entry("a");
        d.verb = Verb::Discovery;
        d
    }] {
        journal.record(e);
    }
    let text = journal.prometheus_text();
    assert!(text.contains("# TYPE apiserver_request_total counter"));
    assert!(text.contains(
        "apiserver_request_total{code=\"200\",component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"configmaps\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"\"} 2\n"
    ), "{text}");
    assert!(text.contains(
        "group=\"mockcloud.example.org\",resource=\"buckets\",scope=\"namespace\",subresource=\"status\",verb=\"PATCH\""
    ), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("apiserver_request_total{"))
            .count(),
        2,
        "discovery is not counted"
    );
}

#[test]
fn the_paths_kube_apiserver_counts_without_a_resource_are_counted_as_it_labels_them() {
    let journal = Journal::new(10, Clock::new());
    for path in [
        "/openapi/v3",
        "/openapi/v3/apis/mockcloud.example.org/v1alpha1",
        "/openapi/v3/api/v1",
        "/readyz",
        "/api",
        "/apis",
        "/apis/mockcloud.example.org/v1alpha1",
        "/version",
    ] {
        let mut e = entry("kubectl");
        e.verb = Verb::Discovery;
        e.namespace = "".into();
        e.resource = path.into();
        journal.record(e);
    }
    let text = journal.prometheus_text();
    let counted: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
        .collect();
    // endpoints/metrics: InstrumentHandlerFunc("GET", "", "", "", SUBRESOURCE, "", "", …).
    assert_eq!(
        counted,
        [
            "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 1",
            "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"openapi/v3\",verb=\"GET\",version=\"\"} 1",
            "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"openapi/v3/\",verb=\"GET\",version=\"\"} 2",
        ],
        "legacy discovery and /version are not counted: {text}"
    );
}

#[test]
fn durations_are_a_histogram_with_the_apiservers_buckets() {
    let journal = Journal::new(1, Clock::new());
    let mut slow = entry("a");
    slow.latency_us = 300_000;
    for e in [entry("a"), slow] {
        journal.record(e);
    }
    let text = journal.prometheus_text();
    let labels = "component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"configmaps\",scope=\"namespace\",subresource=\"\",verb=\"LIST\",version=\"\"";
    for (le, n) in [("0.005", 1), ("0.2", 1), ("0.4", 2), ("60", 2), ("+Inf", 2)] {
        let line =
            format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"{le}\"}} {n}\n");
        assert!(text.contains(&line), "{line} in {text}");
    }
    assert!(
        text.contains(&format!(
            "apiserver_request_duration_seconds_sum{{{labels}}} 0.301\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "apiserver_request_duration_seconds_count{{{labels}}} 2\n"
        )),
        "{text}"
    );
}

#[test]
fn a_watch_is_long_running_until_it_ends_then_counted_with_its_whole_duration() {
    // endpoints/metrics/metrics.go: RecordLongRunning holds the gauge while the watch
    // is served; MonitorRequest counts and times it when the handler returns.
    let journal = Journal::new(1, Clock::new());
    let mut watch = entry("a");
    watch.verb = Verb::Watch;
    let (_, open) = journal.record_labelled(watch, Some("WATCH"), "v1", true);
    let series = open.expect("a streaming watch is counted later");
    let labels = "group=\"\",resource=\"configmaps\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1\"";
    let text = journal.prometheus_text();
    assert!(
        text.contains(&format!(
            "apiserver_longrunning_requests{{component=\"apiserver\",{labels}}} 1\n"
        )),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("apiserver_request_total{") && l.contains("WATCH")),
        "not counted while open: {text}"
    );
    journal.long_running_ended(series, 200, Duration::from_secs(90));
    let text = journal.prometheus_text();
    assert!(
        text.contains(&format!(
            "apiserver_request_total{{code=\"200\",component=\"apiserver\",dry_run=\"\",{labels}}} 1\n"
        )),
        "{text}"
    );
    let histogram = format!("component=\"apiserver\",dry_run=\"\",{labels}");
    for (le, n) in [("60", 0), ("+Inf", 1)] {
        let line =
            format!("apiserver_request_duration_seconds_bucket{{{histogram},le=\"{le}\"}} {n}\n");
        assert!(text.contains(&line), "{line} in {text}");
    }
    assert!(
        text.contains(&format!(
            "apiserver_request_duration_seconds_sum{{{histogram}}} 90\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "apiserver_longrunning_requests{{component=\"apiserver\",{labels}}} 0\n"
        )),
        "{text}"
    );
}
