//! Field ownership and server-side apply, after structured-merge-diff and the
//! apiserver's `k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager` (whose logic lives
//! in `k8s.io/apimachinery/pkg/util/managedfields/internal`).
//!
//! # Semantics
//! - [`apply`] merges an apply configuration into the live object ([`merge`]), records
//!   the configuration's field set as the applier's `Apply` entry, removes what the
//!   applier applied before and no manager owns any more, and refuses (unless forced) to
//!   change a field another manager owns: `merge/update.go`'s `Updater.Apply`.
//! - [`update`] records any other write as an `Update` entry of its manager holding
//!   every field it added or changed, taking those fields from the other managers:
//!   `Updater.Update` with `managedFieldsUpdater`.
//! - `status` is never owned through the main resource of a kind with a status
//!   subresource, nor `spec` through `/status` (the strategies' `GetResetFields`).
//! - Entries are keyed by manager, operation and subresource (and apiVersion for
//!   updaters); an entry's time changes only when its write changed the object, so a
//!   no-op apply leaves `managedFields` as they were.

mod create;
mod last_applied;
mod managed;
mod merge;
mod path;
mod set;
mod shape;
mod walk;

use serde_json::{Value, json};

use crate::error::{ApiError, Cause};
pub use managed::Operation;
use managed::{Entry, decode, decode_list, encode, strip};
pub use merge::merge;
use path::{Path, PathElement};
use set::FieldSet;
pub use shape::Shape;
use walk::{ShapeError, compare, to_field_set};

/// Who writes, through which endpoint, and how the kind's objects merge.
#[derive(Debug, Clone, Copy)]
pub struct Writer<'a> {
    /// The field manager.
    pub manager: &'a str,
    /// The request's `group/version`.
    pub api_version: &'a str,
    /// The kind of the object.
    pub kind: &'a str,
    /// Whether the write goes to `/status`.
    pub status: bool,
    /// Whether the kind has a status subresource.
    pub status_subresource: bool,
    /// The kind's merge rules.
    pub shape: Shape<'a>,
    /// The write's time, RFC 3339.
    pub now: &'a str,
}

/// A write the field manager refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SsaError {
    /// An apply would change fields other managers own: (manager as `printManager`
    /// writes it, field path) pairs.
    #[error("apply conflicts with {} field(s) of other managers", .0.len())]
    Conflicts(Vec<(String, String)>),
    /// An apply configuration carries `metadata.managedFields`.
    #[error("metadata.managedFields must be nil")]
    ManagedFieldsInApply,
    /// An object does not fit its schema's merge rules: which one (`patch`, `live`,
    /// `new`), its `GroupVersionKind` as Go prints it, and why.
    #[error("failed to create typed {which} object ({gvk})")]
    Shape {
        /// `patch`, `live` or `new`.
        which: &'static str,
        /// `group/version, Kind=kind`.
        gvk: String,
        /// What does not fit.
        #[source]
        cause: ShapeError,
    },
}

impl Writer<'_> {
    /// The error of an object (`which`) that does not fit the merge rules.
    fn typed(&self, which: &'static str) -> impl Fn(ShapeError) -> SsaError + '_ {
        move |cause| {
            let group_version = if self.api_version.contains('/') {
                self.api_version.to_owned()
            } else {
                format!("/{}", self.api_version)
            };
            SsaError::Shape {
                which,
                gvk: format!("{group_version}, Kind={}", self.kind),
                cause,
            }
        }
    }

    fn subresource(&self) -> &'static str {
        if self.status { "status" } else { "" }
    }

    /// The top-level field this endpoint never owns.
    fn reset_field(&self) -> Option<PathElement> {
        match (self.status, self.status_subresource) {
            (true, _) => Some(PathElement::Field("spec".into())),
            (false, true) => Some(PathElement::Field("status".into())),
            (false, false) => None,
        }
    }

    fn filter(&self, set: &mut FieldSet) {
        if let Some(field) = self.reset_field() {
            set.remove_subtree(&field);
        }
    }

    fn entry(&self, operation: Operation, fields: FieldSet, time: Option<String>) -> Entry {
        Entry {
            manager: self.manager.to_owned(),
            operation,
            api_version: self.api_version.to_owned(),
            subresource: self.subresource().to_owned(),
            time,
            fields,
        }
    }
}

/// Applies `config` to `live` (`None`: the object does not exist yet) for `writer`;
/// returns the new object with its `managedFields`.
pub fn apply(
    writer: &Writer<'_>,
    live: Option<&Value>,
    config: &Value,
    force: bool,
) -> Result<Value, SsaError> {
    if config["metadata"]
        .get("managedFields")
        .is_some_and(|v| !v.is_null())
    {
        return Err(SsaError::ManagedFieldsInApply);
    }
    let empty = json!({});
    let stored = live;
    // The live object keeps its managedFields through the merge (a configuration has
    // none) and the comparison (which never looks at them); they are rewritten at the end.
    let live = live.unwrap_or(&empty);
    let mut config = config.clone();
    if let (Some(PathElement::Field(field)), Some(object)) =
        (writer.reset_field(), config.as_object_mut())
    {
        object.remove(&field);
    }
    let mut fields = to_field_set(&config, writer.shape).map_err(writer.typed("patch"))?;
    writer.filter(&mut fields);
    if stored.is_some()
        && writer.manager != last_applied::KUBECTL
        && merge::leaves_unchanged(live, &config, writer.shape)
    {
        // Nothing changes: when the applier's entry already holds exactly this set,
        // there is nothing to prune, no conflict and no entry to touch.
        let mut stripped = fields.clone();
        strip(&mut stripped);
        if applier_holds(live, writer, &stripped.to_fields_v1()) {
            return Ok(live.clone());
        }
    }
    let mut merged = merge(live, &config, writer.shape).map_err(writer.typed("patch"))?;
    let mut entries = stored.and_then(decode).unwrap_or_default();
    let me = writer.entry(Operation::Apply, FieldSet::default(), None);
    let last = entries
        .iter()
        .position(|e| e.same_manager(&me))
        .map(|i| entries.remove(i));
    if let Some(last) = &last {
        let owned = entries
            .iter()
            .fold(fields.clone(), |all, e| all.union(&e.fields));
        merge::prune(&mut merged, &last.fields, &owned, writer.shape);
    }
    let mut comparison = compare(live, &merged, writer.shape).map_err(writer.typed("live"))?;
    writer.filter(&mut comparison.added);
    writer.filter(&mut comparison.modified);
    let changed = comparison.added.union(&comparison.modified);
    if !force {
        let mut taken = FieldSet::default();
        for entry in &entries {
            taken = taken.union(&entry.fields.intersection(&changed));
        }
        if !taken.is_empty() {
            let allowed = (writer.manager == last_applied::KUBECTL)
                .then(|| last_applied::allowed_conflicts(live, writer.shape, writer.api_version))
                .flatten()
                .unwrap_or_default();
            let refused = taken.difference(&allowed);
            if !refused.is_empty() {
                return Err(SsaError::Conflicts(conflicts(&entries, &refused)));
            }
        }
    }
    for entry in &mut entries {
        entry.fields = entry
            .fields
            .difference(&changed)
            .difference(&comparison.removed);
    }
    strip(&mut fields);
    let time = if merged == *live {
        last.and_then(|l| l.time)
    } else {
        Some(writer.now.to_owned())
    };
    entries.push(writer.entry(Operation::Apply, fields, time));
    encode(&mut merged, entries);
    if writer.manager == last_applied::KUBECTL {
        last_applied::update_annotation(&mut merged, &config);
    }
    Ok(merged)
}

/// The fields of `changed` that other managers own, sorted by manager.
fn conflicts(entries: &[Entry], changed: &FieldSet) -> Vec<(String, String)> {
    let mut owners: Vec<&Entry> = entries.iter().collect();
    owners.sort_by(|a, b| {
        (&a.manager, a.operation, &a.api_version, &a.subresource).cmp(&(
            &b.manager,
            b.operation,
            &b.api_version,
            &b.subresource,
        ))
    });
    let mut out = Vec::new();
    for entry in owners {
        let theirs = entry.fields.intersection(changed);
        theirs.for_each_path(&mut |p| out.push((entry.describe(), Path(p).to_string())));
    }
    out
}

/// Records a write other than an apply: `new` (the object as it will be stored) gets
/// `managedFields` in which `writer` owns what it added or changed since `live`
/// (`None` for a create).
///
/// # Semantics
/// The entries start from `new`'s own `managedFields` when it carries a decodable,
/// non-empty list (a client sending back what it read), else from `live`'s.
pub fn update(writer: &Writer<'_>, live: Option<&Value>, new: &mut Value) -> Result<(), SsaError> {
    if live.is_none() && new["metadata"].get("managedFields").is_none() {
        return record_create(writer, new);
    }
    let sent = crate::object::metadata_mut(new).remove("managedFields");
    let from_client = sent.as_ref().and_then(decode_list);
    let zero;
    let live_value = match live {
        Some(live) => live,
        None => {
            zero = zero_value(writer.shape, new);
            &zero
        }
    };
    let mut comparison = compare(live_value, new, writer.shape).map_err(writer.typed("new"))?;
    writer.filter(&mut comparison.added);
    writer.filter(&mut comparison.modified);
    writer.filter(&mut comparison.removed);
    if comparison.added.is_empty()
        && comparison.modified.is_empty()
        && comparison.removed.is_empty()
    {
        // Nothing changed: the entries stay as they came.
        let kept = match from_client {
            Some(_) => sent,
            None => live.and_then(|l| l["metadata"].get("managedFields").cloned()),
        };
        if let Some(kept) = kept {
            crate::object::metadata_mut(new).insert("managedFields".into(), kept);
        }
        return Ok(());
    }
    let mut entries = from_client
        .or_else(|| live.and_then(decode))
        .unwrap_or_default();
    let mut changed = comparison.added.union(&comparison.modified);
    for entry in &mut entries {
        entry.fields = entry
            .fields
            .difference(&changed)
            .difference(&comparison.removed);
    }
    strip(&mut changed);
    if !changed.is_empty() {
        let me = writer.entry(Operation::Update, changed, Some(writer.now.to_owned()));
        match entries.iter_mut().find(|e| e.same_manager(&me)) {
            Some(previous) => {
                previous.fields = previous.fields.union(&me.fields);
                previous.time = me.time;
            }
            None => entries.push(me),
        }
    }
    encode(new, entries);
    Ok(())
}

/// Whether `live`'s managedFields hold an Apply entry of `writer` with exactly `fields`.
fn applier_holds(live: &Value, writer: &Writer<'_>, fields: &Value) -> bool {
    live["metadata"]["managedFields"]
        .as_array()
        .is_some_and(|entries| {
            entries.iter().any(|e| {
                e["manager"] == writer.manager
                    && e["operation"] == "Apply"
                    && e["subresource"].as_str().unwrap_or_default() == writer.subresource()
                    && e["fieldsV1"] == *fields
            })
        })
}

/// A create without managed fields of its own: one `Update` entry holding what it set.
fn record_create(writer: &Writer<'_>, new: &mut Value) -> Result<(), SsaError> {
    let reset = match writer.reset_field() {
        Some(PathElement::Field(field)) => Some(field),
        _ => None,
    };
    let Some(fields) =
        create::created_fields(new, writer.shape, reset.as_deref()).map_err(writer.typed("new"))?
    else {
        return Ok(());
    };
    // Built by hand rather than with `json!`, which would serialize `fields` again
    // (`to_value`): this runs on every create.
    let mut entry = serde_json::Map::new();
    entry.insert("manager".into(), Value::String(writer.manager.to_owned()));
    entry.insert("operation".into(), Value::String("Update".into()));
    entry.insert(
        "apiVersion".into(),
        Value::String(writer.api_version.to_owned()),
    );
    entry.insert("time".into(), Value::String(writer.now.to_owned()));
    entry.insert("fieldsType".into(), Value::String("FieldsV1".into()));
    entry.insert("fieldsV1".into(), fields);
    if writer.status {
        entry.insert("subresource".into(), Value::String("status".into()));
    }
    crate::object::metadata_mut(new).insert(
        "managedFields".into(),
        Value::Array(vec![Value::Object(entry)]),
    );
    Ok(())
}

/// What a create is compared with: the empty object of the kind. A built-in kind is a Go
/// struct whose zero value already has `spec` and `status` (as `{}`), so a create does
/// not add them as such; a custom resource starts from nothing.
fn zero_value(shape: Shape<'_>, new: &Value) -> Value {
    let mut zero = json!({});
    if matches!(shape, Shape::Schema(_, true)) {
        for field in ["spec", "status"] {
            if new.get(field).is_some_and(Value::is_object) {
                zero[field] = json!({});
            }
        }
    }
    zero
}

/// The manager of a write without `fieldManager`: the user agent's program name, as
/// `prefixFromUserAgent` of `fieldmanager.go` takes it (up to the first `/`, at most 128
/// bytes).
pub fn manager_from_user_agent(user_agent: &str) -> &str {
    let name = user_agent.split('/').next().unwrap_or_default();
    let mut end = name.len().min(128);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The answer to a refused write, as the apiserver gives it.
pub fn api_error(error: SsaError) -> ApiError {
    match error {
        SsaError::Conflicts(conflicts) => {
            // `getConflictMessage` of `managedfields/internal/conflict.go`.
            let message = if let [(manager, path)] = conflicts.as_slice() {
                format!("Apply failed with 1 conflict: conflict with {manager}: {path}")
            } else {
                let mut lines = Vec::new();
                let mut current: Option<&str> = None;
                for (manager, path) in &conflicts {
                    if current != Some(manager) {
                        lines.push(format!("conflicts with {manager}:"));
                        current = Some(manager);
                    }
                    lines.push(format!("- {path}"));
                }
                format!(
                    "Apply failed with {} conflicts: {}",
                    conflicts.len(),
                    lines.join("\n")
                )
            };
            let causes = conflicts
                .into_iter()
                .map(|(manager, path)| Cause {
                    reason: "FieldManagerConflict",
                    field: path,
                    message: format!("conflict with {manager}"),
                })
                .collect();
            ApiError::ApplyConflict { message, causes }
        }
        SsaError::ManagedFieldsInApply => ApiError::bad_request(error.to_string()),
        // Not a Status in the field manager: the handler's ErrorToAPIStatus makes it a
        // 500 with the error's text.
        SsaError::Shape { ref cause, .. } => ApiError::internal(format!("{error}: {cause}")),
    }
}

#[cfg(test)]
mod tests;
