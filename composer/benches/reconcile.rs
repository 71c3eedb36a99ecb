//! XR reconciles per CPU second, embedded: one steady-state reconcile of an XR of five
//! composed Widgets (the XR GET, the Composition and revision LISTs, five composed GETs,
//! one in-process `RunFunction` over the gRPC codec, seven server-side applies) against
//! mock-apiserver in the same process, on one thread, so each iteration's wall time is the
//! CPU time of the composer and the API server together.
//!
//! ```sh
//! cargo bench -p composer --bench reconcile
//! ```
//!
//! Reconciles per CPU second is 1 / the time per iteration criterion reports.

use criterion::{Criterion, criterion_group, criterion_main};

#[allow(dead_code)]
#[path = "../tests/it/fixture.rs"]
mod fixture;

use composer::composite::RequeueSettings;
use composer::function::builtin::Resources;
use composer::function::{Functions, InProcessRunner};
use fixture::{
    Cluster, NS, realtime, reconciler, widget_resource, widgets_pipeline, xr, xr_resource, xrd,
};
use kube::api::PostParams;
use limiter::crossplane::circuit::BreakerConfig;
use mock_apiserver::{ApiServer, Config};

const N: usize = 5;

fn steady_reconcile(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (_cluster, reconciler) = runtime.block_on(async {
        let cluster = Cluster::new(ApiServer::new(Config::default())).await;
        cluster.install_xrd(&xrd()).await;
        cluster
            .composition("widgets", &widgets_pipeline(N, "60s"))
            .await;
        let functions = Functions::new().with("resources", InProcessRunner::new(Resources));
        let reconciler = reconciler(
            &cluster,
            functions,
            RequeueSettings::default(),
            &realtime(BreakerConfig::default()),
        );
        cluster
            .api(&xr_resource())
            .create(&PostParams::default(), &xr("xr-0"))
            .await
            .expect("the XR");
        reconciler
            .reconcile(Some(NS), "xr-0", 0.5)
            .await
            .expect("the first reconcile");
        cluster.mark_ready(&widget_resource()).await;
        reconciler
            .reconcile(Some(NS), "xr-0", 0.5)
            .await
            .expect("the reconcile that sees them Ready");
        (cluster, reconciler)
    });
    c.bench_function("steady XR reconcile, 5 composed, embedded", |b| {
        b.iter(|| {
            runtime
                .block_on(reconciler.reconcile(Some(NS), "xr-0", 0.5))
                .expect("a steady reconcile")
        });
    });
}

criterion_group!(benches, steady_reconcile);
criterion_main!(benches);
