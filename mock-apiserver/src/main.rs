//! `mock-apiserver`: serve an embedded Kubernetes API server on a socket.
//!
//! Exit codes: 0 after a clean shutdown (SIGINT/SIGTERM), 2 on bad flags or setup.

use std::net::SocketAddr;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use mock_apiserver::{
    ApiServer, Config, FlowControl, GarbageCollection, PriorityAndFairness, User, WatchHistory,
};

/// An embedded Kubernetes API server that kubectl and kube-rs clients accept.
///
/// Objects live in memory and vanish on exit. Point kubectl at it with the kubeconfig
/// written by --write-kubeconfig.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on (plain HTTP/1.1). Port 0 picks a free port. With --replicas,
    /// the load balancer's address.
    #[arg(long, default_value = "127.0.0.1:6443")]
    listen: SocketAddr,
    /// Serve N replicas of one API server, as a control plane runs several kube-apiservers
    /// over one etcd: they share every object and watch, and each has its own socket (on
    /// --listen's address, a free port), journal, /metrics and flow control. --listen is
    /// then a TCP load balancer spreading connections over them in turn, the kubeconfig
    /// points at it, and the `kubernetes` Service's EndpointSlices in `default` list
    /// every replica's address, as kube-apiserver lists its replicas.
    #[arg(long, value_name = "N", default_value_t = NonZeroUsize::MIN)]
    replicas: NonZeroUsize,
    /// Write a kubeconfig for this server to FILE (cluster, user and context
    /// "mock-apiserver", namespace "default", no credentials).
    #[arg(long, value_name = "FILE")]
    write_kubeconfig: Option<PathBuf>,
    /// Preload the CustomResourceDefinitions in FILE (YAML or JSON, several documents
    /// allowed). Repeat for more files.
    #[arg(long = "crd", value_name = "FILE")]
    crds: Vec<PathBuf>,
    /// Flow control as kube-apiserver runs it, API Priority and Fairness: each request is
    /// classified by its user and verb (the bootstrap flow schemas, plus --apf-config)
    /// into a priority level with its share of the seats; requests beyond them wait in
    /// fair queues (up to --apf-queue-wait), then get a plain-text 429 with Retry-After.
    /// `system:masters` is exempt. The user is --user, or what a request's
    /// Impersonate-User/Impersonate-Group headers name (kubectl --as, --as-group).
    /// Series: apiserver_flowcontrol_* on /metrics.
    #[arg(long, conflicts_with = "qps")]
    priority_and_fairness: bool,
    /// Seats for read-only requests; with --max-mutating-requests-inflight, the seats the
    /// priority levels share (kube-apiserver's flags and defaults: 400 + 200).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 400,
        requires = "priority_and_fairness"
    )]
    max_requests_inflight: usize,
    /// Seats for writes (see --max-requests-inflight).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 200,
        requires = "priority_and_fairness"
    )]
    max_mutating_requests_inflight: usize,
    /// Longest wait in a priority level's queue before a 429 (kube-apiserver: a quarter
    /// of its 60 s request timeout), e.g. 15s or 500ms.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = duration, requires = "priority_and_fairness")]
    apf_queue_wait: std::time::Duration,
    /// PriorityLevelConfiguration and FlowSchema objects (YAML,
    /// flowcontrol.apiserver.k8s.io/v1) that add to or replace the bootstrap ones, as
    /// creating them in a cluster does. Repeatable.
    #[arg(
        long = "apf-config",
        value_name = "FILE",
        requires = "priority_and_fairness"
    )]
    apf_configs: Vec<PathBuf>,
    /// The user a request without Impersonate-User is (default system:anonymous, in
    /// system:unauthenticated; any other is also in system:authenticated).
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// A group of --user. Repeatable; `--group system:masters` makes it exempt.
    #[arg(long = "group", value_name = "NAME", requires = "user")]
    groups: Vec<String>,
    /// The immediate limit (not kube-apiserver's behaviour): sustained requests per
    /// second before answering 429 with a JSON Status and Retry-After, for every user
    /// alike. Off when not given.
    #[arg(long, value_name = "QPS")]
    qps: Option<NonZeroU32>,
    /// Flow-control burst (requests allowed at once after idling); defaults to --qps.
    #[arg(long, value_name = "N", requires = "qps")]
    burst: Option<NonZeroU32>,
    /// Most requests handled at once before answering 429 (watches count only until
    /// their stream starts). Needs --qps.
    #[arg(long, value_name = "N", requires = "qps")]
    max_in_flight: Option<NonZeroUsize>,
    /// Watch events kept per resource for watches resuming from a resourceVersion;
    /// older resume points get an in-stream 410 and clients relist. `kube` sizes them
    /// as kube-apiserver's watch cache does: 100 to 102,400 events, doubling while the
    /// oldest is younger than 75 s and halving when the newest quarter is older; a
    /// number keeps that many.
    #[arg(long, value_name = "EVENTS|kube", default_value = "kube", value_parser = parse_watch_history)]
    watch_history: WatchHistory,
    /// Seconds between BOOKMARK events on watches that allow them.
    #[arg(long, value_name = "SECONDS", default_value_t = Config::default().bookmark_interval.as_secs())]
    bookmark_interval: u64,
    /// Give Deployments a status: each change rolls out (every replica updated and
    /// available) this many milliseconds later, so `kubectl rollout status` finishes.
    /// Off unless given.
    #[arg(long, value_name = "MILLIS")]
    deployment_rollouts: Option<u64>,
    /// When the garbage collector deletes the dependents of a deleted owner (by
    /// ownerReferences) and completes foreground and orphaning deletes: `immediate`
    /// inside the DELETE (the default); a duration such as `2s` or `500ms` to run it as
    /// kube-controller-manager does, that long after each change; `none` never, as a
    /// bare API server (envtest) where foreground deletes wait for ever.
    #[arg(long, value_name = "immediate|none|DURATION", default_value = "immediate", value_parser = garbage_collection)]
    gc: GarbageCollection,
}

/// `--watch-history`: `kube`, or a number of events (at least 1).
fn parse_watch_history(text: &str) -> Result<WatchHistory, String> {
    if text == "kube" {
        return Ok(WatchHistory::KUBE);
    }
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(WatchHistory::Fixed(n)),
        _ => Err(format!(
            "expected kube or a number of events of at least 1, not {text:?}"
        )),
    }
}

/// `--gc`: `immediate`, `none`, or a duration (`2s`, `500ms`, `1m`).
fn garbage_collection(text: &str) -> Result<GarbageCollection, String> {
    match text {
        "immediate" => Ok(GarbageCollection::Immediate),
        "none" => Ok(GarbageCollection::None),
        _ => text
            .parse::<jiff::SignedDuration>()
            .ok()
            .and_then(|d| std::time::Duration::try_from(d).ok())
            .map(|delay| GarbageCollection::Async { delay })
            .ok_or_else(|| {
                format!("expected immediate, none or a duration such as 2s, not {text:?}")
            }),
    }
}

/// A duration such as `15s` or `500ms`.
fn duration(text: &str) -> Result<std::time::Duration, String> {
    text.parse::<jiff::SignedDuration>()
        .ok()
        .and_then(|d| std::time::Duration::try_from(d).ok())
        .ok_or_else(|| format!("expected a duration such as 15s or 500ms, not {text:?}"))
}

/// API Priority and Fairness from the flags and the --apf-config files.
fn priority_and_fairness(args: &Args) -> anyhow::Result<PriorityAndFairness> {
    let mut apf = PriorityAndFairness::default()
        .with_server_concurrency_limit(
            args.max_requests_inflight + args.max_mutating_requests_inflight,
        )
        .with_request_wait_limit(args.apf_queue_wait);
    for path in &args.apf_configs {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        apf.add_objects_yaml(&text)
            .with_context(|| format!("{}", path.display()))?;
    }
    Ok(apf)
}

fn config(args: &Args) -> anyhow::Result<Config> {
    let mut config = Config::default()
        .with_watch_history(args.watch_history)
        .with_bookmark_interval(std::time::Duration::from_secs(
            args.bookmark_interval.max(1),
        ));
    if let Some(qps) = args.qps {
        let mut flow = FlowControl::new(qps, args.burst.unwrap_or(qps));
        if let Some(max) = args.max_in_flight {
            flow = flow.with_max_in_flight(max);
        }
        config = config.with_flow_control(flow);
    }
    if args.priority_and_fairness {
        config = config.with_flow_control(FlowControl::PriorityAndFairness(priority_and_fairness(
            args,
        )?));
    }
    if let Some(name) = &args.user {
        config = config.with_user(User::new(name.clone(), args.groups.clone()));
    }
    if let Some(millis) = args.deployment_rollouts {
        config = config.with_deployment_rollouts(std::time::Duration::from_millis(millis));
    }
    Ok(config.with_garbage_collection(args.gc))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let server = ApiServer::new(config(&args)?);
    for path in &args.crds {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let count = server
            .load_crd_yaml(&text)
            .with_context(|| format!("loading CRDs from {}", path.display()))?;
        tracing::info!(file = %path.display(), count, "loaded CRDs");
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    let url = format!("http://{}", listener.local_addr()?);
    if args.replicas.get() == 1 {
        write_kubeconfig(&args, &url)?;
        println!("mock-apiserver listening on {url}");
        mock_apiserver::serve(listener, server, serve::shutdown_signal()).await;
        return Ok(());
    }
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut backends = Vec::new();
    let mut replicas = tokio::task::JoinSet::new();
    for i in 0..args.replicas.get() {
        let replica = if i == 0 {
            server.clone()
        } else {
            server.replica()
        };
        let address = SocketAddr::new(args.listen.ip(), 0);
        let socket = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("binding {address}"))?;
        let address = socket.local_addr()?;
        backends.push(address);
        println!(
            "mock-apiserver replica {} listening on http://{address}",
            i + 1
        );
        let mut stopped = stopped.clone();
        replicas.spawn(mock_apiserver::serve(socket, replica, async move {
            let _ = stopped.wait_for(|s| *s).await;
        }));
    }
    server
        .set_replica_endpoints(&backends)
        .context("writing the kubernetes EndpointSlices")?;
    write_kubeconfig(&args, &url)?;
    println!(
        "mock-apiserver load balancer listening on {url} ({} replicas)",
        backends.len()
    );
    mock_apiserver::balance(listener, backends, serve::shutdown_signal()).await;
    let _ = stop.send(true);
    replicas.join_all().await;
    Ok(())
}

fn write_kubeconfig(args: &Args, url: &str) -> anyhow::Result<()> {
    if let Some(path) = &args.write_kubeconfig {
        mock_apiserver::write_kubeconfig(path, url)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // Errors only unless RUST_LOG says more; on standard error, apart from the address and
    // kubeconfig this prints on standard output.
    serve::log::init("error");
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mock-apiserver: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_watch_history_flag_takes_kube_or_a_number_of_events() {
        assert_eq!(parse_watch_history("kube"), Ok(WatchHistory::KUBE));
        assert_eq!(parse_watch_history("7"), Ok(WatchHistory::Fixed(7)));
        for bad in ["0", "-1", "1.5", "Kube", ""] {
            let error = parse_watch_history(bad).unwrap_err();
            assert!(
                error.contains("expected kube or a number"),
                "{bad:?}: {error}"
            );
        }
    }

    #[test]
    fn the_gc_flag_takes_immediate_none_or_a_delay() {
        assert_eq!(
            garbage_collection("immediate"),
            Ok(GarbageCollection::Immediate)
        );
        assert_eq!(garbage_collection("none"), Ok(GarbageCollection::None));
        assert_eq!(
            garbage_collection("500ms"),
            Ok(GarbageCollection::Async {
                delay: Duration::from_millis(500)
            })
        );
        assert_eq!(
            garbage_collection("2s"),
            Ok(GarbageCollection::Async {
                delay: Duration::from_secs(2)
            })
        );
        assert!(garbage_collection("-1s").is_err());
        assert!(
            garbage_collection("soon")
                .unwrap_err()
                .contains("not \"soon\"")
        );
    }

    #[test]
    fn the_default_gc_is_immediate() {
        let args = Args::parse_from(["mock-apiserver"]);
        assert_eq!(
            config(&args).unwrap().garbage_collection,
            GarbageCollection::Immediate
        );
    }

    #[test]
    fn priority_and_fairness_takes_the_apiservers_seat_flags_and_a_user() {
        let args = Args::parse_from([
            "mock-apiserver",
            "--priority-and-fairness",
            "--max-requests-inflight",
            "10",
            "--max-mutating-requests-inflight",
            "5",
            "--apf-queue-wait",
            "2s",
            "--user",
            "admin",
            "--group",
            "system:masters",
        ]);
        let config = config(&args).unwrap();
        let Some(FlowControl::PriorityAndFairness(apf)) = config.flow_control else {
            panic!("{:?}", config.flow_control);
        };
        assert_eq!(apf.server_concurrency_limit, 15);
        assert_eq!(apf.request_wait_limit, Duration::from_secs(2));
        assert_eq!(
            config.user.groups,
            ["system:masters", "system:authenticated"]
        );
        assert!(
            Args::try_parse_from(["mock-apiserver", "--priority-and-fairness", "--qps", "5"])
                .is_err(),
            "one mode at a time"
        );
    }
}
