//! client-go's `EventCorrelator` with `NewEventCorrelator`'s defaults
//! (`tools/record/events_cache.go`): each event passes the aggregator, then the logger, then
//! the spam filter, in that order, so a filtered event still counts in its logger entry.
//!
//! - The aggregator groups events that differ only by message (`EventAggregatorByReasonFunc`):
//!   the 10th distinct message within 600 s of the last of them becomes an event of its own,
//!   "(combined from similar events): …", counted under the group's key.
//! - The logger counts repeats of one key: the first is created, each later one patches the
//!   created event with `count`, `lastTimestamp` and `message`.
//! - The spam filter (`getSpamKey`: source, involved object and type, not the reason) allows
//!   a burst of 25 per key, refilled at one per 300 s (a token bucket, `x/time/rate`).
//!
//! Each of the three keeps at most 4096 keys, the least recently used evicted. Times are read
//! from the recorder's clock (tokio's).

use std::collections::BTreeSet;
use std::num::NonZeroUsize;

use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use lru::LruCache;
use provider::reconciler::meta::stamp;

/// `maxLruCacheEntries`.
pub const LRU_ENTRIES: NonZeroUsize = NonZeroUsize::new(4096).unwrap();
/// `defaultAggregateMaxEvents`.
pub const AGGREGATE_MAX_EVENTS: usize = 10;
/// `defaultAggregateIntervalInSeconds`.
pub const AGGREGATE_INTERVAL_SECONDS: i64 = 600;
/// `defaultSpamBurst`.
pub const SPAM_BURST: f64 = 25.0;
/// `defaultSpamQPS`, a `float32` in client-go (`1./300.`), widened as `rate.Limit` does.
pub const SPAM_QPS: f32 = 1. / 300.;

fn source(e: &Event) -> (&str, &str) {
    e.source.as_ref().map_or(("", ""), |s| {
        (
            s.component.as_deref().unwrap_or_default(),
            s.host.as_deref().unwrap_or_default(),
        )
    })
}

fn s(v: Option<&String>) -> &str {
    v.map_or("", String::as_str)
}

/// Source, kind, namespace, name, then what `with` adds between name and type.
fn object_key(e: &Event, field_path: bool) -> String {
    let (component, host) = source(e);
    let o = &e.involved_object;
    let mut key = String::new();
    for part in [
        component,
        host,
        s(o.kind.as_ref()),
        s(o.namespace.as_ref()),
        s(o.name.as_ref()),
    ] {
        key.push_str(part);
    }
    if field_path {
        key.push_str(s(o.field_path.as_ref()));
    }
    key.push_str(s(o.uid.as_ref()));
    key.push_str(s(o.api_version.as_ref()));
    key.push_str(s(e.type_.as_ref()));
    key
}

/// `getEventKey`: source, involved object (with its field path), type, reason and message,
/// joined without a separator as client-go joins them.
pub fn event_key(e: &Event) -> String {
    let mut key = object_key(e, true);
    key.push_str(s(e.reason.as_ref()));
    key.push_str(s(e.message.as_ref()));
    key
}

/// `getSpamKey`.
pub fn spam_key(e: &Event) -> String {
    object_key(e, false)
}

/// `EventAggregatorByReasonFunc`: the group's key and the event's key within it.
fn aggregate_keys(e: &Event) -> (String, String) {
    let mut key = object_key(e, false);
    key.push_str(s(e.reason.as_ref()));
    key.push_str(s(e.reporting_component.as_ref()));
    key.push_str(s(e.reporting_instance.as_ref()));
    (key, s(e.message.as_ref()).to_owned())
}

/// A token bucket as `rate.NewLimiter(SPAM_QPS, SPAM_BURST)` that only `Allow`s.
#[derive(Clone, Debug)]
struct Bucket {
    tokens: f64,
    last: Timestamp,
}

impl Bucket {
    /// `AllowN(now, 1)`.
    fn allow(&mut self, now: Timestamp) -> bool {
        let last = self.last.min(now);
        let elapsed = now.duration_since(last).as_secs_f64();
        let tokens = (self.tokens + elapsed * f64::from(SPAM_QPS)).min(SPAM_BURST) - 1.0;
        if tokens < 0.0 {
            return false;
        }
        (self.tokens, self.last) = (tokens, now);
        true
    }
}

/// The aggregator's record of a group: its distinct messages and its last event's time.
#[derive(Debug)]
struct Group {
    messages: BTreeSet<String>,
    last: Timestamp,
}

/// The logger's record of a key: `eventLog`.
#[derive(Clone, Debug)]
struct Observed {
    count: i32,
    first: Option<Time>,
    name: Option<String>,
    resource_version: Option<String>,
}

impl Observed {
    fn of(e: &Event) -> Self {
        Observed {
            count: e.count.unwrap_or_default(),
            first: e.first_timestamp.clone(),
            name: e.metadata.name.clone(),
            resource_version: e.metadata.resource_version.clone(),
        }
    }
}

/// What to do with an event (`EventCorrelateResult`): `None` when the spam filter skips it.
#[derive(Debug)]
pub struct Correlated {
    /// The event to create, or whose name to patch.
    pub event: Event,
    /// The strategic-merge patch for a repeat (`count` above 1).
    pub patch: Option<serde_json::Value>,
}

/// The correlator.
#[derive(Debug)]
pub struct Correlator {
    buckets: LruCache<String, Bucket>,
    groups: LruCache<String, Group>,
    observed: LruCache<String, Observed>,
}

impl Default for Correlator {
    fn default() -> Self {
        Correlator {
            buckets: LruCache::new(LRU_ENTRIES),
            groups: LruCache::new(LRU_ENTRIES),
            observed: LruCache::new(LRU_ENTRIES),
        }
    }
}

impl Correlator {
    /// `EventCorrelate` at `now`; `name` gives a new aggregate event's name from the time.
    pub fn correlate(
        &mut self,
        event: Event,
        now: Timestamp,
        name: impl FnOnce(&str, Timestamp) -> String,
    ) -> Option<Correlated> {
        let (event, key) = self.aggregate(event, now, name);
        let correlated = self.observe(event, key);
        self.allow(&correlated.event, now).then_some(correlated)
    }

    /// `EventAggregate`: the event and its logger key, or the group's aggregate event and
    /// the group's key.
    fn aggregate(
        &mut self,
        event: Event,
        now: Timestamp,
        name: impl FnOnce(&str, Timestamp) -> String,
    ) -> (Event, String) {
        let event_key = event_key(&event);
        let (group_key, local_key) = aggregate_keys(&event);
        let max_interval = k8s_openapi::jiff::SignedDuration::from_secs(AGGREGATE_INTERVAL_SECONDS);
        let fresh = match self.groups.get_mut(&group_key) {
            Some(group) => now.duration_since(group.last) > max_interval,
            None => true,
        };
        if fresh {
            self.groups.put(
                group_key.clone(),
                Group {
                    messages: BTreeSet::new(),
                    last: now,
                },
            );
        }
        let Some(group) = self.groups.get_mut(&group_key) else {
            return (event, event_key);
        };
        group.messages.insert(local_key);
        group.last = now;
        if group.messages.len() < AGGREGATE_MAX_EVENTS {
            return (event, event_key);
        }
        // `PopAny` drops one message of the group, whichever Go's map order gives first;
        // here the least, so that a run repeats.
        group.messages.pop_first();
        let object = event.involved_object.name.clone().unwrap_or_default();
        let time = Some(Time(now));
        let aggregate = Event {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name(&object, now)),
                namespace: event.metadata.namespace.clone(),
                ..Default::default()
            },
            count: Some(1),
            first_timestamp: time.clone(),
            last_timestamp: time,
            message: Some(format!(
                "(combined from similar events): {}",
                s(event.message.as_ref())
            )),
            type_: event.type_.clone(),
            reason: event.reason.clone(),
            source: event.source.clone(),
            involved_object: event.involved_object,
            ..Event::default()
        };
        (aggregate, group_key)
    }

    /// `eventObserve`: a repeat of `key` takes the first occurrence's name, resource version
    /// and first time, the next count, and a patch of what changed from an event without
    /// count, time and message.
    fn observe(&mut self, mut event: Event, key: String) -> Correlated {
        let last = self.observed.get_mut(&key).cloned();
        let mut patch = None;
        if let Some(last) = last.filter(|l| l.count > 0) {
            event.metadata.name = last.name;
            event.metadata.resource_version = last.resource_version;
            event.first_timestamp = last.first;
            event.count = Some(last.count.saturating_add(1));
            let mut body = serde_json::Map::new();
            body.insert("count".into(), event.count.into());
            if let Some(t) = &event.last_timestamp
                && t.0 != Timestamp::UNIX_EPOCH
            {
                body.insert("lastTimestamp".into(), stamp(t.0).into());
            }
            if let Some(message) = event.message.as_ref().filter(|m| !m.is_empty()) {
                body.insert("message".into(), message.clone().into());
            }
            patch = Some(serde_json::Value::Object(body));
        }
        self.observed.put(key, Observed::of(&event));
        Correlated { event, patch }
    }

    /// The spam filter: false when the event's key has no token left.
    fn allow(&mut self, event: &Event, now: Timestamp) -> bool {
        let key = spam_key(event);
        // A new bucket is full (`rate.Limiter` fills from its zero time).
        let mut bucket = self.buckets.get_mut(&key).cloned().unwrap_or(Bucket {
            tokens: SPAM_BURST,
            last: now,
        });
        let allowed = bucket.allow(now);
        self.buckets.put(key, bucket);
        allowed
    }

    /// `UpdateState`: the server's copy of a written event, under its own key.
    pub fn update_state(&mut self, written: &Event) {
        self.observed.put(event_key(written), Observed::of(written));
    }
}
