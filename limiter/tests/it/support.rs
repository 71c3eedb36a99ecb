//! What several test files share.

use std::sync::{Arc, Mutex};

use limiter::clock::Clock;
use limiter::controller::{Action, FnReconciler, Request, SharedReconciler};
use tokio::time::Instant;

/// When each reconcile started, in the order they started.
pub type Starts = Arc<Mutex<Vec<Instant>>>;

/// A reconciler that records its start on `clock` into `starts` and succeeds.
pub fn recording(starts: &Starts, clock: Clock) -> SharedReconciler<Request> {
    let starts = Arc::clone(starts);
    Arc::new(FnReconciler(move |_req: Request| {
        let (starts, clock) = (Arc::clone(&starts), clock.clone());
        async move {
            starts.lock().unwrap().push(clock.now());
            Ok(Action::done())
        }
    }))
}
