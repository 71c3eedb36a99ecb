//! The `mock-cloud` binary: serves a [`mock_cloud::MockCloud`] on a socket.
//!
//! Exit codes: 0 after a clean shutdown (SIGINT or SIGTERM), 2 for a bad config or a
//! listen address that cannot be bound.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;

/// A cloud API that enforces per-account quotas like real clouds (429 + Retry-After),
/// injects faults, and journals every call. The same port speaks AWS: S3 and STS for
/// unmodified SDKs (endpoint URL http://ADDR, access key `default`, secret `default`, any
/// region, S3 path style), SigV4 verified. Admin API under /admin/v1/, metrics at
/// /metrics. Logs go to stderr at level info; set RUST_LOG to change it (e.g.
/// RUST_LOG=mock_cloud=trace logs every call).
#[derive(Debug, Parser)]
#[command(name = "mock-cloud", version)]
struct Args {
    /// Address to listen on. Use port 0 for any free port; the address chosen is printed.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: SocketAddr,
    /// YAML config file (accounts, tokens, AWS account IDs and access keys, quotas, faults;
    /// see mock-cloud.example.yaml). Without it: one account `default` with token `default`,
    /// AWS account ID 000000000000 and access key `default` (secret `default`), and
    /// cloud-like default quotas.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Check the config file and exit without serving.
    #[arg(long)]
    check: bool,
    /// Threads that serve requests. Default: one per CPU this process may run on (its CPU
    /// affinity, as set by taskset or a container's cpuset). With 1, one thread does
    /// everything (accepting, reading, answering): no wakeups between threads, the
    /// cheapest per request; with more, requests spread over that many threads.
    #[arg(long, value_name = "N")]
    threads: Option<NonZeroUsize>,
}

fn main() -> ExitCode {
    serve::log::init("info");
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let config = match &args.config {
        Some(path) => mock_cloud::Config::load(path)?,
        None => mock_cloud::Config::default(),
    };
    if args.check {
        println!("config ok: {} account(s)", config.accounts.len());
        return Ok(());
    }
    let runtime = runtime(args.threads).context("cannot start the tokio runtime")?;
    runtime.block_on(async {
        let cloud = mock_cloud::MockCloud::new(config)?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        println!("mock-cloud listening on http://{}", listener.local_addr()?);
        mock_cloud::serve(listener, cloud, serve::shutdown_signal()).await;
        anyhow::Ok(())
    })
}

/// The runtime that serves: tokio's current-thread runtime for one thread (the accept loop
/// and every connection on the thread that calls `block_on`), its multi-thread runtime
/// with `threads` workers otherwise. `None`: one thread per CPU the process may use.
fn runtime(threads: Option<NonZeroUsize>) -> std::io::Result<tokio::runtime::Runtime> {
    let threads = threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);
    if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
}
