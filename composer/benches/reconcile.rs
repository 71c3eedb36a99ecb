//! XR reconciles per CPU second, embedded: one steady-state reconcile of an XR of five
//! composed Widgets (the XR, its Composition and revision and the five Widgets read from
//! the watches' cache, one in-process `RunFunction` over the gRPC codec, seven
//! server-side applies, and no status Update since nothing changed) against mock-apiserver
//! in the same process, on one thread, so each iteration's wall time is the CPU time of the
//! composer and the API server together.
//!
//! ```sh
//! cargo bench -p composer --bench reconcile
//! ```
//!
//! Reconciles per CPU second is 1 / the time per iteration criterion reports.

use criterion::{Criterion, criterion_group, criterion_main};

// The tests' fixture, of which the benchmark uses a part.
#[allow(dead_code, unused_imports)]
#[path = "../tests/it/fixture.rs"]
mod fixture;

use composer::composite::Cache;
use fixture::{NS, cached_widgets, realtime, widget_resource, widgets_cluster, xr, xr_resource};
use kube::api::PostParams;
use limiter::crossplane::circuit::BreakerConfig;

const N: usize = 5;

fn steady_reconcile(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (_cluster, reconciler) = runtime.block_on(async {
        let cluster = widgets_cluster(N).await;
        let (breaker, cache) = (realtime(BreakerConfig::default()), Cache::new());
        // The XWidget, Composition, revision and Widget watches fill the cache the
        // reconciles read; nothing drains their queue.
        let (reconciler, _watches) = cached_widgets(&cluster, &breaker, &cache);
        cluster
            .api(&xr_resource())
            .create(&PostParams::default(), &xr("xr-0"))
            .await
            .expect("the XR");
        // The reconciles read the XR from the cache: let its watch deliver it.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        reconciler
            .reconcile(Some(NS), "xr-0", 0.5)
            .await
            .expect("the first reconcile");
        cluster.mark_ready(&widget_resource()).await;
        // Until steady: the reconcile that sees them Ready, and the ones that write what
        // the first reconcile's Updates dropped.
        for _ in 0..3 {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            reconciler
                .reconcile(Some(NS), "xr-0", 0.5)
                .await
                .expect("a reconcile");
        }
        // What one iteration is, at the API server's journal: N+2 applies and no read.
        let from = cluster.server.journal().last_seq();
        reconciler
            .reconcile(Some(NS), "xr-0", 0.5)
            .await
            .expect("a steady reconcile");
        let requests = cluster.server.journal().since(from);
        let verbs: Vec<String> = requests
            .iter()
            .map(|e| format!("{:?} {}", e.verb, e.resource))
            .collect();
        assert_eq!(requests.len(), N + 2, "{verbs:#?}");
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
