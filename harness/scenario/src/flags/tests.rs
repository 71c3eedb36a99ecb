use super::*;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn upjet_flags_read_as_kingpin_reads_them_with_their_defaults() {
    let got = read(
        Dialect::Upjet,
        &args(&[
            "--debug",
            "--max-reconcile-rate",
            "5",
            "-s",
            "1h",
            "--poll=5m",
            "--terraform-version=1.5",
        ]),
    )
    .unwrap();
    let s = &got.settings;
    assert_eq!(s.max_reconcile_rate.get(), 5);
    assert_eq!(s.poll_interval, Duration::from_secs(300));
    assert_eq!(
        s.poll_jitter_percent, 5,
        "the default jitter, 5 % of --poll"
    );
    assert!(s.scoped_buckets);
    assert_eq!(s.min_poll_interval, Duration::ZERO);
    assert_eq!(
        got.client,
        ClientLimits {
            qps: 25.0,
            burst: 50.0
        }
    );
}

#[test]
fn an_absolute_jitter_must_be_a_whole_percent_of_the_poll() {
    let s = read(Dialect::Upjet, &args(&["--poll=10m", "--poll-jitter=1m"])).unwrap();
    assert_eq!(s.settings.poll_jitter_percent, 10);
    let e = read(Dialect::Upjet, &args(&["--poll=10m", "--poll-jitter=45s"])).unwrap_err();
    assert_eq!(e.flag, "--poll-jitter");
}

#[test]
fn crossplane_runtime_defaults_are_provider_templates() {
    let s = read(Dialect::CrossplaneRuntime, &[]).unwrap().settings;
    assert_eq!(
        (
            s.max_reconcile_rate.get(),
            s.poll_interval,
            s.poll_jitter_percent,
            s.scoped_buckets
        ),
        (10, Duration::from_secs(60), 0, false)
    );
}

#[test]
fn our_providers_flags_round_trip_through_write_and_read() {
    let mut s = Settings::new(NonZeroU32::new(7).unwrap());
    s.poll_interval = Duration::from_secs(20);
    s.scoped_buckets = true;
    s.backoff_base = Some(Duration::from_millis(500));
    let line: Vec<String> = write(Dialect::Loadtest, &s)
        .into_iter()
        .map(|(f, v)| format!("--{f}={v}"))
        .collect();
    let back = read(Dialect::Loadtest, &line).unwrap().settings;
    assert!(differ(Dialect::Loadtest, &back, &s).is_empty(), "{line:?}");
    let d = read(
        Dialect::Loadtest,
        &args(&[
            "--max-reconcile-rate",
            "3",
            "--scoped-buckets",
            "--kubeconfig",
            "k",
        ]),
    )
    .unwrap()
    .settings;
    assert!(d.scoped_buckets);
    let diffs = differ(Dialect::Loadtest, &d, &s);
    assert_eq!(diffs[0].flag, "max-reconcile-rate");
    assert_eq!((diffs[0].have.as_str(), diffs[0].want.as_str()), ("3", "7"));
}

#[test]
fn each_family_derives_its_client_limiters_from_the_command_line() {
    let names = |d, a: &[&str]| clients::names(&read(d, &args(a)).unwrap().limiters);
    assert_eq!(names(Dialect::CrossplaneRuntime, &[]), "manager, events");
    assert_eq!(
        names(Dialect::CrossplaneRuntime, &["-l"]),
        "manager, events, leader-election"
    );
    assert_eq!(
        names(
            Dialect::Upjet,
            &["--leader-election=true", "--no-leader-election"]
        ),
        "manager, events"
    );
    assert_eq!(names(Dialect::Loadtest, &[]), "shared");
    assert_eq!(
        names(Dialect::Loadtest, &["--event-client", "separate"]),
        "controllers, events"
    );
    let r5 = read(Dialect::Upjet, &args(&["--max-reconcile-rate=5", "-l"])).unwrap();
    assert!(r5.limiters.iter().all(|l| l.limits == r5.client));
}

#[test]
fn our_providers_event_client_and_reconcile_requests_are_read_and_written() {
    let s = Settings::default()
        .event_client(limiter::crossplane::EventClient::Separate)
        .reconcile_requests(limiter::crossplane::ReconcileRequests::Ignore);
    let written = write(Dialect::Loadtest, &s);
    assert!(written.contains(&("event-client", "separate".to_owned())));
    assert!(written.contains(&("reconcile-requests", "ignore".to_owned())));
    let line: Vec<String> = written
        .into_iter()
        .map(|(f, v)| format!("--{f}={v}"))
        .collect();
    let back = read(Dialect::Loadtest, &line).unwrap().settings;
    assert_eq!(
        (back.event_client, back.reconcile_requests),
        (s.event_client, s.reconcile_requests)
    );
    let diffs = differ(Dialect::Loadtest, &Settings::default(), &s);
    let flags: Vec<&str> = diffs.iter().map(|d| d.flag).collect();
    assert_eq!(flags, ["event-client", "reconcile-requests"]);
    let e = read(Dialect::Loadtest, &args(&["--reconcile-requests=honor"])).unwrap_err();
    assert!(e.to_string().ends_with("expected honour or ignore"), "{e}");
}

#[test]
fn a_bad_value_names_its_flag_and_what_was_expected() {
    let e = read(
        Dialect::CrossplaneRuntime,
        &args(&["--max-reconcile-rate=0"]),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--max-reconcile-rate=\"0\": expected an integer ≥ 1"
    );
    let e = read(Dialect::CrossplaneRuntime, &args(&["--poll", "soon"])).unwrap_err();
    assert!(e.to_string().starts_with("--poll=\"soon\""), "{e}");
}
