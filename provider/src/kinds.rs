//! Starting a managed kind's controller: the parts of one provider that every controller
//! shares, and the wiring of one kind (cache, reconciler, queue, watch).

use std::sync::Arc;

use kube::api::Api;
use kube::runtime::reflector;
use limiter::controller::Request;
use limiter::crossplane::{ProviderRuntime, Scope};
use limiter::workqueue::QueueMetrics;
use tokio::task::JoinSet;

use crate::crd::Managed;
use crate::metrics::Controllers;
use crate::reconciler::{Connecter, Context, ManagedReconciler};
use crate::watch::feed_queue;

/// What starting a managed kind's controller needs: the provider's shared parts.
pub(crate) struct Kinds<'a> {
    pub(crate) runtime: &'a ProviderRuntime,
    pub(crate) ctx: &'a Arc<Context>,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) controllers: &'a Controllers,
    pub(crate) queues: &'a mut Vec<(String, Arc<QueueMetrics<Request>>)>,
    pub(crate) watches: &'a mut JoinSet<()>,
}

impl Kinds<'_> {
    /// The Kubernetes client.
    pub(crate) fn client(&self) -> kube::Client {
        self.ctx.client.clone()
    }

    /// Starts the controller of `K`, connecting through `connecter`, in the global bucket of
    /// its scope ([`Managed::SCOPE`]).
    pub(crate) fn start<K: Managed>(&mut self, connecter: Arc<dyn Connecter<K>>) {
        let kind = K::kind(&());
        let name = format!("managed/{}.{}", kind.to_lowercase(), K::group(&()));
        let (store, writer) = reflector::store::<K>();
        let reconciler = ManagedReconciler::<K>::new(Arc::clone(self.ctx), store, connecter);
        let queue_metrics = Arc::new(QueueMetrics::default());
        let controller = self.runtime.controller_in(
            K::SCOPE,
            &name,
            Arc::new(reconciler),
            Arc::clone(&queue_metrics),
        );
        // Cluster-scoped kinds are watched everywhere; `namespace` filters namespaced ones.
        let api = match (self.namespace, K::SCOPE) {
            (Some(ns), Scope::Namespaced) => K::api(self.client(), ns),
            _ => Api::<K>::all(self.client()),
        };
        self.watches.spawn(feed_queue(
            api,
            writer,
            controller.queue().clone(),
            K::LABEL,
        ));
        self.queues.push((name, queue_metrics));
        self.controllers.lock().push(controller);
    }
}
