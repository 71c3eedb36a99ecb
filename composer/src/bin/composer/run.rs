//! Setup and the run: the client, the discovered Functions, Compositions, revisions and
//! XRDs, one controller per XRD with its watches (an XRD created later gets its own when
//! the XRD watch sees it, as core's definition controller starts one), the resync, and the
//! shutdown.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use composer::api::{
    CompositeResourceDefinition, Composition, CompositionRevision, Endpoint, Function,
};
use composer::composite::{
    Recorder, RequeueSettings, XrdSettings, resync_period, run_revision_controllers, start_xrd,
};
use composer::function::builtin::Resources;
use composer::function::{FunctionMetrics, Functions, GrpcRunner, InProcessRunner};
use composer::xcrd::for_composite_resource;
use futures::StreamExt as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher;
use limiter::controller::{Controller, Request};
use tokio::task::JoinHandle;

use crate::cli::Cli;

/// The field manager of the XR CRDs this process applies (core's definition controller).
const FIELD_MANAGER_DEFINITION: &str = "apiextensions.crossplane.io/definition";

/// An error and the exit code it ends the process with.
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

fn setup(error: impl Into<anyhow::Error>) -> Failure {
    Failure {
        code: 2,
        error: error.into(),
    }
}

/// Runs the controllers until SIGTERM or Ctrl-C.
///
/// # Errors
/// A [`Failure`] with exit code 2 when the setup fails, 1 when running fails.
pub async fn run(cli: Cli) -> Result<(), Failure> {
    let client = client(&cli).await.map_err(setup)?;
    let metrics = Arc::new(FunctionMetrics::new());
    let metrics_server = serve::Beside::start(
        cli.metrics_addr,
        "--metrics-addr",
        "/metrics",
        |listener, stopped| crate::metrics::serve(listener, Arc::clone(&metrics), stopped),
    )
    .await
    .map_err(setup)?;
    let functions = functions(&client, &metrics).await.map_err(setup)?;
    check_compositions(&client, &functions)
        .await
        .map_err(setup)?;
    let (mut controllers, mut tasks, mut later) = controllers(&cli, &client, &functions)
        .await
        .map_err(setup)?;
    serve::shutdown_signal().await;
    // The XRD watch first, so that no controller starts after this; then every controller,
    // those it started included.
    later.watch.abort();
    let _ = (&mut later.watch).await;
    while let Ok(started) = later.started.try_recv() {
        controllers.push(started.controller);
        tasks.extend(started.tasks);
    }
    for task in tasks {
        task.abort();
    }
    for controller in controllers {
        controller.shut_down().await;
    }
    metrics_server
        .stop()
        .await
        .context("the metrics server failed")
        .map_err(|error| Failure { code: 1, error })?;
    Ok(())
}

async fn client(cli: &Cli) -> anyhow::Result<kube::Client> {
    let mut config = match &cli.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read --kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .with_context(|| format!("cannot use --kubeconfig {}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .context("no in-cluster config and no kubeconfig (pass --kubeconfig)")?,
    };
    config
        .headers
        .push((http::header::USER_AGENT, user_agent()));
    kube::Client::try_from(config).context("cannot build a Kubernetes client")
}

/// The `User-Agent` of every request, in client-go's convention (`BINARY/VERSION (OS/ARCH)`):
/// `composer/v0.1.0 (linux/amd64)`, so an API server's audit log or journal tells the
/// composer's requests apart, as it does core's (`crossplane/…`).
fn user_agent() -> http::HeaderValue {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let agent = format!(
        "composer/v{} ({}/{arch})",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    );
    http::HeaderValue::from_str(&agent).expect("a User-Agent of printable ASCII")
}

/// The Functions: InProcess ones run the built-in function, Development ones are called
/// over gRPC; any other is skipped with a warning.
async fn functions(
    client: &kube::Client,
    metrics: &Arc<FunctionMetrics>,
) -> anyhow::Result<Functions> {
    let list = Api::<Function>::all(client.clone())
        .list(&ListParams::default())
        .await
        .context("cannot list Functions (pkg.crossplane.io/v1)")?;
    let mut functions = Functions::new();
    for function in &list.items {
        let name = function.metadata.name.clone().unwrap_or_default();
        match function.endpoint() {
            Ok(Endpoint::InProcess) => {
                tracing::info!(function = %name, "the built-in function, in process");
                functions.insert(
                    name,
                    Arc::new(InProcessRunner::new(Resources).metrics(Arc::clone(metrics))),
                );
            }
            Ok(Endpoint::Development(address)) => {
                tracing::info!(function = %name, %address, "a function over gRPC");
                functions.insert(
                    name,
                    Arc::new(GrpcRunner::new(address).metrics(Arc::clone(metrics))),
                );
            }
            Err(error) => tracing::warn!(%error, "skipping a Function"),
        }
    }
    Ok(functions)
}

/// Lists Compositions and revisions and warns about the ones that cannot run.
async fn check_compositions(client: &kube::Client, functions: &Functions) -> anyhow::Result<()> {
    let known: Vec<Function> = functions
        .names()
        .map(|name| {
            Function::new(
                name,
                composer::api::FunctionSpec {
                    package: String::new(),
                },
            )
        })
        .collect();
    let compositions = Api::<Composition>::all(client.clone())
        .list(&ListParams::default())
        .await
        .context("cannot list Compositions (apiextensions.crossplane.io/v1)")?;
    for composition in &compositions.items {
        if let Err(error) = composition.validate(&known) {
            tracing::warn!(%error, "a Composition cannot run");
        }
    }
    let revisions = Api::<CompositionRevision>::all(client.clone())
        .list(&ListParams::default())
        .await
        .context("cannot list CompositionRevisions (apiextensions.crossplane.io/v1)")?;
    tracing::info!(
        compositions = compositions.items.len(),
        revisions = revisions.items.len(),
        "read the Compositions"
    );
    Ok(())
}

/// An XRD's running controller and the tasks of its watches.
struct Started {
    controller: Controller<Request>,
    tasks: Vec<JoinHandle<()>>,
}

/// What starts the controllers of the XRDs created after the start: the XRD watch, and the
/// controllers it started, for the shutdown.
struct Later {
    watch: JoinHandle<()>,
    started: tokio::sync::mpsc::UnboundedReceiver<Started>,
}

/// What every XR controller is started with.
#[derive(Clone)]
struct Starter {
    client: kube::Client,
    functions: Functions,
    settings: XrdSettings,
    events: Recorder,
    sync_interval: Duration,
}

impl Starter {
    /// Applies `xrd`'s XR CRD and starts its controller; `Ok(None)` for an XRD that is not
    /// valid (a warning says why).
    async fn start(&self, xrd: CompositeResourceDefinition) -> anyhow::Result<Option<Started>> {
        let name = xrd.name_any();
        let crd = match xrd.validate().and_then(|()| for_composite_resource(&xrd)) {
            Ok(crd) => crd,
            Err(error) => {
                tracing::warn!(%error, "skipping an XRD");
                return Ok(None);
            }
        };
        Api::<CustomResourceDefinition>::all(self.client.clone())
            .patch(
                crd.metadata.name.as_deref().unwrap_or_default(),
                &PatchParams::apply(FIELD_MANAGER_DEFINITION).force(),
                &Patch::Apply(&crd),
            )
            .await
            .with_context(|| format!("cannot apply the XR CRD of XRD {name}"))?;
        let mut resync = || Some(resync_period(self.sync_interval, rand::random()));
        let mut tasks = Vec::new();
        let started = start_xrd(
            &self.client,
            &self.functions,
            xrd,
            &self.settings,
            (&self.events, &mut resync),
            &mut tasks,
        );
        Ok(Some(Started {
            controller: started.controller,
            tasks,
        }))
    }
}

/// One controller per valid XRD, its XR CRD applied, with its watches and resync; and the
/// XRD watch that starts one for each XRD created later.
async fn controllers(
    cli: &Cli,
    client: &kube::Client,
    functions: &Functions,
) -> anyhow::Result<(Vec<Controller<Request>>, Vec<JoinHandle<()>>, Later)> {
    let xrds = Api::<CompositeResourceDefinition>::all(client.clone())
        .list(&ListParams::default())
        .await
        .context("cannot list CompositeResourceDefinitions (apiextensions.crossplane.io/v2)")?;
    let (mut controllers, mut tasks) = (Vec::new(), Vec::new());
    // One event writer for every XR controller, as core's one recorder.
    let (events, event_writer) = Recorder::start(client.clone());
    tasks.push(event_writer);
    // Core's revision controllers: a revision per change of a Composition, each valid.
    tasks.push(tokio::spawn(run_revision_controllers(client.clone())));
    let starter = Starter {
        client: client.clone(),
        functions: functions.clone(),
        settings: XrdSettings {
            requeue: RequeueSettings {
                realtime: cli.enable_realtime_compositions,
                poll_interval: cli.poll_interval,
                min_poll_interval: cli.min_poll_interval,
            },
            breaker: cli.breaker(),
            workers: cli.max_reconcile_rate,
            // A process in real time draws its jitter as core does, unseeded.
            jitter_seed: None,
        },
        events,
        sync_interval: cli.sync_interval,
    };
    let mut known = HashSet::new();
    for xrd in xrds.items {
        known.insert(xrd.name_any());
        if let Some(started) = starter.start(xrd).await? {
            controllers.push(started.controller);
            tasks.extend(started.tasks);
        }
    }
    let (sender, started) = tokio::sync::mpsc::unbounded_channel();
    let watch = tokio::spawn(async move {
        let api = Api::<CompositeResourceDefinition>::all(starter.client.clone());
        let mut xrds = watcher(api, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(xrd) = xrds.next().await {
            let Ok(xrd) = xrd else { continue };
            let name = xrd.name_any();
            if known.contains(&name) {
                continue;
            }
            match starter.start(xrd).await {
                Ok(Some(s)) => {
                    known.insert(name);
                    let _ = sender.send(s);
                }
                Ok(None) => {
                    known.insert(name);
                }
                // Tried again at the XRD's next event.
                Err(error) => tracing::warn!(
                    error = format!("{error:#}"),
                    "cannot start an XRD's controller"
                ),
            }
        }
    });
    Ok((controllers, tasks, Later { watch, started }))
}
