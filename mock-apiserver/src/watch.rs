//! Watch streams: newline-delimited JSON events over a chunked response.
//!
//! # Semantics
//! - Events come from the store's per-resource broadcast; each watcher filters by
//!   namespace and selectors on its own, so fan-out costs one channel send per write.
//! - A resume point older than the kept history, or a watcher too slow for its
//!   buffer, gets an in-stream `ERROR` 410 `Expired` and the stream ends (never an HTTP
//!   410), so kube's watcher relists.
//! - With `allowWatchBookmarks`, a BOOKMARK is sent every bookmark interval and just
//!   before the `timeoutSeconds` close. A bookmark carries the global resourceVersion
//!   only when every earlier event has been delivered, so resuming from it loses nothing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::Stream;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::{Instant, sleep_until};

use crate::object::StoredObject;
use crate::render::{self, Renderer};
use crate::store::{Event, EventType, Store, WatchStart};

/// Most events written into one chunk per wake-up of a watch stream.
const MAX_BATCH: usize = 256;

/// Decides which objects a watcher sees.
pub type Filter = Arc<dyn Fn(&StoredObject) -> bool + Send + Sync>;

/// The parameters of one watch.
#[derive(Clone)]
pub struct WatchParams {
    /// Renders events for the client.
    pub renderer: Renderer,
    /// Which objects to send.
    pub filter: Filter,
    /// When to end the stream.
    pub timeout: Duration,
    /// Whether to send BOOKMARK events.
    pub bookmarks: bool,
    /// How often to send bookmarks.
    pub bookmark_interval: Duration,
    /// `sendInitialEvents=true`: end the initial ADDED events with an annotated bookmark.
    pub initial_events_end: bool,
    /// Ends the stream early when it changes to `true` (server shutdown).
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

struct State {
    params: WatchParams,
    store: Arc<Store>,
    pending: VecDeque<Bytes>,
    receiver: broadcast::Receiver<Event>,
    deadline: Instant,
    next_bookmark: Instant,
    last_seen: u64,
    done: bool,
}

/// How a change looks to a watcher with `filter`: a modification that moves an object
/// into the selection is ADDED, one that moves it out is DELETED, and changes outside
/// the selection are not sent.
fn visible_as(
    filter: &Filter,
    kind: EventType,
    object: &StoredObject,
    previous: Option<&StoredObject>,
) -> Option<EventType> {
    let now = filter(object);
    match (kind, previous.map(|p| filter(p))) {
        (EventType::Modified, Some(before)) => match (before, now) {
            (true, true) => Some(EventType::Modified),
            (false, true) => Some(EventType::Added),
            (true, false) => Some(EventType::Deleted),
            (false, false) => None,
        },
        _ => now.then_some(kind),
    }
}

/// The in-stream 410 `Expired` line.
pub fn expired_line(requested: u64, oldest: u64) -> Bytes {
    render::line(&json!({
        "type": "ERROR",
        "object": {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("too old resource version: {requested} ({oldest})"),
            "reason": "Expired", "code": 410
        }
    }))
}

/// A stream of watch-event lines for `start`.
pub fn stream(
    store: Arc<Store>,
    start: WatchStart,
    params: WatchParams,
) -> impl Stream<Item = Bytes> + Send {
    let now = Instant::now();
    let mut pending = VecDeque::new();
    let mut done = false;
    let mut last_seen = start.resource_version;
    if let Some((requested, oldest)) = start.expired {
        pending.push_back(expired_line(requested, oldest));
        done = true;
    } else {
        let mut chunk = BytesMut::new();
        let mut newest_replayed = 0;
        for event in &start.initial {
            if let Event::Change(kind, object, previous) = event {
                newest_replayed = newest_replayed.max(object.resource_version);
                if let Some(kind) = visible_as(&params.filter, *kind, object, previous.as_deref()) {
                    chunk.extend_from_slice(&params.renderer.watch_line(kind, object));
                }
            }
        }
        if !chunk.is_empty() {
            pending.push_back(chunk.freeze());
        }
        if params.initial_events_end {
            pending.push_back(params.renderer.bookmark_line(start.resource_version, true));
        }
        // A replay from history ends at the newest replayed event; the current version
        // is only known to be delivered once the receiver is drained.
        last_seen = if start.initial.is_empty() {
            last_seen
        } else {
            newest_replayed.max(last_seen)
        };
    }
    let state = State {
        deadline: now + params.timeout,
        next_bookmark: now + params.bookmark_interval,
        params,
        store,
        pending,
        receiver: start.receiver,
        last_seen,
        done,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(chunk) = state.pending.pop_front() {
                return Some((chunk, state));
            }
            if state.done {
                return None;
            }
            state.step().await;
        }
    })
}

impl State {
    async fn step(&mut self) {
        let stop = async {
            match &mut self.params.stop {
                Some(rx) => {
                    let _ = rx.wait_for(|stopped| *stopped).await;
                }
                None => std::future::pending().await,
            }
        };
        let bookmarks = self.params.bookmarks;
        tokio::select! {
            biased;
            () = stop => self.done = true,
            received = self.receiver.recv() => self.on_receive(received),
            () = sleep_until(self.next_bookmark), if bookmarks => {
                self.bookmark();
                self.next_bookmark = Instant::now() + self.params.bookmark_interval;
            }
            () = sleep_until(self.deadline) => {
                if bookmarks {
                    self.bookmark();
                }
                self.done = true;
            }
        }
    }

    fn on_receive(&mut self, received: Result<Event, RecvError>) {
        let mut chunk = BytesMut::new();
        let mut next = Some(received);
        // Batch whatever is already queued into one chunk, bounded per wake-up; an
        // event is only taken from the receiver when this batch will write it.
        let mut batched = 0;
        while let Some(received) = next.take() {
            batched += 1;
            match received {
                Ok(Event::Change(kind, object, previous)) => {
                    self.last_seen = self.last_seen.max(object.resource_version);
                    if let Some(kind) =
                        visible_as(&self.params.filter, kind, &object, previous.as_deref())
                    {
                        chunk.extend_from_slice(&self.params.renderer.watch_line(kind, &object));
                    }
                }
                Ok(Event::Expired) => {
                    chunk.extend_from_slice(&expired_line(self.last_seen, self.last_seen + 1));
                    self.done = true;
                    break;
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "watcher fell behind; expiring its stream");
                    chunk.extend_from_slice(&expired_line(self.last_seen, self.last_seen + missed));
                    self.done = true;
                    break;
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    break;
                }
            }
            if batched >= MAX_BATCH {
                break;
            }
            next = match self.receiver.try_recv() {
                Ok(event) => Some(Ok(event)),
                Err(broadcast::error::TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
                Err(_) => None,
            };
        }
        if !chunk.is_empty() {
            self.pending.push_back(chunk.freeze());
        }
    }

    fn bookmark(&mut self) {
        let rv = self
            .store
            .bookmark_version(&self.receiver)
            .unwrap_or(self.last_seen)
            .max(self.last_seen);
        self.last_seen = rv;
        self.pending
            .push_back(self.params.renderer.bookmark_line(rv, false));
    }
}
