//! # limiter
//!
//! The rate limiters and work queues of Kubernetes controllers, reproduced exactly in Rust and
//! proven against the real Go code:
//!
//! | module | reproduces |
//! |---|---|
//! | [`rate`] | golang.org/x/time/rate's token bucket (`Allow`, `Reserve`, `Wait`, cancel, set limit/burst) |
//! | [`clock`] | the one time source of all of them: tokio's clock, or a virtual clock exact to the nanosecond |
//! | [`workqueue`] | client-go's workqueue rate limiters and queues (FIFO, delaying, rate-limiting) and controller-runtime's priority queue |
//! | [`controller`] | controller-runtime's workers and its mapping from reconcile results to queue operations |
//! | [`crossplane`] | crossplane-runtime's rate limits: the global bucket from `--max-reconcile-rate`, its middleware, per-item backoff, poll interval with jitter, the poll-interval and reconcile-requested-at annotations; Crossplane core's XR circuit breaker ([`crossplane::circuit`]) |
//! | [`client_qps`] | client-go's API-client QPS limit, as a tower layer |
//! | [`replay`] | the conformance replay that runs the Go vectors (`limiter-replay` binary) |
//!
//! Where Go behaviour is odd but observable (float truncation such as 4.099999999s, the
//! exponential limiter's overflow hole, `container/heap` tie order), it is copied and tested
//! against the transcripts the Go libraries printed. Where we improve on it, it is a named mode
//! and the original stays: [`crossplane::RateLimitModel::InQueue`] next to
//! [`crossplane::RateLimitModel::Crossplane`], [`crossplane::Jitter::Proportional`] next to
//! [`crossplane::Jitter::Fixed`].
//!
//! # Semantics of time
//! Every limiter, queue and controller reads and sleeps on one [`clock::Clock`]:
//! - **tokio's clock** by default, in real time or under tokio's paused clock with auto-advance
//!   (deterministic; what a provider run in virtual time uses, since it shares that clock with
//!   everything else in the process). Reads are exact; wake-ups land on tokio's millisecond
//!   ticks or later, and cost no budget: reservations book their tokens at the exact instant
//!   they may act, so rates and budgets stay exact (see the `pacing` benchmark);
//! - a [`clock::VirtualClock`], exact to the nanosecond, waking each sleeper at its own
//!   instant: the conformance replay runs on one, as Go's vectors ran in a `synctest` bubble.
//!
//! The [`clock`] module documents both in full, and why the provider must stay on tokio's.
//!
//! ## Where to start
//! A provider builds its controllers from one [`crossplane::ProviderRuntime`]:
//!
//! ```
//! use std::num::NonZeroU32;
//! use std::sync::Arc;
//! use limiter::controller::{Action, FnReconciler, Request};
//! use limiter::crossplane::{ProviderRuntime, RateLimitModel, Settings};
//! use limiter::workqueue::QueueMetrics;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let settings = Settings::new(NonZeroU32::new(10).unwrap()).model(RateLimitModel::InQueue);
//! let runtime = ProviderRuntime::new(settings);
//! let controller = runtime.controller(
//!     "buckets",
//!     Arc::new(FnReconciler(|req: Request| async move {
//!         // Observe, then Create / Update / Delete ...
//!         let _ = req;
//!         Ok(Action::requeue_after(std::time::Duration::from_secs(60)))
//!     })),
//!     Arc::new(QueueMetrics::default()),
//! );
//! controller.queue().add(Request::new("default", "my-bucket"));
//! tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//! assert_eq!(controller.stats().requeue_after, 1);
//! controller.shut_down().await;
//! # }
//! ```

pub mod client_qps;
pub mod clock;
pub mod controller;
pub mod crossplane;
pub mod go;
mod instant;
pub mod rate;
pub mod replay;
pub mod workqueue;
