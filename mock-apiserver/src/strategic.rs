//! Strategic merge patch for the built-in kinds, after
//! `k8s.io/apimachinery/pkg/util/strategicpatch/patch.go` (`mergeMap`, `mergeSlice`,
//! `normalizeElementOrder`), with the `patchStrategy`/`patchMergeKey` tags of the
//! `k8s.io/api` types the server serves.

use serde_json::{Map, Value};

/// How a field's value merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Replaced by the patch (no tag).
    Replace,
    /// A list merged by this key (`patchStrategy:"merge"`, `patchMergeKey`), or a list
    /// of scalars merged as a set (no key).
    Merge(Option<&'static str>),
    /// A map whose unlisted keys a `$retainKeys` list clears (`patchStrategy:"retainKeys"`).
    RetainKeys,
}

/// One tagged field of a Go type: its strategy and, for structs and lists of structs,
/// the fields of the element type.
struct Field {
    name: &'static str,
    strategy: Strategy,
    child: Option<fn() -> &'static [Field]>,
}

const fn field(
    name: &'static str,
    strategy: Strategy,
    child: Option<fn() -> &'static [Field]>,
) -> Field {
    Field {
        name,
        strategy,
        child,
    }
}

fn object_meta() -> &'static [Field] {
    const F: &[Field] = &[
        field("finalizers", Strategy::Merge(None), None),
        field("ownerReferences", Strategy::Merge(Some("uid")), None),
    ];
    F
}

fn container() -> &'static [Field] {
    const F: &[Field] = &[
        field("env", Strategy::Merge(Some("name")), None),
        field("ports", Strategy::Merge(Some("containerPort")), None),
        field("volumeMounts", Strategy::Merge(Some("mountPath")), None),
        field("volumeDevices", Strategy::Merge(Some("devicePath")), None),
    ];
    F
}

fn pod_spec() -> &'static [Field] {
    const F: &[Field] = &[
        field("containers", Strategy::Merge(Some("name")), Some(container)),
        field(
            "initContainers",
            Strategy::Merge(Some("name")),
            Some(container),
        ),
        field(
            "ephemeralContainers",
            Strategy::Merge(Some("name")),
            Some(container),
        ),
        field("volumes", Strategy::Merge(Some("name")), None),
        field("imagePullSecrets", Strategy::Merge(Some("name")), None),
        field("hostAliases", Strategy::Merge(Some("ip")), None),
    ];
    F
}

fn pod_template() -> &'static [Field] {
    const F: &[Field] = &[
        field("metadata", Strategy::Replace, Some(object_meta)),
        field("spec", Strategy::Replace, Some(pod_spec)),
    ];
    F
}

fn workload_spec() -> &'static [Field] {
    const F: &[Field] = &[
        field("template", Strategy::Replace, Some(pod_template)),
        field("strategy", Strategy::RetainKeys, None),
        field("updateStrategy", Strategy::RetainKeys, None),
    ];
    F
}

fn conditions_status() -> &'static [Field] {
    const F: &[Field] = &[field("conditions", Strategy::Merge(Some("type")), None)];
    F
}

fn service_spec() -> &'static [Field] {
    const F: &[Field] = &[field("ports", Strategy::Merge(Some("port")), None)];
    F
}

fn root(spec: Option<fn() -> &'static [Field]>) -> Vec<Field> {
    let mut fields = vec![
        field("metadata", Strategy::Replace, Some(object_meta)),
        field("status", Strategy::Replace, Some(conditions_status)),
    ];
    if let Some(spec) = spec {
        fields.push(field("spec", Strategy::Replace, Some(spec)));
    }
    fields
}

/// A patch the server cannot apply, with `patch.go`'s and `mergepatch/errors.go`'s words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategicError {
    /// `$retainKeys` is not a list of strings.
    #[error("invalid patch format of retainKeys")]
    RetainKeys,
    /// `$deleteFromPrimitiveList/...` is not a list.
    #[error("invalid patch format of primitive list")]
    PrimitiveList,
    /// A `$patch` value other than `replace` or `delete`.
    #[error("unknown patch type: {0} in map: {1}")]
    PatchType(String, String),
    /// An item of a merged list lacks the merge key.
    #[error("map: {0} does not contain declared merge key: {1}")]
    NoMergeKey(String, String),
    /// `$setElementOrder/...` (or the list it orders) is not a list.
    #[error("invalid patch format of setElementOrder list")]
    SetElementOrder,
    /// The patch list's items are not in the `$setElementOrder` list's order.
    #[error("The order in patch list:\n{0}\n doesn't match $setElementOrder list:\n{1}\n")]
    SetElementOrderMismatch(String, String),
}

/// Applies strategic merge patch `patch` to `original`, an object of kind `kind`.
///
/// # Semantics
/// Maps merge key by key and `null` deletes; a list tagged `patchStrategy:"merge"`
/// merges by its key (scalars as a set), new items first where they have no place in
/// the stored order (`mergeSortedSlice`); `$patch: replace|delete` on a map or a merged
/// item, `$retainKeys` and `$deleteFromPrimitiveList/<field>` act as upstream;
/// `$setElementOrder/<field>` orders the merged list (`mergePatchIntoOriginal`: the
/// listed items in its order, the others where the stored order puts them);
/// other lists, and fields the tables do not tag, are replaced.
pub fn apply(kind: &str, original: &mut Value, patch: &Value) -> Result<(), StrategicError> {
    let spec: Option<fn() -> &'static [Field]> = match kind {
        "Pod" => Some(pod_spec),
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" => Some(workload_spec),
        "Service" => Some(service_spec),
        _ => None,
    };
    let fields = root(spec);
    let (Value::Object(original_map), Value::Object(patch_map)) = (&mut *original, patch) else {
        *original = strip(patch);
        return Ok(());
    };
    // On error the original stays as it was.
    let merged = merge_map(original_map.clone(), patch_map, &fields)?;
    *original = Value::Object(merged);
    Ok(())
}

fn lookup<'f>(fields: &'f [Field], name: &str) -> Option<&'f Field> {
    fields.iter().find(|f| f.name == name)
}

fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    fields: &[Field],
) -> Result<Map<String, Value>, StrategicError> {
    if let Some(directive) = patch.get("$patch") {
        return match directive.as_str() {
            Some("replace") => Ok(strip_map(patch)),
            Some("delete") => Ok(Map::new()),
            _ => Err(StrategicError::PatchType(
                directive.to_string(),
                Value::Object(patch.clone()).to_string(),
            )),
        };
    }
    if let Some(retain) = patch.get("$retainKeys") {
        let keys: Vec<&str> = retain
            .as_array()
            .ok_or(StrategicError::RetainKeys)?
            .iter()
            .map(|k| k.as_str().ok_or(StrategicError::RetainKeys))
            .collect::<Result<_, _>>()?;
        original.retain(|k, _| keys.contains(&k.as_str()));
    }
    let ordered = set_element_order(&mut original, patch, fields)?;
    for (key, values) in patch {
        if let Some(target) = key.strip_prefix("$deleteFromPrimitiveList/") {
            let values = values.as_array().ok_or(StrategicError::PrimitiveList)?;
            if let Some(Value::Array(items)) = original.get_mut(target) {
                items.retain(|item| !values.contains(item));
            }
        }
    }
    for (key, value) in patch {
        if key.starts_with('$') || ordered.contains(&key.as_str()) {
            continue;
        }
        if value.is_null() {
            original.remove(key);
            continue;
        }
        let tagged = lookup(fields, key);
        let child: &[Field] = tagged.and_then(|f| f.child).map_or(&[], |c| c());
        let strategy = tagged.map_or(Strategy::Replace, |f| f.strategy);
        let merged = match (original.remove(key), value) {
            (Some(Value::Object(o)), Value::Object(p)) => Value::Object(merge_map(o, p, child)?),
            (Some(Value::Array(o)), Value::Array(p)) => match strategy {
                Strategy::Merge(merge_key) => Value::Array(merge_slice(o, p, merge_key, child)?),
                _ => strip(value),
            },
            _ => strip(value),
        };
        original.insert(key.clone(), merged);
    }
    Ok(original)
}

/// `mergePatchIntoOriginal`: each list a `$setElementOrder/<field>` names is merged with
/// the patch's list (if any) and put in the directive's order; returns the fields done.
fn set_element_order<'p>(
    original: &mut Map<String, Value>,
    patch: &'p Map<String, Value>,
    fields: &[Field],
) -> Result<Vec<&'p str>, StrategicError> {
    let mut done = Vec::new();
    for (key, order_list) in patch {
        let Some(target) = key.strip_prefix("$setElementOrder/") else {
            continue;
        };
        let order_list = order_list
            .as_array()
            .ok_or(StrategicError::SetElementOrder)?;
        let tagged = lookup(fields, target);
        let child: &[Field] = tagged.and_then(|f| f.child).map_or(&[], |c| c());
        let strategy = tagged.map_or(Strategy::Replace, |f| f.strategy);
        let merge_key = match strategy {
            Strategy::Merge(key) => key,
            _ => None,
        };
        let stored = match original.get(target) {
            None => None,
            Some(Value::Array(items)) => Some(items.clone()),
            Some(_) => return Err(StrategicError::SetElementOrder),
        };
        let patched = match patch.get(target) {
            None => None,
            Some(Value::Array(items)) => Some(items),
            Some(_) => return Err(StrategicError::SetElementOrder),
        };
        let same = |a: &Value, b: &Value| match merge_key {
            Some(k) => a.get(k).is_some() && a.get(k) == b.get(k),
            None => a == b,
        };
        if let Some(items) = patched {
            // validatePatchWithSetOrderList: the patch's items appear in the
            // directive's order.
            let mut at = 0;
            for item in items.iter().filter(|i| i.get("$patch").is_none()) {
                match order_list[at.min(order_list.len())..]
                    .iter()
                    .position(|o| same(item, o))
                {
                    Some(found) => at += found + 1,
                    None if order_list.is_empty() => break,
                    None => {
                        return Err(StrategicError::SetElementOrderMismatch(
                            Value::Array(items.clone()).to_string(),
                            Value::Array(order_list.clone()).to_string(),
                        ));
                    }
                }
            }
        }
        let merged = match (&stored, patched) {
            (Some(stored), None) => stored.clone(),
            (None, Some(items)) => match strip(&Value::Array(items.clone())) {
                Value::Array(items) => items,
                _ => Vec::new(),
            },
            (Some(stored), Some(items)) => match strategy {
                Strategy::Merge(key) => merge_slice(stored.clone(), items, key, child)?,
                _ => match strip(&Value::Array(items.clone())) {
                    Value::Array(items) => items,
                    _ => Vec::new(),
                },
            },
            (None, None) => continue,
        };
        let ordered = order(merged, order_list, stored.as_deref().unwrap_or(&[]), same);
        original.insert(target.to_owned(), Value::Array(ordered));
        done.push(target);
    }
    Ok(done)
}

fn strip(value: &Value) -> Value {
    let mut value = value.clone();
    crate::patch::strip_strategic_directives(&mut value);
    value
}

fn strip_map(map: &Map<String, Value>) -> Map<String, Value> {
    match strip(&Value::Object(map.clone())) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn merge_slice(
    original: Vec<Value>,
    patch: &[Value],
    merge_key: Option<&str>,
    child: &[Field],
) -> Result<Vec<Value>, StrategicError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let maps = patch.iter().chain(&original).all(Value::is_object);
    let key = merge_key.filter(|_| maps);
    let Some(key) = key else {
        // Scalars merge as a set: deduplicateScalars(append(original, patch...)).
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for item in original.iter().chain(patch) {
            if !merged.contains(item) {
                merged.push(item.clone());
            }
        }
        let patch: Vec<Value> = patch.to_vec();
        return Ok(order(merged, &patch, &original, |a, b| a == b));
    };
    // mergeSliceWithSpecialElements.
    let mut base = original;
    let mut plain: Vec<&Value> = Vec::new();
    let mut replace = false;
    for item in patch {
        match item.get("$patch") {
            None => plain.push(item),
            Some(directive) => match directive.as_str() {
                Some("delete") => {
                    let value = item.get(key).ok_or_else(|| {
                        StrategicError::NoMergeKey(item.to_string(), key.to_owned())
                    })?;
                    base.retain(|o| o.get(key) != Some(value));
                }
                Some("replace") => replace = true,
                _ => {
                    return Err(StrategicError::PatchType(
                        directive.to_string(),
                        item.to_string(),
                    ));
                }
            },
        }
    }
    let (original, plain): (Vec<Value>, Vec<&Value>) = if replace {
        (plain.iter().map(|v| strip(v)).collect(), Vec::new())
    } else {
        (base, plain)
    };
    // mergeSliceWithoutSpecialElements.
    let mut merged = original.clone();
    for item in &plain {
        let value = item
            .get(key)
            .ok_or_else(|| StrategicError::NoMergeKey(item.to_string(), key.to_owned()))?;
        match merged.iter().position(|o| o.get(key) == Some(value)) {
            Some(at) => {
                let Value::Object(existing) = std::mem::take(&mut merged[at]) else {
                    unreachable!("checked to be maps above");
                };
                let Value::Object(patch_item) = item else {
                    unreachable!("checked to be maps above");
                };
                merged[at] = Value::Object(merge_map(existing, patch_item, child)?);
            }
            None => merged.push(strip(item)),
        }
    }
    let patch: Vec<Value> = plain.into_iter().cloned().collect();
    Ok(order(merged, &patch, &original, |a, b| {
        a.get(key).is_some() && a.get(key) == b.get(key)
    }))
}

/// `normalizeElementOrder`: items named in the patch in patch order, the others in stored
/// order, merged by `mergeSortedSlice` (a stored item goes first only when both it and
/// the patch item have places in the stored order and it comes earlier).
fn order(
    merged: Vec<Value>,
    patch: &[Value],
    stored: &[Value],
    same: impl Fn(&Value, &Value) -> bool,
) -> Vec<Value> {
    let index = |list: &[Value], item: &Value| list.iter().position(|x| same(x, item));
    let (mut in_patch, mut server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| index(patch, item).is_some());
    in_patch.sort_by_key(|item| index(patch, item));
    server_only.sort_by_key(|item| index(stored, item));
    let mut out = Vec::with_capacity(in_patch.len() + server_only.len());
    let (mut left, mut right) = (
        server_only.into_iter().peekable(),
        in_patch.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
            (Some(l), Some(r)) => match (index(stored, l), index(stored, r)) {
                (Some(li), Some(ri)) => li < ri,
                _ => false,
            },
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests;
