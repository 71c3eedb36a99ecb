//! Benchmarks through kube's client, in-process and over loopback.
//!
//! Run with `cargo run --release -p mock-apiserver --example bench`. Every phase is
//! bounded by a fixed object count; the numbers printed are wall-clock measurements on
//! the machine at hand.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::join_all;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube::{CustomResource, CustomResourceExt};
use mock_apiserver::{ApiServer, Config};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A small custom resource, like the provider's.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "bench.example.org",
    version = "v1",
    kind = "Widget",
    namespaced
)]
struct WidgetSpec {
    region: String,
    size: i64,
}

fn widget(i: usize) -> Widget {
    let mut w = Widget::new(
        &format!("w-{i:06}"),
        WidgetSpec {
            region: "eu-west-1".into(),
            size: 10,
        },
    );
    w.metadata.labels = Some([("app".to_owned(), "bench".to_owned())].into());
    w
}

fn server(config: Config) -> ApiServer {
    let server = ApiServer::new(config);
    server
        .load_crd(serde_json::to_value(Widget::crd()).expect("crd"))
        .expect("crd loads");
    server
}

async fn loopback(server: &ApiServer) -> (kube::Client, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(mock_apiserver::serve(listener, server.clone(), async {
        let _ = stopped.await;
    }));
    let kubeconfig = serde_saphyr::from_str(&mock_apiserver::kubeconfig(&url)).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    (kube::Client::try_from(config).expect("client"), stop)
}

/// Creates `count` widgets with `concurrency` tasks; returns creates per second.
async fn creates(api: &Api<Widget>, offset: usize, count: usize, concurrency: usize) -> f64 {
    let started = Instant::now();
    join_all((0..concurrency).map(|t| {
        let api = api.clone();
        async move {
            for i in (t..count).step_by(concurrency) {
                api.create(&PostParams::default(), &widget(offset + i))
                    .await
                    .expect("create");
            }
        }
    }))
    .await;
    count as f64 / started.elapsed().as_secs_f64()
}

/// Server-side applies `count` times over the first `objects` widgets (made by
/// `creates`), one task; with `change` every apply sets a new size, without it every
/// apply repeats the stored body (a no-op, as a composer's steady reconciles are).
/// Returns applies per second.
async fn applies(api: &Api<Widget>, objects: usize, count: usize, change: bool) -> f64 {
    let params = PatchParams::apply("bench").force();
    let started = Instant::now();
    for i in 0..count {
        let size = if change { 11 + i as i64 } else { 10 };
        let body = serde_json::json!({
            "apiVersion": "bench.example.org/v1",
            "kind": "Widget",
            "metadata": {"name": format!("w-{:06}", i % objects), "labels": {"app": "bench"}},
            "spec": {"region": "eu-west-1", "size": size},
        });
        api.patch(
            &format!("w-{:06}", i % objects),
            &params,
            &Patch::Apply(&body),
        )
        .await
        .expect("apply");
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// Median time of `runs` full lists.
async fn list_time(api: &Api<Widget>, runs: usize) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut items = 0;
    for _ in 0..runs {
        let started = Instant::now();
        items = api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len();
        times.push(started.elapsed());
    }
    times.sort();
    (times[runs / 2], items)
}

/// Creates `count` widgets while `watchers` kube watchers follow; returns the time
/// until every watcher saw every create.
async fn fan_out(api: &Api<Widget>, watchers: usize, count: usize) -> Duration {
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(watchers);
    let mut tasks = Vec::new();
    let counters: Vec<_> = (0..watchers)
        .map(|_| std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0)))
        .collect();
    for counter in &counters {
        let api = api.clone();
        let ready = ready_tx.clone();
        let counter = counter.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = watcher(api, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                match event.expect("watch event") {
                    watcher::Event::InitDone => ready.send(()).await.expect("ready"),
                    watcher::Event::Apply(_) => {
                        let seen = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if seen == count {
                            return;
                        }
                    }
                    _ => {}
                }
            }
        }));
    }
    for _ in 0..watchers {
        ready_rx.recv().await.expect("watcher ready");
    }
    let started = Instant::now();
    creates(api, 0, count, 8).await;
    for task in tasks {
        if tokio::time::timeout(Duration::from_secs(120), task)
            .await
            .is_err()
        {
            let seen: Vec<usize> = counters
                .iter()
                .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
                .collect();
            panic!("watchers did not see all {count} creates in 120 s: {seen:?}");
        }
    }
    started.elapsed()
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[tokio::main]
async fn main() {
    if let Some(label) =
        std::env::args().find_map(|a| a.strip_prefix("--memory=").map(str::to_owned))
    {
        memory(&label).await;
        return;
    }
    const CREATES: usize = 10_000;
    const LIST: usize = 10_000;
    const FAN_OUT: usize = 5_000;
    const APPLIES: usize = 5_000;

    println!("mock-apiserver benchmark, through kube 5");
    for transport in ["in-process", "loopback"] {
        let server = server(Config::default());
        let (client, stop) = match transport {
            "in-process" => (kube::Client::new(server.service(), "default"), None),
            _ => {
                let (client, stop) = loopback(&server).await;
                (client, Some(stop))
            }
        };
        let api: Api<Widget> = Api::default_namespaced(client);
        let sequential = creates(&api, 0, CREATES / 2, 1).await;
        let concurrent = creates(&api, CREATES / 2, CREATES / 2, 16).await;
        let (list, items) = list_time(&api, 5).await;
        assert_eq!(items, LIST);
        println!(
            "{transport:>10}: creates/s sequential {sequential:>8.0}   16 concurrent {concurrent:>8.0}"
        );
        let noop = applies(&api, 1_000, APPLIES, false).await;
        let changing = applies(&api, 1_000, APPLIES, true).await;
        println!(
            "{transport:>10}: applies/s sequential, same body {noop:>8.0}   changing body {changing:>8.0}"
        );
        println!(
            "{transport:>10}: list of {items} objects, median of 5: {:>6.1} ms",
            list.as_secs_f64() * 1e3
        );
        let fresh = server_for_fan_out();
        let (fan_client, _fan_stop) = match transport {
            "in-process" => (kube::Client::new(fresh.service(), "default"), None),
            _ => {
                let (client, stop) = loopback(&fresh).await;
                (client, Some(stop))
            }
        };
        let fan_api: Api<Widget> = Api::default_namespaced(fan_client);
        let took = fan_out(&fan_api, 10, FAN_OUT).await;
        println!(
            "{transport:>10}: {FAN_OUT} creates watched by 10 watchers: {:>6.0} ms ({:.0} creates/s, {:.0} events/s delivered)",
            took.as_secs_f64() * 1e3,
            FAN_OUT as f64 / took.as_secs_f64(),
            (10 * FAN_OUT) as f64 / took.as_secs_f64()
        );
        drop(stop);
    }

    // Memory: each configuration in a fresh process, since RSS does not shrink when a
    // server is dropped.
    for label in ["store-only", "defaults"] {
        let output = std::process::Command::new(std::env::current_exe().expect("own path"))
            .arg(format!("--memory={label}"))
            .output()
            .expect("the memory run starts");
        print!("{}", String::from_utf8_lossy(&output.stdout));
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Creates 100,000 objects in a fresh process and reports RSS growth per object:
/// `store-only` turns the journal off and keeps a short watch history; `defaults` keeps
/// both as `Config::default()` does.
async fn memory(label: &str) {
    const MEMORY: usize = 100_000;
    let config = match label {
        "store-only" => Config::default()
            .with_journal_capacity(0)
            .with_watch_history(mock_apiserver::WatchHistory::Fixed(1_000)),
        _ => Config::default(),
    };
    let server = server(config);
    let api: Api<Widget> = Api::default_namespaced(kube::Client::new(server.service(), "default"));
    let before = rss_bytes();
    creates(&api, 0, MEMORY, 16).await;
    let after = rss_bytes();
    let sample = serde_json::to_vec(&api.get("w-000000").await.expect("get"))
        .expect("json")
        .len();
    let grew = after.saturating_sub(before) as f64;
    println!(
        "memory ({label}): {MEMORY} objects ({sample} bytes of JSON each) grew RSS by {:.1} MiB = {:.0} bytes per object",
        grew / (1 << 20) as f64,
        grew / MEMORY as f64
    );
}

fn server_for_fan_out() -> ApiServer {
    server(Config::default())
}
