//! The `provider` binary: `provider --kubeconfig K --cloud-endpoint URL` runs the provider;
//! `provider crds [--out DIR]` prints or writes the CRDs. Exit codes: 0 clean shutdown, 1
//! failure while running, 2 bad flags or setup.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;
use provider::cli::{Cli, Command, RunConfig};
use provider::crd::{crd_file_name, crd_yaml, crds, crds_yaml};
use provider::kube_client::{KubeStackLayer, clients_from_kubeconfig};
use provider::{CloudClient, Provider, ProviderMetrics, ProviderOptions};

fn main() -> ExitCode {
    let cli = Cli::parse();
    serve::log::init("info");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(execute(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}

struct Failure {
    code: u8,
    error: anyhow::Error,
}

fn setup(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: 2,
        error: error.into(),
    }
}

async fn execute(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Some(Command::Crds { out: None }) => {
            print!(
                "{}",
                crds_yaml()
                    .context("cannot render the CRDs")
                    .map_err(setup)?
            );
            Ok(())
        }
        Some(Command::Crds { out: Some(dir) }) => write_crds(&dir).map_err(setup),
        None => {
            let config = cli.run.validate().map_err(setup)?;
            run(config).await
        }
    }
}

fn write_crds(dir: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for crd in crds() {
        let path = dir.join(crd_file_name(&crd));
        let text = format!("---\n{}", crd_yaml(&crd)?);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

async fn run(config: RunConfig) -> Result<(), Failure> {
    let metrics = Arc::new(ProviderMetrics::new());
    let layer = KubeStackLayer::new(&config.settings, metrics.kube_requests().clone());
    let clients = clients_from_kubeconfig(config.kubeconfig.as_deref(), &layer)
        .await
        .map_err(setup)?;
    let cloud = CloudClient::http(config.cloud_endpoint.clone())
        .with_timeout(config.cloud_timeout)
        .with_requests(metrics.cloud_requests().clone());
    let metrics_server = serve::Beside::start(
        config.metrics_addr,
        "--metrics-addr",
        "/metrics",
        |listener, stopped| {
            provider::metrics_server::serve_metrics(listener, Arc::clone(&metrics), stopped)
        },
    )
    .await
    .map_err(setup)?;
    let options = ProviderOptions {
        settings: config.settings,
        kube: clients.main,
        event_kube: clients.events,
        cloud,
        namespace: config.namespace,
        secret_namespace: config.secret_namespace,
        shutdown_timeout: config.shutdown_timeout,
        metrics,
        seed: None,
        clock: None,
        reconcile_cost: std::time::Duration::ZERO,
        creation_grace: config.creation_grace,
        #[cfg(feature = "aws")]
        aws: config.aws,
    };
    let summary = Provider::new(options)
        .run(serve::shutdown_signal())
        .await
        .map_err(|e| Failure {
            code: 1,
            error: e.into(),
        })?;
    let _ = metrics_server.stop().await;
    if !summary.drained {
        tracing::warn!("some reconciles were abandoned at shutdown");
    }
    Ok(())
}
