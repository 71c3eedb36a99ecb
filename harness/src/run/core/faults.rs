//! The built-in function's faults, switched by `functionFault` phases while core runs: each
//! in-process Function is wrapped in a [`Switchable`] that a phase sets and clears, and that
//! counts the calls that reach the function (its own count, beside core's
//! `function_run_function_request_total`, which counts the calls core makes).
//!
//! # Semantics
//! - `down`: no call reaches the function; each waits, as gRPC's wait-for-ready does, until
//!   core's deadline ends it (`DeadlineExceeded` in core's metrics, nothing in the
//!   function's count).
//! - `delay`: the function answers that much later on the run's clock; a call still
//!   waiting at core's deadline is ended by it.
//! - `errorPercent` p: of the calls made while the fault is set, the k-th (from 1) is
//!   answered with a FATAL result when ⌊k·p/100⌋ > ⌊(k − 1)·p/100⌋: p % of them, spread
//!   evenly, the same in every run. The FATAL result is function-sdk-go's `response.Fatal`.
//! - `ttl`: every answer's `meta.ttl` is replaced (0: no TTL, so no requeue from it).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use composer::function::proto::{ResponseMeta, RunFunctionRequest, RunFunctionResponse};
use composer::function::{BoxFuture, Function, response, value::to_duration};

use crate::scenario::composite::FunctionFault;

/// One function's fault switch and its own call count.
#[derive(Debug, Default)]
pub struct Switch {
    fault: Mutex<Option<FunctionFault>>,
    /// Calls that reached the function.
    reached: AtomicU64,
    /// Calls made while the current fault is set (its error spreading counts them).
    under_fault: AtomicU64,
    /// Calls answered with a FATAL result by the fault.
    failed: AtomicU64,
}

impl Switch {
    fn fault(&self) -> Option<FunctionFault> {
        self.fault.lock().expect("fault switch").clone()
    }
}

/// The in-process functions' switches, by function name: what `functionFault` phases set
/// and what the run reads.
#[derive(Clone, Debug, Default)]
pub struct FunctionFaults {
    switches: Arc<BTreeMap<String, Arc<Switch>>>,
}

/// One function's own counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OwnCounts {
    /// Calls that reached the function.
    pub reached: u64,
    /// Of them, answered with a FATAL result by a fault.
    pub failed: u64,
}

impl FunctionFaults {
    /// Switches for `names`.
    #[must_use]
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Self {
        FunctionFaults {
            switches: Arc::new(
                names
                    .into_iter()
                    .map(|n| (n.to_owned(), Arc::new(Switch::default())))
                    .collect(),
            ),
        }
    }

    /// The switch of `name`, if it is an in-process function.
    #[must_use]
    pub fn switch(&self, name: &str) -> Option<Arc<Switch>> {
        self.switches.get(name).cloned()
    }

    /// Sets (or with `None` clears) the fault of `name`; whether it is one of these.
    pub fn set(&self, name: &str, fault: Option<FunctionFault>) -> bool {
        let Some(s) = self.switches.get(name) else {
            return false;
        };
        *s.fault.lock().expect("fault switch") = fault;
        s.under_fault.store(0, Ordering::Relaxed);
        true
    }

    /// Every function's own counts so far.
    #[must_use]
    pub fn counts(&self) -> BTreeMap<String, OwnCounts> {
        self.switches
            .iter()
            .map(|(n, s)| {
                (
                    n.clone(),
                    OwnCounts {
                        reached: s.reached.load(Ordering::Relaxed),
                        failed: s.failed.load(Ordering::Relaxed),
                    },
                )
            })
            .collect()
    }
}

/// Whether the `k`-th call (from 1) under an error share of `percent` fails.
#[must_use]
pub fn fails(k: u64, percent: f64) -> bool {
    #[allow(clippy::cast_precision_loss)]
    let share = |n: u64| (n as f64 * percent / 100.0 + 1e-9).floor();
    share(k) > share(k - 1)
}

/// A function whose answers its [`Switch`] may fault.
pub struct Switchable<F> {
    inner: F,
    switch: Arc<Switch>,
}

impl<F: Function> Switchable<F> {
    /// `inner`, switched by `switch`.
    pub fn new(inner: F, switch: Arc<Switch>) -> Self {
        Switchable { inner, switch }
    }
}

impl<F: Function> Function for Switchable<F> {
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>> {
        Box::pin(async move {
            let fault = self.switch.fault();
            let Some(fault) = fault else {
                self.switch.reached.fetch_add(1, Ordering::Relaxed);
                return self.inner.run_function(request).await;
            };
            if fault.down {
                return std::future::pending().await;
            }
            self.switch.reached.fetch_add(1, Ordering::Relaxed);
            if !fault.delay.is_zero() {
                tokio::time::sleep(fault.delay).await;
            }
            let k = self.switch.under_fault.fetch_add(1, Ordering::Relaxed) + 1;
            if fault.error_percent > 0.0 && fails(k, fault.error_percent) {
                self.switch.failed.fetch_add(1, Ordering::Relaxed);
                return Ok(response::fatal(
                    request,
                    "injected fault: the function failed this call",
                ));
            }
            let mut answer = self.inner.run_function(request).await?;
            if let Some(ttl) = fault.ttl {
                answer.meta.get_or_insert_with(ResponseMeta::default).ttl = Some(to_duration(ttl));
            }
            Ok(answer)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::fails;

    #[test]
    fn an_error_share_fails_that_share_of_calls_spread_evenly() {
        let failed: Vec<u64> = (1..=10).filter(|&k| fails(k, 30.0)).collect();
        assert_eq!(failed, vec![4, 7, 10]);
        assert_eq!((1..=1000).filter(|&k| fails(k, 25.0)).count(), 250);
        assert!((1..=7).all(|k| fails(k, 100.0)));
    }
}
