//! Paced writes: one request per resource, started `1/rate` apart, at most
//! [`MAX_IN_FLIGHT`] at a time. Every action that writes resources writes through here.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::state::State;

/// Writes in flight at once, whatever the rate.
pub const MAX_IN_FLIGHT: usize = 64;

/// One write's outcome: the resource, when it started (µs), whether it succeeded.
pub type Written = ((usize, u32), u64, bool);

impl State<'_> {
    /// Runs `op` for every target, starting them `1/rate` apart (all at once without a rate),
    /// at most [`MAX_IN_FLIGHT`] at a time. Returns each target's start time and success.
    pub async fn paced<F, Fut>(
        &self,
        targets: &[(usize, u32)],
        rate: Option<f64>,
        op: F,
    ) -> Vec<Written>
    where
        F: Fn(usize, u32) -> Fut,
        Fut: std::future::Future<Output = bool> + Send + 'static,
    {
        let permits = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
        let mut tasks = JoinSet::new();
        let begin = Instant::now();
        for (n, &(g, i)) in targets.iter().enumerate() {
            if let Some(r) = rate.filter(|r| *r > 0.0) {
                tokio::time::sleep_until(begin + Duration::from_secs_f64(n as f64 / r)).await;
            }
            let permit = Arc::clone(&permits)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let at = self.now_us();
            let fut = op(g, i);
            tasks.spawn(async move {
                let ok = fut.await;
                drop(permit);
                ((g, i), at, ok)
            });
        }
        let mut out = Vec::with_capacity(targets.len());
        while let Some(r) = tasks.join_next().await {
            if let Ok(r) = r {
                out.push(r);
            }
        }
        out
    }

    /// Merges `body` into every target, paced at `rate`.
    pub async fn patch_all(
        &self,
        targets: &[(usize, u32)],
        body: &serde_json::Value,
        rate: Option<f64>,
    ) -> Vec<Written> {
        let s = self.scenario;
        self.paced(targets, rate, |g, i| {
            let api = self.api(g);
            let name = s.groups[g].resource_name(i, &s.name);
            let body = body.clone();
            async move {
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
                    .await
                    .is_ok()
            }
        })
        .await
    }
}
