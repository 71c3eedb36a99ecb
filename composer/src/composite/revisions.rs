//! Core's two CompositionRevision controllers: one makes a revision per change of a
//! Composition, the other marks each revision's pipeline valid.
//!
//! Follows crossplane/crossplane's `apiextensions/composition/reconciler.go` and
//! `revision.go` (v2.3): a Composition's hash (its labels, annotations and spec) names the
//! revision that holds that content (`<composition>-<first 7 of the hash>`, labelled
//! `crossplane.io/composition-hash` with the first 63); when no revision of the Composition
//! has its current hash, one is created with `spec.revision` one more than the latest; when
//! an older one has it (the Composition was changed back), that one is renumbered to the
//! latest plus one; revisions that lost their controller reference get it back. And
//! `apiextensions/revision/reconciler.go`: every revision gets `Synced=True` and
//! `ValidPipeline=True` (core's capability check passes when no Function package revision
//! says otherwise, and with no package manager there is none), its status written only
//! when it changed.
//!
//! The hash is a SHA-256 as core's, of the labels, annotations and spec serialized as JSON
//! here instead of Go's YAML of its own types: the same content always gives the same hash
//! and any change a new one, but the digits differ from core's.

use std::collections::BTreeMap;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use kube::runtime::watcher::{self, Event};
use kube::{Resource, ResourceExt};
use provider::reconciler::meta::Clock;
use ring::digest::{SHA256, digest};
use serde_json::Value;

use crate::api::{
    Composition, CompositionRevision, CompositionRevisionSpec, CompositionRevisionStatus,
    Condition, LABEL_COMPOSITION_NAME, TYPE_VALID_PIPELINE,
};

/// The label holding the first 63 characters of the Composition's hash
/// (`LabelCompositionHash`).
pub const LABEL_COMPOSITION_HASH: &str = "crossplane.io/composition-hash";

/// What reconciling a Composition did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RevisionChange {
    /// A revision already has the Composition's content and the latest number.
    None,
    /// A new revision, with its name and number.
    Created(String, i64),
    /// An older revision with the Composition's content renumbered to the latest.
    Renumbered(String, i64),
    /// The Composition is gone or being deleted.
    Gone,
}

/// The Composition's hash, as hexadecimal.
#[must_use]
pub fn composition_hash(c: &Composition) -> String {
    let mut bytes = Vec::new();
    for part in [
        serde_json::to_value(c.metadata.labels.clone().unwrap_or_default()),
        serde_json::to_value(c.metadata.annotations.clone().unwrap_or_default()),
        serde_json::to_value(&c.spec),
    ] {
        bytes.extend(serde_json::to_vec(&part.unwrap_or(Value::Null)).expect("JSON encodes"));
    }
    digest(&SHA256, &bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn controller_ref(c: &Composition) -> OwnerReference {
    OwnerReference {
        api_version: Composition::api_version(&()).into_owned(),
        kind: Composition::kind(&()).into_owned(),
        name: c.name_any(),
        uid: c.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn controlled_by(r: &CompositionRevision, c: &Composition) -> bool {
    let uid = c.metadata.uid.as_deref().unwrap_or_default();
    r.owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && o.uid == uid)
}

/// `NewCompositionRevision`: revision `number` of `c`, holding its spec, labels and
/// annotations.
#[must_use]
pub fn new_revision(c: &Composition, number: i64) -> CompositionRevision {
    let hash = composition_hash(c);
    let mut labels: BTreeMap<String, String> = BTreeMap::from([
        (LABEL_COMPOSITION_NAME.to_owned(), c.name_any()),
        (LABEL_COMPOSITION_HASH.to_owned(), hash[..63].to_owned()),
    ]);
    labels.extend(c.labels().clone());
    let mut revision = CompositionRevision::new(
        &format!("{}-{}", c.name_any(), &hash[..7]),
        CompositionRevisionSpec {
            composition: c.spec.clone(),
            revision: number,
        },
    );
    revision.metadata = ObjectMeta {
        name: revision.metadata.name.take(),
        labels: Some(labels),
        annotations: c.metadata.annotations.clone().filter(|a| !a.is_empty()),
        owner_references: Some(vec![controller_ref(c)]),
        ..ObjectMeta::default()
    };
    revision
}

/// Reconciles the Composition `name` as core's composition controller does.
///
/// # Errors
/// A failed request (a conflict while renumbering is one too: the caller retries).
pub async fn reconcile_composition(
    client: &kube::Client,
    name: &str,
) -> Result<RevisionChange, kube::Error> {
    let compositions: Api<Composition> = Api::all(client.clone());
    let revisions: Api<CompositionRevision> = Api::all(client.clone());
    let Some(c) = compositions.get_opt(name).await? else {
        return Ok(RevisionChange::Gone);
    };
    if c.metadata.deletion_timestamp.is_some() {
        return Ok(RevisionChange::Gone);
    }
    let hash = composition_hash(&c);
    let listed = revisions
        .list(&ListParams::default().labels(&format!("{LABEL_COMPOSITION_NAME}={name}")))
        .await?
        .items;
    let latest = listed
        .iter()
        .filter(|r| controlled_by(r, &c))
        .map(|r| r.spec.revision)
        .max()
        .unwrap_or(0);
    let mut existing = 0;
    let mut change = RevisionChange::None;
    for mut r in listed {
        if !controlled_by(&r, &c) {
            r.metadata.owner_references = Some(vec![controller_ref(&c)]);
            r = revisions
                .replace(&r.name_any(), &PostParams::default(), &r)
                .await?;
        }
        if r.labels().get(LABEL_COMPOSITION_HASH).map(String::as_str) != Some(&hash[..63]) {
            continue;
        }
        existing = r.spec.revision;
        if r.spec.revision == latest {
            continue;
        }
        r.spec.revision = latest + 1;
        existing = latest + 1;
        revisions
            .replace(&r.name_any(), &PostParams::default(), &r)
            .await?;
        change = RevisionChange::Renumbered(r.name_any(), latest + 1);
    }
    if existing > 0 {
        return Ok(change);
    }
    let created = revisions
        .create(&PostParams::default(), &new_revision(&c, latest + 1))
        .await?;
    Ok(RevisionChange::Created(created.name_any(), latest + 1))
}

/// Reconciles the CompositionRevision `name` as core's revision controller does: marks it
/// `Synced=True` and `ValidPipeline=True` (a changed condition dated by `clock`), writing
/// its status only when that changed. Returns whether it wrote.
///
/// # Errors
/// A failed request.
pub async fn validate_revision(
    client: &kube::Client,
    name: &str,
    clock: &Clock,
) -> Result<bool, kube::Error> {
    let revisions: Api<CompositionRevision> = Api::all(client.clone());
    let Some(mut r) = revisions.get_opt(name).await? else {
        return Ok(false);
    };
    if r.metadata.deletion_timestamp.is_some() {
        return Ok(false);
    }
    let generation = r.metadata.generation.filter(|g| *g != 0);
    let before = r.status.clone();
    let status = r
        .status
        .get_or_insert_with(CompositionRevisionStatus::default);
    for (type_, reason) in [
        ("Synced", "ReconcileSuccess"),
        (TYPE_VALID_PIPELINE, "ValidPipeline"),
    ] {
        let wanted = Condition {
            type_: type_.to_owned(),
            status: "True".to_owned(),
            reason: reason.to_owned(),
            message: None,
            last_transition_time: clock.stamp(),
            observed_generation: generation,
        };
        let same = |c: &Condition| {
            c.status == wanted.status
                && c.reason == wanted.reason
                && c.message.as_deref().unwrap_or_default() == ""
                && (c.observed_generation.is_none()
                    || generation.is_none()
                    || c.observed_generation == generation)
        };
        match status.conditions.iter_mut().find(|c| c.type_ == type_) {
            Some(c) if same(c) => {}
            Some(c) => *c = wanted,
            None => status.conditions.push(wanted),
        }
    }
    if r.status == before {
        return Ok(false);
    }
    revisions
        .replace_status(name, &PostParams::default(), &r)
        .await?;
    Ok(true)
}

/// Runs both controllers until the watches end: every Composition event reconciles that
/// Composition, every revision event validates that revision (one at a time; a failure is
/// logged and waits for the object's next event, where core's queue would back off).
pub async fn run_revision_controllers(client: kube::Client) {
    let compositions = {
        let client = client.clone();
        async move {
            let mut events = watcher::watcher(
                Api::<Composition>::all(client.clone()),
                watcher::Config::default(),
            )
            .boxed();
            while let Some(event) = events.next().await {
                let Ok(Event::Apply(c) | Event::InitApply(c)) = event else {
                    continue;
                };
                if let Err(error) = reconcile_composition(&client, &c.name_any()).await {
                    tracing::warn!(%error, composition = %c.name_any(), "cannot reconcile revisions");
                }
            }
        }
    };
    let revisions = async move {
        // The revisions' conditions are dated on tokio's clock from the system time now.
        let clock = Clock::new();
        let mut events = watcher::watcher(
            Api::<CompositionRevision>::all(client.clone()),
            watcher::Config::default(),
        )
        .boxed();
        while let Some(event) = events.next().await {
            let Ok(Event::Apply(r) | Event::InitApply(r)) = event else {
                continue;
            };
            if let Err(error) = validate_revision(&client, &r.name_any(), &clock).await {
                tracing::warn!(%error, revision = %r.name_any(), "cannot validate revision");
            }
        }
    };
    futures::join!(compositions, revisions);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn composition(count: u32) -> Composition {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.crossplane.io/v1", "kind": "Composition",
            "metadata": {"name": "widgets", "uid": "u1", "labels": {"team": "a"}},
            "spec": {"compositeTypeRef": {"apiVersion": "example.org/v1", "kind": "XWidget"},
                "pipeline": [{"step": "s", "functionRef": {"name": "f"},
                    "input": {"count": count}}]},
        }))
        .unwrap()
    }

    #[test]
    fn a_revision_is_named_and_labelled_by_the_hash_and_holds_the_spec() {
        let c = composition(1);
        let hash = composition_hash(&c);
        assert_eq!(hash.len(), 64);
        assert_eq!(composition_hash(&composition(1)), hash);
        assert_ne!(composition_hash(&composition(2)), hash);
        let r = new_revision(&c, 4);
        assert_eq!(r.name_any(), format!("widgets-{}", &hash[..7]));
        assert_eq!(r.labels()[LABEL_COMPOSITION_HASH], hash[..63]);
        assert_eq!(r.labels()[LABEL_COMPOSITION_NAME], "widgets");
        assert_eq!(r.labels()["team"], "a");
        assert_eq!(r.spec.revision, 4);
        assert_eq!(r.spec.composition, c.spec);
        assert!(controlled_by(&r, &c));
    }
}
