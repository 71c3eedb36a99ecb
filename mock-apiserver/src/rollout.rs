//! A minimal Deployment controller: it writes the status a rollout ends with, so
//! `kubectl rollout status` and other rollout waits finish against the mock.
//!
//! # Semantics
//! For each Deployment whose `metadata.generation` is ahead of
//! `status.observedGeneration` (a create, a template or replica change):
//! 1. at once, `observedGeneration` catches up, `updatedReplicas` is 0 and `Progressing`
//!    is `True` with reason `ReplicaSetUpdated` (what `kubectl rollout status` reports as
//!    "0 out of N new replicas have been updated");
//! 2. after the configured delay, if no newer generation arrived, every replica is
//!    updated, ready and available, `Available` is `True` (`MinimumReplicasAvailable`)
//!    and `Progressing` is `True` (`NewReplicaSetAvailable`).
//!
//! No ReplicaSets or Pods are created; `spec.replicas` defaults to 1, as the real
//! defaulting does.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::registry::ResourceKind;
use crate::store::{Event, EventType, Store, Subresource, WriteOptions};

/// A short, stable stand-in for the pod-template hash of a generation.
fn replica_set_name(name: &str, generation: i64) -> String {
    format!(
        "{name}-{:x}",
        0x5f3759df_u64.wrapping_mul(generation as u64 + 1) & 0xff_ffff
    )
}

fn condition(type_: &str, reason: &str, message: String, now: &str) -> Value {
    json!({"type": type_, "status": "True", "lastUpdateTime": now,
           "lastTransitionTime": now, "reason": reason, "message": message})
}

/// The status of `deployment` at `generation`: rolling (`done == false`) or rolled out.
fn status(deployment: &Value, generation: i64, done: bool, now: &str) -> Value {
    let name = deployment["metadata"]["name"].as_str().unwrap_or_default();
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let replica_set = replica_set_name(name, generation);
    if done {
        json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
            "conditions": [
                condition("Available", "MinimumReplicasAvailable",
                          "Deployment has minimum availability.".into(), now),
                condition("Progressing", "NewReplicaSetAvailable",
                          format!("ReplicaSet \"{replica_set}\" has successfully progressed."), now),
            ]
        })
    } else {
        let previous = &deployment["status"];
        let available = previous["availableReplicas"].as_i64().unwrap_or(0);
        let mut status = json!({
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": 0,
            "unavailableReplicas": replicas,
            "conditions": [
                condition("Progressing", "ReplicaSetUpdated",
                          format!("ReplicaSet \"{replica_set}\" is progressing."), now),
            ]
        });
        if available > 0 {
            status["readyReplicas"] = json!(available);
            status["availableReplicas"] = json!(available);
            status["unavailableReplicas"] = json!((replicas - available).max(0));
        }
        status
    }
}

/// Writes `status` for `generation` unless the Deployment moved on (or is gone).
fn write(
    store: &Store,
    kind: &ResourceKind,
    namespace: &str,
    name: &str,
    generation: i64,
    done: bool,
) {
    let now = store.clock().rfc3339();
    let result = store.update(
        kind,
        namespace,
        name,
        Subresource::Status,
        WriteOptions::default(),
        |old| {
            let old = old.cloned().unwrap_or(Value::Null);
            if old["metadata"]["generation"].as_i64() != Some(generation) {
                return Ok(old);
            }
            let mut new = old.clone();
            new["status"] = status(&old, generation, done, &now);
            Ok(new)
        },
    );
    if let Err(error) = result {
        tracing::debug!(%error, namespace, name, "deployment status not written");
    }
}

/// Runs the controller until the store drops the resource: one status write per new
/// generation at once, the rolled-out one `delay` later.
pub async fn run(store: Arc<Store>, kind: Arc<ResourceKind>, delay: Duration) {
    let start = store.watch(&kind, None);
    let mut receiver = start.receiver;
    let mut pending = start.initial;
    loop {
        for event in pending.drain(..) {
            let Event::Change(EventType::Added | EventType::Modified, object, _) = event else {
                continue;
            };
            let value = object.to_value();
            let meta = &value["metadata"];
            let generation = meta["generation"].as_i64().unwrap_or(0);
            if meta.get("deletionTimestamp").is_some()
                || value["status"]["observedGeneration"].as_i64() >= Some(generation)
            {
                continue;
            }
            let (namespace, name) = (object.namespace.to_string(), object.name.to_string());
            write(&store, &kind, &namespace, &name, generation, false);
            let (store, kind) = (store.clone(), kind.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                write(&store, &kind, &namespace, &name, generation, true);
            });
        }
        match receiver.recv().await {
            Ok(event) => pending.push(event),
            // Missed events: look at every Deployment again.
            Err(RecvError::Lagged(_)) => pending = store.watch(&kind, None).initial,
            Err(RecvError::Closed) => return,
        }
    }
}
