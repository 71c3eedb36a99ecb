//! Watches through kube-runtime: watcher and reflector round trips, forced relists,
//! bookmarks, resuming and streaming lists.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use mock_apiserver::Config;
use serde_json::json;

use crate::support::{Bucket, client, create_bucket, server_with_buckets};

/// Waits (bounded) until `check` holds for the reflector store.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test(start_paused = true)]
async fn a_reflector_follows_creates_updates_and_deletes() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    create_bucket(&buckets, "before", "eu").await;

    let (reader, writer) = reflector::store();
    let stream =
        reflector(writer, watcher(buckets.clone(), watcher::Config::default())).applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 1);

    create_bucket(&buckets, "after", "us").await;
    eventually("the new bucket is seen", || reader.state().len() == 2).await;

    buckets
        .patch(
            "after",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"region": "ap"}})),
        )
        .await
        .unwrap();
    let after_ref = reflector::ObjectRef::new("after").within("default");
    eventually("the update is seen", || {
        reader
            .get(&after_ref)
            .is_some_and(|b| b.spec.region == "ap")
    })
    .await;

    buckets
        .delete("before", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the delete is seen", || reader.state().len() == 1).await;
    task.abort();
}

#[tokio::test(start_paused = true)]
async fn expired_history_makes_the_watcher_relist_after_an_in_stream_410() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    create_bucket(&buckets, "b1", "eu").await;

    let mut events = watcher(buckets.clone(), watcher::Config::default()).boxed();
    let mut init_done = 0;
    while init_done == 0 {
        if let Some(Ok(watcher::Event::InitDone)) = events.next().await {
            init_done += 1;
        }
    }
    let lists_before = server
        .journal()
        .since(0)
        .iter()
        .filter(|e| e.verb == mock_apiserver::Verb::List)
        .count();
    server.expire_watches();

    let mut saw_410 = false;
    for _ in 0..20 {
        match events.next().await {
            Some(Err(watcher::Error::WatchError(status))) => {
                assert_eq!(status.code, 410);
                saw_410 = true;
            }
            Some(Ok(watcher::Event::InitDone)) => break,
            Some(_) => {}
            None => panic!("the watcher stream ended"),
        }
    }
    assert!(saw_410, "the watcher saw the in-stream 410");
    let lists_after = server
        .journal()
        .since(0)
        .iter()
        .filter(|e| e.verb == mock_apiserver::Verb::List)
        .count();
    assert_eq!(lists_after, lists_before + 1, "the watcher relisted once");
    assert!(
        server.journal().since(0).iter().all(|e| e.status != 410),
        "never an HTTP 410"
    );
}

/// The events of a watch from `start` that the server ends after `timeout` seconds.
async fn watch_from(
    buckets: &Api<Bucket>,
    start: u64,
    timeout: u32,
) -> Vec<Result<WatchEvent<Bucket>, kube::Error>> {
    buckets
        .watch(&WatchParams::default().timeout(timeout), &start.to_string())
        .await
        .unwrap()
        .collect()
        .await
}

#[tokio::test(start_paused = true)]
async fn a_watch_from_a_too_old_version_answers_200_with_an_error_event() {
    let server = server_with_buckets(
        Config::default().with_watch_history(mock_apiserver::WatchHistory::Fixed(2)),
    );
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let start = server.resource_version();
    for i in 0..5 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let events = watch_from(&buckets, start, 10).await;
    assert_eq!(events.len(), 1);
    match &events[0] {
        Ok(WatchEvent::Error(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected an ERROR event, got {other:?}"),
    }
}

/// Watches from `start` and returns how many objects it replays, or `None` for the
/// in-stream 410.
async fn replayed_from(buckets: &Api<Bucket>, start: u64) -> Option<usize> {
    let mut added = 0;
    for event in watch_from(buckets, start, 1).await {
        match event {
            Ok(WatchEvent::Added(_)) => added += 1,
            Ok(WatchEvent::Error(status)) if status.code == 410 => return None,
            _ => {}
        }
    }
    Some(added)
}

#[tokio::test(start_paused = true)]
async fn the_default_history_keeps_a_burst_beyond_100_events_but_not_events_older_than_75_s() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    // 150 creates within a second: the history doubles from 100 to 200 and keeps them all.
    let start = server.resource_version();
    for i in 0..150 {
        create_bucket(&buckets, &format!("burst-{i}"), "eu").await;
    }
    assert_eq!(replayed_from(&buckets, start).await, Some(150));
    // 300 more, 1 s apart: it grows once more (to 400) while its oldest is younger than
    // 75 s; full again, with its newest quarter (the last 100 creates) past 75 s, it
    // halves to 200, where its newest quarter (50 s) stays fresh: the last 200 creates.
    let spread = server.resource_version();
    for i in 0..300 {
        create_bucket(&buckets, &format!("spread-{i}"), "eu").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(replayed_from(&buckets, start).await, None);
    assert_eq!(replayed_from(&buckets, spread).await, None);
    let end = server.resource_version();
    assert_eq!(replayed_from(&buckets, end - 200).await, Some(200));
    assert_eq!(replayed_from(&buckets, end - 201).await, None);
}

#[tokio::test(start_paused = true)]
async fn watches_resume_from_a_resource_version_and_get_bookmarks() {
    let server =
        server_with_buckets(Config::default().with_bookmark_interval(Duration::from_secs(2)));
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    create_bucket(&buckets, "b1", "eu").await;
    let resume_from = server.resource_version();
    create_bucket(&buckets, "b2", "eu").await;
    let latest = server.resource_version();

    let events: Vec<WatchEvent<Bucket>> = buckets
        .watch(&WatchParams::default().timeout(5), &resume_from.to_string())
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let added: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Added(b) => b.metadata.name.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(
        added,
        ["b2"],
        "only events after the resume point are replayed"
    );
    let bookmarks: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Bookmark(b) => b.metadata.resource_version.parse().ok(),
            _ => None,
        })
        .collect();
    assert!(
        bookmarks.len() >= 2,
        "periodic bookmarks and one before the close: {bookmarks:?}"
    );
    assert!(bookmarks.iter().all(|&rv| rv >= latest));
}

#[tokio::test(start_paused = true)]
async fn streaming_lists_end_their_initial_events_with_an_annotated_bookmark() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..3 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let (reader, writer) = reflector::store();
    let stream = reflector(
        writer,
        watcher(
            buckets.clone(),
            watcher::Config::default().streaming_lists(),
        ),
    );
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 3);
    task.abort();
}

#[tokio::test(start_paused = true)]
async fn ten_watchers_each_see_every_create() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let mut stores = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let (reader, writer) = reflector::store();
        let stream = reflector(writer, watcher(buckets.clone(), watcher::Config::default()));
        tasks.push(tokio::spawn(stream.for_each(|_| async {})));
        reader.wait_until_ready().await.unwrap();
        stores.push(reader);
    }
    for i in 0..50 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    eventually("every watcher saw every bucket", || {
        stores.iter().all(|s| s.state().len() == 50)
    })
    .await;
    tasks.iter().for_each(tokio::task::JoinHandle::abort);
}

/// Regression: a batch of queued events larger than one chunk dropped the event that
/// ended the batch.
#[tokio::test(start_paused = true)]
async fn a_watcher_that_falls_hundreds_of_events_behind_loses_none() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let from = server.resource_version().to_string();
    let mut stream = buckets
        .watch(
            &WatchParams::default().timeout(60).disable_bookmarks(),
            &from,
        )
        .await
        .unwrap()
        .boxed();
    for i in 0..1000 {
        create_bucket(&buckets, &format!("b{i:04}"), "eu").await;
    }
    let mut names = Vec::new();
    while names.len() < 1000 {
        match stream.next().await {
            Some(Ok(WatchEvent::Added(b))) => names.push(b.metadata.name.unwrap()),
            other => panic!("expected ADDED, got {other:?} after {} events", names.len()),
        }
    }
    let expected: Vec<String> = (0..1000).map(|i| format!("b{i:04}")).collect();
    assert_eq!(names, expected, "every event, in order");
}

#[tokio::test(start_paused = true)]
async fn a_selector_watch_sees_objects_enter_and_leave_when_their_labels_change() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let (reader, writer) = reflector::store();
    let config = watcher::Config::default().labels("tier=gold");
    let task =
        tokio::spawn(reflector(writer, watcher(buckets.clone(), config)).for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();

    let relabel = |tier: &'static str| {
        let buckets = buckets.clone();
        async move {
            let patch = json!({"metadata": {"labels": {"tier": tier}}});
            buckets
                .patch("b1", &PatchParams::default(), &Patch::Merge(patch))
                .await
                .unwrap();
        }
    };
    create_bucket(&buckets, "b1", "eu").await;
    relabel("gold").await;
    eventually("b1 enters the selection", || reader.state().len() == 1).await;
    relabel("silver").await;
    eventually("b1 leaves the selection", || reader.state().is_empty()).await;
    relabel("gold").await;
    eventually("b1 comes back", || reader.state().len() == 1).await;
    task.abort();
}

#[tokio::test(start_paused = true)]
async fn a_watcher_with_small_pages_lists_in_several_requests_and_sees_everything() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    for i in 0..10 {
        create_bucket(&buckets, &format!("b{i}"), "eu").await;
    }
    let before = server.journal().last_seq();
    let (reader, writer) = reflector::store();
    let config = watcher::Config::default().page_size(3);
    let task =
        tokio::spawn(reflector(writer, watcher(buckets.clone(), config)).for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 10);
    let lists = server
        .journal()
        .since(before)
        .iter()
        .filter(|e| e.verb == mock_apiserver::Verb::List)
        .count();
    assert_eq!(lists, 4, "pages of 3, 3, 3 and 1");
    create_bucket(&buckets, "late", "eu").await;
    eventually("the watch after the pages sees new objects", || {
        reader.state().len() == 11
    })
    .await;
    task.abort();
}

/// Guards the no-op-write rule end to end: a kube `Controller` whose reconcile makes an
/// idempotent server-side-apply status patch must not trigger itself again.
#[tokio::test(start_paused = true)]
async fn a_controller_with_idempotent_status_patches_settles_instead_of_hot_looping() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use kube::runtime::Controller;
    use kube::runtime::controller::Action;

    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let reconciles = Arc::new(AtomicUsize::new(0));
    let context = (buckets.clone(), reconciles.clone());
    let controller = Controller::new(buckets.clone(), watcher::Config::default())
        .run(
            |bucket: Arc<Bucket>, ctx: Arc<(Api<Bucket>, Arc<AtomicUsize>)>| async move {
                ctx.1.fetch_add(1, Ordering::SeqCst);
                let status = json!({
                    "apiVersion": "example.org/v1alpha1", "kind": "Bucket",
                    "status": {"conditions": [{"type": "Ready", "status": "True"}]}
                });
                let name = bucket.metadata.name.clone().unwrap();
                ctx.0
                    .patch_status(
                        &name,
                        &PatchParams::apply("ctrl").force(),
                        &Patch::Apply(status),
                    )
                    .await?;
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::requeue(Duration::from_secs(1)),
            Arc::new(context),
        )
        .for_each(|_| async {});
    let task = tokio::spawn(controller);
    create_bucket(&buckets, "b1", "eu").await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let count = reconciles.load(Ordering::SeqCst);
    assert!((1..=2).contains(&count), "reconciled {count} times in 30 s");
    task.abort();
}

#[tokio::test(start_paused = true)]
async fn a_watch_is_counted_in_the_request_metrics_when_it_ends_with_its_whole_duration() {
    // endpoints/metrics/metrics.go: InstrumentRouteFunc calls MonitorRequest when the
    // handler returns, which for a watch (endpoints/handlers/watch.go) is when the stream
    // ends; RecordLongRunning holds apiserver_longrunning_requests meanwhile.
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let labels = "group=\"example.org\",resource=\"buckets\",scope=\"namespace\",subresource=\"\",verb=\"WATCH\",version=\"v1alpha1\"";
    let total = format!(
        "apiserver_request_total{{code=\"200\",component=\"apiserver\",dry_run=\"\",{labels}}} 1\n"
    );
    let gauge = |n: u32| {
        format!("apiserver_longrunning_requests{{component=\"apiserver\",{labels}}} {n}\n")
    };
    let mut stream = buckets
        .watch(&WatchParams::default().timeout(3).disable_bookmarks(), "0")
        .await
        .unwrap()
        .boxed();
    let text = server.journal().prometheus_text();
    assert!(!text.contains(&total), "counted while open: {text}");
    assert!(text.contains(&gauge(1)), "{text}");
    create_bucket(&buckets, "b1", "eu").await;
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    assert!(stream.next().await.is_none(), "the watch times out");
    let text = server.journal().prometheus_text();
    assert!(text.contains(&total), "{text}");
    assert!(text.contains(&gauge(0)), "{text}");
    let histogram = format!("component=\"apiserver\",dry_run=\"\",{labels}");
    for (le, n) in [("2", 0), ("3", 1)] {
        let line =
            format!("apiserver_request_duration_seconds_bucket{{{histogram},le=\"{le}\"}} {n}\n");
        assert!(text.contains(&line), "{line} in {text}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_the_client_drops_is_counted_when_it_is_dropped() {
    let server = server_with_buckets(Config::default());
    let buckets: Api<Bucket> = Api::default_namespaced(client(&server));
    let stream = buckets
        .watch(&WatchParams::default().timeout(290), "0")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(70)).await;
    let counted = |text: &str| {
        text.lines()
            .any(|l| l.starts_with("apiserver_request_total{") && l.contains("verb=\"WATCH\""))
    };
    assert!(!counted(&server.journal().prometheus_text()));
    drop(stream);
    let text = server.journal().prometheus_text();
    assert!(counted(&text), "{text}");
    // Longer than the last bucket (60 s): only +Inf holds it.
    assert!(
        text.lines().any(
            |l| l.starts_with("apiserver_request_duration_seconds_bucket")
                && l.contains("verb=\"WATCH\"")
                && l.contains("le=\"60\"} 0")
        ),
        "{text}"
    );
}
