//! The composer's XR controllers in this process, against the embedded API server: the
//! Crossplane CRDs, the scenario's Functions, Compositions and XRDs, one controller per
//! XRD with its watches and cache (composer's `start_xrd`, which the composer binary starts
//! too), and core's revision controllers, from the validated scenario.

use std::sync::Arc;

use composer::api::{CompositeResourceDefinition, Composition, Function};
use composer::composite::{
    Realtime, Recorded, Recorder, RequeueSettings, XrdSettings, resync_period,
    run_revision_controllers, start_xrd,
};
use composer::function::builtin::Resources;
use composer::function::{FunctionMetrics, Functions, GrpcRunner, InProcessRunner};
use composer::xcrd::for_composite_resource;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use limiter::controller::{Controller, Request};
use mock_apiserver::ApiServer;
use tokio::task::JoinHandle;
use tower::ServiceBuilder;

use super::faults::{FunctionFaults, Switchable};
use crate::run::error::RunError;
use crate::scenario::Scenario;
use crate::scenario::composite::FunctionRuntime;

/// One XR controller's breaker, by its XRD.
pub struct XrdBreaker {
    /// The XRD's name.
    pub xrd: String,
    /// Its realtime event mapping and breaker.
    pub realtime: Arc<Realtime>,
}

/// The composer running in this process.
pub struct EmbeddedCore {
    controllers: Vec<Controller<Request>>,
    tasks: Vec<JoinHandle<()>>,
    /// Core's function metrics (`function_run_function_*`).
    pub metrics: Arc<FunctionMetrics>,
    /// Each XR controller's breaker.
    pub breakers: Vec<XrdBreaker>,
    /// The in-process functions' fault switches and own counts.
    pub faults: FunctionFaults,
    /// The events core's reconcilers recorded, before client-go's spam filter.
    pub recorded: Arc<Recorded>,
}

/// What phases read and change of a running core: its function metrics, its breakers and
/// the in-process functions' fault switches (shared with the running controllers).
#[derive(Clone)]
pub struct CoreProbe {
    /// Core's function metrics.
    pub metrics: Arc<FunctionMetrics>,
    /// Each XR controller's breaker, by its XRD.
    pub breakers: Vec<(String, Arc<Realtime>)>,
    /// The in-process functions' fault switches.
    pub faults: FunctionFaults,
    /// Each XR controller's reconcile counts.
    pub stats: Vec<Arc<limiter::controller::ControllerStats>>,
    /// The events core's reconcilers recorded, before client-go's spam filter.
    pub recorded: Arc<Recorded>,
}

/// A client of `apiserver` whose requests carry core's `User-Agent`, each waiting
/// `latency` first on the run's clock (the scenario's `core.requestLatency`).
fn core_client(apiserver: &ApiServer, latency: std::time::Duration) -> kube::Client {
    if latency.is_zero() {
        return client_as(apiserver, super::core_user_agent());
    }
    let agent = http::HeaderValue::from_static(super::core_user_agent());
    let inner = apiserver.service();
    let service = tower::service_fn(move |mut req: http::Request<kube::client::Body>| {
        req.headers_mut()
            .insert(http::header::USER_AGENT, agent.clone());
        let mut inner = inner.clone();
        async move {
            // On the run's clock: virtual time advances by it.
            tokio::time::sleep(latency).await;
            tower::ServiceExt::<http::Request<kube::client::Body>>::oneshot(&mut inner, req).await
        }
    });
    kube::Client::new(service, "default")
}

/// A client of `apiserver` whose requests carry `agent`.
fn client_as(apiserver: &ApiServer, agent: &'static str) -> kube::Client {
    let agent = http::HeaderValue::from_static(agent);
    let service = ServiceBuilder::new()
        .map_request(move |mut req: http::Request<kube::client::Body>| {
            req.headers_mut()
                .insert(http::header::USER_AGENT, agent.clone());
            req
        })
        .service(apiserver.service());
    kube::Client::new(service, "default")
}

/// Open CRDs of the Crossplane kinds a run creates (the composer validates these objects
/// itself; the scenario's were validated before the start).
pub use composer::api::crossplane_crds;

fn setup(what: &str, e: impl std::fmt::Display) -> RunError {
    RunError::CoreSetup(format!("{what}: {e}"))
}

impl EmbeddedCore {
    /// Installs Crossplane's kinds and the scenario's composite objects in `apiserver`,
    /// then starts one XR controller per XRD with `s`'s core settings.
    ///
    /// # Errors
    /// [`RunError::CoreSetup`] when an object cannot be created.
    pub async fn start(apiserver: &ApiServer, s: &Scenario) -> Result<EmbeddedCore, RunError> {
        let composites = &s.composites;
        let client = core_client(apiserver, composites.core.request_latency);
        // What a user installs (Crossplane's CRDs, Functions, XRDs, Compositions) is the
        // harness's request; the XR CRDs are core's (its definition controller).
        let user = client_as(apiserver, crate::run::own::harness_user_agent());
        let crds = Api::<CustomResourceDefinition>::all(user.clone());
        let core_crds = Api::<CustomResourceDefinition>::all(client.clone());
        for crd in crossplane_crds() {
            crds.create(&PostParams::default(), &crd)
                .await
                .map_err(|e| setup("cannot install Crossplane's CRDs", e))?;
        }
        let post = PostParams::default();
        for f in &composites.functions {
            let function: Function = serde_json::from_value(f.body.clone())
                .map_err(|e| setup(&format!("Function {}", f.name), e))?;
            Api::<Function>::all(user.clone())
                .create(&post, &function)
                .await
                .map_err(|e| setup(&format!("cannot create Function {}", f.name), e))?;
        }
        for xrd in &composites.xrds {
            let name = xrd.metadata.name.clone().unwrap_or_default();
            Api::<CompositeResourceDefinition>::all(user.clone())
                .create(&post, xrd)
                .await
                .map_err(|e| setup(&format!("cannot create XRD {name}"), e))?;
            // Core's definition controller: the XR kind's CRD.
            let crd = for_composite_resource(xrd).map_err(|e| setup(&format!("XRD {name}"), e))?;
            core_crds
                .create(&post, &crd)
                .await
                .map_err(|e| setup(&format!("cannot create the XR CRD of XRD {name}"), e))?;
        }
        for comp in &composites.compositions {
            let name = comp.metadata.name.clone().unwrap_or_default();
            Api::<Composition>::all(user.clone())
                .create(&post, comp)
                .await
                .map_err(|e| setup(&format!("cannot create Composition {name}"), e))?;
        }
        let metrics = Arc::new(FunctionMetrics::new());
        let faults = FunctionFaults::new(
            composites
                .functions
                .iter()
                .filter(|f| f.runtime == FunctionRuntime::Builtin)
                .map(|f| f.name.as_str()),
        );
        let mut functions = Functions::new();
        for f in &composites.functions {
            match f.runtime {
                FunctionRuntime::Builtin => {
                    let switch = faults
                        .switch(&f.name)
                        .expect("a switch per built-in function");
                    functions.insert(
                        f.name.clone(),
                        Arc::new(
                            InProcessRunner::new(Switchable::new(Resources, switch))
                                .metrics(Arc::clone(&metrics)),
                        ),
                    );
                }
                FunctionRuntime::Address(a) => functions.insert(
                    f.name.clone(),
                    Arc::new(GrpcRunner::new(a).metrics(Arc::clone(&metrics))),
                ),
            }
        }
        let mut core = EmbeddedCore {
            controllers: Vec::new(),
            tasks: Vec::new(),
            metrics,
            breakers: Vec::new(),
            faults,
            recorded: Arc::default(),
        };
        core.controllers_for(&client, s, &functions);
        Ok(core)
    }

    /// One controller per XRD, its watches, and core's event writer and revision
    /// controllers.
    fn controllers_for(&mut self, client: &kube::Client, s: &Scenario, functions: &Functions) {
        let settings = &s.composites.core;
        let requeue = RequeueSettings {
            realtime: settings.realtime,
            poll_interval: settings.poll_interval,
            min_poll_interval: settings.min_poll_interval,
        };
        // Each informer's resync period is jittered, drawn from the scenario's seed.
        let mut rng = crate::rng::seeded(s.seed ^ 0xC0DE);
        let mut resync = || {
            Some(resync_period(
                settings.sync_interval,
                crate::rng::unit(&mut rng),
            ))
        };
        let (events, event_writer) = Recorder::start(client.clone());
        self.tasks.push(event_writer);
        if let Some(recorded) = events.recorded() {
            self.recorded = recorded;
        }
        self.tasks
            .push(tokio::spawn(run_revision_controllers(client.clone())));
        for (i, xrd) in s.composites.xrds.iter().enumerate() {
            // Each XRD's requeue jitter draws from the scenario's seed, so that a run on a
            // paused clock repeats.
            let xrd_settings = XrdSettings {
                requeue,
                breaker: settings.breaker,
                workers: settings.max_reconcile_rate,
                jitter_seed: Some(s.seed ^ 0x7E57_0000 ^ i as u64),
            };
            let started = start_xrd(
                client,
                functions,
                xrd.clone(),
                &xrd_settings,
                (&events, &mut resync),
                &mut self.tasks,
            );
            self.breakers.push(XrdBreaker {
                xrd: started.xrd,
                realtime: started.realtime,
            });
            self.controllers.push(started.controller);
        }
    }

    /// What phases read and change of it.
    #[must_use]
    pub fn probe(&self) -> CoreProbe {
        CoreProbe {
            metrics: Arc::clone(&self.metrics),
            breakers: self
                .breakers
                .iter()
                .map(|b| (b.xrd.clone(), Arc::clone(&b.realtime)))
                .collect(),
            faults: self.faults.clone(),
            recorded: Arc::clone(&self.recorded),
            stats: self
                .controllers
                .iter()
                .map(Controller::stats_handle)
                .collect(),
        }
    }

    /// Stops the watches and the controllers (in-flight reconciles finish).
    pub async fn stop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        for controller in self.controllers.drain(..) {
            controller.shut_down().await;
        }
    }
}
