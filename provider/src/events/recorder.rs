//! kube-runtime's `Recorder` (kube 5), on the provider's clock instead of the wall clock:
//! the same event names, keys, series and six-minute cache, so the same requests reach the
//! API server, but every time is read from tokio's clock. On a paused clock kube's recorder
//! would date events by the wall clock, and keep a repeat in one series for six minutes of
//! wall time, however much virtual time passed.

use std::collections::HashMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::{Client, ResourceExt};

use crate::reconciler::meta::Clock;

/// How long an event stays in the cache, so that a repeat joins its series (kube's
/// `CACHE_TTL`).
const CACHE_TTL: Duration = Duration::from_secs(6 * 60);

/// What makes two events one series: kube's `EventKey` (the note is not in it).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EventKey {
    event_type: EventType,
    action: String,
    reason: String,
    regarding: ReferenceKey,
    related: Option<ReferenceKey>,
}

/// The fields of an `ObjectReference` kube hashes and compares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct ReferenceKey {
    api_version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
}

impl ReferenceKey {
    fn of(r: &ObjectReference) -> Self {
        ReferenceKey {
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            name: r.name.clone(),
            namespace: r.namespace.clone(),
            uid: r.uid.clone(),
        }
    }
}

/// Publishes events as kube's `Recorder` does, dated by `clock`.
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    clock: Clock,
    cache: HashMap<EventKey, K8sEvent>,
    /// The cache's size after the last sweep of expired entries.
    swept: usize,
    /// The nanosecond in the name of the last new event.
    last_name_ns: i128,
}

/// The time after which `event` no longer starts a series (its last observation plus the
/// TTL).
fn expires(event: &K8sEvent) -> Option<Timestamp> {
    let last = match &event.series {
        Some(series) => series.last_observed_time.0,
        None => event.event_time.as_ref()?.0,
    };
    last.checked_add(CACHE_TTL).ok()
}

impl Recorder {
    /// A recorder writing through `client` as `reporter`.
    pub fn new(client: Client, reporter: Reporter, clock: Clock) -> Self {
        Recorder {
            client,
            reporter,
            clock,
            cache: HashMap::new(),
            swept: 0,
            last_name_ns: i128::MIN,
        }
    }

    fn key(ev: &Event, regarding: &ObjectReference) -> EventKey {
        EventKey {
            event_type: ev.type_,
            action: ev.action.clone(),
            reason: ev.reason.clone(),
            regarding: ReferenceKey::of(regarding),
            related: ev.secondary.as_ref().map(ReferenceKey::of),
        }
    }

    /// A new event, named as kube and client-go name it (`NAME.%x` of its time in
    /// nanoseconds), except that the nanosecond is one past the last new event's when the
    /// clock has not moved since: on a paused clock two events of one reconcile share an
    /// instant, and the second would be refused as a duplicate name.
    fn generate(&mut self, ev: &Event, reference: &ObjectReference, now: Timestamp) -> K8sEvent {
        let name_ns = now.as_nanosecond().max(self.last_name_ns.saturating_add(1));
        self.last_name_ns = name_ns;
        K8sEvent {
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(reference.clone()),
            note: ev.note.clone(),
            metadata: ObjectMeta {
                namespace: reference.namespace.clone(),
                name: Some(format!(
                    "{}.{:x}",
                    reference.name.as_ref().unwrap_or(&self.reporter.controller),
                    name_ns
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match ev.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .to_owned(),
            ),
            related: ev.secondary.clone(),
            ..K8sEvent::default()
        }
    }

    /// Publishes `ev` about `reference`: a new event (POST), or, when the same key was
    /// published within the TTL, the next of its series (PATCH).
    ///
    /// kube sweeps expired entries before every publish; an expired entry is treated as
    /// absent here and swept once the cache has doubled, which decides the same.
    ///
    /// # Errors
    /// The API server refused the event.
    pub async fn publish(
        &mut self,
        ev: &Event,
        reference: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = self.clock.precise_now();
        if self.cache.len() >= 2 * self.swept.max(64) {
            self.cache.retain(|_, e| expires(e).is_none_or(|t| t > now));
            self.swept = self.cache.len();
        }
        let key = Self::key(ev, reference);
        let cached = self
            .cache
            .get(&key)
            .filter(|e| expires(e).is_none_or(|t| t > now));
        let event = match cached {
            Some(e) => {
                let count = e.series.as_ref().map_or(2, |s| s.count + 1);
                let mut event = e.clone();
                event.series = Some(EventSeries {
                    count,
                    last_observed_time: MicroTime(now),
                });
                event
            }
            None => self.generate(ev, reference, now),
        };
        let namespace = reference.namespace.as_deref().unwrap_or("default");
        let events: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        if event.series.is_some() {
            events
                .patch(
                    &event.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&event),
                )
                .await?;
        } else {
            events.create(&PostParams::default(), &event).await?;
        }
        self.cache.insert(key, event);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ListParams;

    fn bucket_ref(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("mockcloud.example.org/v1alpha1".to_owned()),
            kind: Some("Bucket".to_owned()),
            name: Some(name.to_owned()),
            namespace: Some("default".to_owned()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    fn created() -> Event {
        Event {
            type_: EventType::Normal,
            reason: "CreatedExternalResource".to_owned(),
            note: Some("created".to_owned()),
            action: "Reconcile".to_owned(),
            secondary: None,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_repeat_within_six_minutes_of_the_clock_joins_its_series_and_a_later_one_starts_anew()
    {
        let apiserver = mock_apiserver::ApiServer::default();
        let client = kube::Client::new(apiserver.service(), "default");
        let epoch: Timestamp = "2026-11-24T10:00:00Z".parse().unwrap();
        let clock = Clock::at(epoch, tokio::time::Instant::now());
        let reporter = Reporter {
            controller: "test".to_owned(),
            instance: None,
        };
        let mut recorder = Recorder::new(client.clone(), reporter, clock);
        let events: Api<K8sEvent> = Api::namespaced(client, "default");
        recorder
            .publish(&created(), &bucket_ref("a"))
            .await
            .unwrap();
        tokio::time::advance(Duration::from_secs(300)).await;
        recorder
            .publish(&created(), &bucket_ref("a"))
            .await
            .unwrap();
        let list = events.list(&ListParams::default()).await.unwrap().items;
        assert_eq!(list.len(), 1);
        let first = &list[0];
        assert_eq!(first.metadata.name.as_deref(), Some("a.18eaf2d571194000"));
        let series = first.series.as_ref().expect("a series");
        assert_eq!(series.count, 2);
        assert_eq!(
            series.last_observed_time.0.to_string(),
            "2026-11-24T10:05:00Z"
        );
        // Six minutes after the last observation the key starts a new event.
        tokio::time::advance(CACHE_TTL).await;
        recorder
            .publish(&created(), &bucket_ref("a"))
            .await
            .unwrap();
        recorder
            .publish(&created(), &bucket_ref("b"))
            .await
            .unwrap();
        let list = events.list(&ListParams::default()).await.unwrap().items;
        assert_eq!(list.len(), 3);
        // New events at one instant (a, b, and now b again) get names a nanosecond apart.
        let updated = Event {
            reason: "UpdatedExternalResource".to_owned(),
            ..created()
        };
        recorder.publish(&updated, &bucket_ref("b")).await.unwrap();
        let mut names: Vec<String> = events
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|e| e.metadata.name)
            .filter(|n| n.starts_with("b."))
            .collect();
        names.sort();
        assert_eq!(names, ["b.18eaf36f1c2a0801", "b.18eaf36f1c2a0802"]);
    }
}
