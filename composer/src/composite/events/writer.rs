//! The broadcaster's queues and `recordToSink` (`tools/record/event.go`): a recorded event
//! waits in the broadcaster's incoming queue (1000, dropped when full), is handed to the
//! watcher's queue (1000, dropped when full), and the watcher writes one event at a time:
//! the correlator decides, then a POST, or a strategic-merge PATCH of a repeat (a PATCH the
//! API server answers NotFound becomes a POST). A refusal by the API server is final; any
//! other failure is retried, 12 tries in all, 10 s apart, the first wait a random share of
//! 10 s. Waits are on tokio's clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, Patch, PatchParams, PostParams};
use provider::reconciler::meta::Clock;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::mpsc;

use super::correlator::{Correlated, Correlator};
use super::names::Names;

/// `maxQueuedEvents`: the broadcaster's incoming queue and each watcher's queue.
pub const MAX_QUEUED_EVENTS: usize = 1000;
/// `maxTriesPerEvent`.
pub const MAX_TRIES_PER_EVENT: u32 = 12;
/// `defaultSleepDuration`.
pub const SLEEP: Duration = Duration::from_secs(10);

/// What became of the recorded events.
#[derive(Debug, Default)]
pub struct EventCounters {
    pub(super) queued: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) skipped: AtomicU64,
    pub(super) created: AtomicU64,
    pub(super) patched: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) retries: AtomicU64,
    pub(super) abandoned: AtomicU64,
}

impl EventCounters {
    /// Events accepted into the broadcaster's queue.
    #[must_use]
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }
    /// Events dropped because the broadcaster's or the watcher's queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
    /// Events the spam filter skipped.
    #[must_use]
    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }
    /// Events written by a POST.
    #[must_use]
    pub fn created(&self) -> u64 {
        self.created.load(Ordering::Relaxed)
    }
    /// Events written by a PATCH.
    #[must_use]
    pub fn patched(&self) -> u64 {
        self.patched.load(Ordering::Relaxed)
    }
    /// Events the API server refused (not retried).
    #[must_use]
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
    /// Failed tries that were retried.
    #[must_use]
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }
    /// Events given up after [`MAX_TRIES_PER_EVENT`] tries.
    #[must_use]
    pub fn abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::Relaxed)
    }
}

fn add(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// Moves events from the incoming queue to the watcher's, dropping what does not fit
/// (`Broadcaster.distribute` with `DropIfChannelFull`).
pub(super) async fn distribute(
    mut incoming: mpsc::Receiver<Event>,
    watcher: mpsc::Sender<Event>,
    counters: Arc<EventCounters>,
) {
    while let Some(event) = incoming.recv().await {
        if watcher.try_send(event).is_err() {
            add(&counters.dropped);
        }
    }
}

/// The watcher: `recordToSink` for each event.
pub(super) struct Writer {
    pub(super) client: kube::Client,
    pub(super) clock: Clock,
    pub(super) names: Arc<Names>,
    pub(super) counters: Arc<EventCounters>,
    pub(super) correlator: Correlator,
    pub(super) rng: StdRng,
}

/// How one try ended (`recordEvent`'s answer and what it wrote).
enum Try {
    Created,
    Patched,
    Rejected(kube::Error),
    Retry(kube::Error),
}

impl Writer {
    pub(super) fn new(client: kube::Client, clock: Clock, names: Arc<Names>, seed: u64) -> Self {
        Writer {
            client,
            clock,
            names,
            counters: Arc::default(),
            correlator: Correlator::default(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Writes the events of `rx` until every sender is gone.
    pub(super) async fn run(mut self, mut rx: mpsc::Receiver<Event>) {
        while let Some(event) = rx.recv().await {
            self.record_to_sink(event).await;
        }
    }

    async fn record_to_sink(&mut self, event: Event) {
        let now = self.clock.precise_now();
        let names = &self.names;
        let Some(Correlated { mut event, patch }) =
            self.correlator
                .correlate(event, now, |object, t| names.name(object, t))
        else {
            add(&self.counters.skipped);
            return;
        };
        let mut tries = 0;
        loop {
            match self.record_event(&mut event, patch.as_ref()).await {
                Try::Created => return add(&self.counters.created),
                Try::Patched => return add(&self.counters.patched),
                Try::Rejected(error) => {
                    tracing::debug!(%error, reason = ?event.reason, "server rejected event (will not retry)");
                    return add(&self.counters.rejected);
                }
                Try::Retry(error) => {
                    tries += 1;
                    if tries >= MAX_TRIES_PER_EVENT {
                        tracing::debug!(%error, reason = ?event.reason, "unable to write event (retry limit exceeded)");
                        return add(&self.counters.abandoned);
                    }
                    add(&self.counters.retries);
                    let delay = if tries == 1 {
                        // `time.Duration(float64(delay) * rand.Float64())`, to the nanosecond.
                        let share: f64 = self.rng.random();
                        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                        let nanos = (SLEEP.as_nanos() as f64 * share) as u64;
                        Duration::from_nanos(nanos)
                    } else {
                        SLEEP
                    };
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// `recordEvent`: a PATCH for a repeat (its count above 1), a POST otherwise or when the
    /// PATCH finds no event; the server's copy updates the correlator.
    async fn record_event(&mut self, event: &mut Event, patch: Option<&serde_json::Value>) -> Try {
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let events: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let name = event.metadata.name.clone().unwrap_or_default();
        let mut result = None;
        if event.count.unwrap_or_default() > 1
            && let Some(patch) = patch
        {
            let patched = events
                .patch(&name, &PatchParams::default(), &Patch::Strategic(patch))
                .await;
            result = Some(patched.map(|e| (e, Try::Patched)));
        }
        let not_found = matches!(&result, Some(Err(kube::Error::Api(s))) if s.code == 404);
        if result.is_none() || not_found {
            event.metadata.resource_version = None;
            let created = events.create(&PostParams::default(), event).await;
            result = Some(created.map(|e| (e, Try::Created)));
        }
        match result {
            Some(Ok((written, outcome))) => {
                self.correlator.update_state(&written);
                outcome
            }
            // A `StatusError`, or a request that cannot be built (`RequestConstructionError`).
            Some(Err(
                error @ (kube::Error::Api(_)
                | kube::Error::BuildRequest(_)
                | kube::Error::HttpError(_)),
            )) => Try::Rejected(error),
            Some(Err(error)) => Try::Retry(error),
            None => unreachable!("a POST follows when there was no PATCH"),
        }
    }
}
