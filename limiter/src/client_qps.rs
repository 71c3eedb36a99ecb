//! A tower layer that limits a client's requests per second, with client-go's semantics: every
//! request waits on an x/time/rate bucket (`rate.NewLimiter(QPS, Burst).Wait(ctx)`) before it
//! is sent.
//!
//! It wraps any tower `Service`: the service stack of a `kube::Client`
//! (`kube::Client::new(ServiceBuilder::new().layer(layer).service(inner), ns)`) or a hyper
//! client. Clones of the layer and of the services it builds share one bucket, so every request
//! of a process goes through one limiter.
//!
//! ```
//! use std::num::NonZeroU32;
//! use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
//! use limiter::client_qps::ClientQpsLayer;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let layer = ClientQpsLayer::new(5.0, NonZeroU32::new(10).unwrap());
//! let mut svc = ServiceBuilder::new()
//!     .layer(layer.clone())
//!     .service(service_fn(|n: u32| async move { Ok::<_, std::convert::Infallible>(n * 2) }));
//! let start = tokio::time::Instant::now();
//! for i in 0..11 {
//!     assert_eq!(svc.ready().await.unwrap().call(i).await.unwrap(), i * 2);
//! }
//! // The burst of 10 goes at once; the 11th request waits 1/5 s.
//! assert_eq!(start.elapsed(), std::time::Duration::from_millis(200));
//! # }
//! ```

use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower::{Layer, Service};

use crate::rate::{Limit, Limiter};

/// Limits requests to `qps` per second with a burst, sharing one bucket among clones.
#[derive(Clone, Debug)]
pub struct ClientQpsLayer {
    limiter: Limiter,
}

impl ClientQpsLayer {
    /// A bucket of `burst` requests refilling at `qps` per second (client-go's `QPS` and
    /// `Burst`). A `qps` of `f64::MAX` ([`Limit::INF`]) disables limiting.
    #[must_use]
    pub fn new(qps: f64, burst: NonZeroU32) -> Self {
        ClientQpsLayer {
            limiter: Limiter::new(Limit(qps), i64::from(burst.get())),
        }
    }

    /// Uses an existing bucket.
    #[must_use]
    pub fn from_limiter(limiter: Limiter) -> Self {
        ClientQpsLayer { limiter }
    }

    /// The bucket (for metrics: tokens left, limit).
    #[must_use]
    pub fn limiter(&self) -> &Limiter {
        &self.limiter
    }
}

impl<S> Layer<S> for ClientQpsLayer {
    type Service = ClientQps<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientQps {
            inner,
            limiter: self.limiter.clone(),
        }
    }
}

/// The service [`ClientQpsLayer`] builds.
#[derive(Clone, Debug)]
pub struct ClientQps<S> {
    inner: S,
    limiter: Limiter,
}

impl<S, Req> Service<Req> for ClientQps<S>
where
    S: Service<Req> + Clone + Send + 'static,
    S::Future: Send + 'static,
    Req: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Req) -> Self::Future {
        // The ready clone goes with the request; a fresh clone stays for the next poll_ready.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let limiter = self.limiter.clone();
        Box::pin(async move {
            // The burst is at least 1, so waiting for one token cannot fail.
            let _ = limiter.wait().await;
            inner.call(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::time::Instant;
    use tower::{ServiceExt, service_fn};

    #[tokio::test(start_paused = true)]
    async fn clones_share_one_bucket() {
        let layer = ClientQpsLayer::new(1.0, NonZeroU32::new(1).unwrap());
        let svc = layer.layer(service_fn(|()| async { Ok::<_, ()>(()) }));
        let start = Instant::now();
        svc.clone().oneshot(()).await.unwrap();
        svc.clone().oneshot(()).await.unwrap();
        svc.oneshot(()).await.unwrap();
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }
}
