//! Merging an apply configuration into a live object (`typed/merge.go` of
//! structured-merge-diff), and removing what an applier stopped applying
//! (`merge/update.go`'s `prune`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::path::PathElement;
use super::set::FieldSet;
use super::shape::{ListKind, Shape};
use super::walk::{ShapeError, index_items};

fn granular(value: &Value, shape: &Shape<'_>) -> bool {
    match value {
        Value::Object(_) => !shape.atomic_map(),
        Value::Array(_) => shape.list() != ListKind::Atomic,
        _ => false,
    }
}

/// Merges `config` into `live`.
///
/// # Semantics
/// Granular maps merge entry by entry; granular lists merge item by item (items matched
/// by key or value), keeping the live order and putting the configuration's items in
/// its own order around the items both share, as `mergingWalker.visitListItems` does;
/// anything else (scalars, atomic lists and maps, a type change) is the configuration's
/// value.
pub fn merge(live: &Value, config: &Value, shape: Shape<'_>) -> Result<Value, ShapeError> {
    let mut path = Vec::new();
    merge_at(Some(live), config, shape, &mut path)
}

/// Whether merging `config` into `live` leaves `live` as it is: `merge(live, config, shape)`
/// would succeed and return a value equal to `live`. Decided without building the merge, so
/// that a repeated apply (most of a controller's applies) costs a walk, not a copy.
///
/// # Semantics
/// `false` whenever in doubt, which only sends the caller to [`merge`]: every key of a
/// granular map is in `live` and unchanged below; a granular list's items are all in
/// `live`'s list, in `live`'s order, each unchanged, and `live`'s list names each item once
/// (a merge drops a live duplicate); anything else is unchanged when it is equal.
pub fn leaves_unchanged(live: &Value, config: &Value, shape: Shape<'_>) -> bool {
    let mut path = Vec::new();
    unchanged_at(live, config, shape, &mut path)
}

fn unchanged_at(
    live: &Value,
    config: &Value,
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
) -> bool {
    let same = std::mem::discriminant(live) == std::mem::discriminant(config);
    if !(same && granular(live, &shape) && granular(config, &shape)) {
        return live == config;
    }
    match (live, config) {
        (Value::Object(l), Value::Object(c)) => c.iter().all(|(key, value)| {
            l.get(key).is_some_and(|live| {
                let (child_shape, _) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                let unchanged = unchanged_at(live, value, child_shape, path);
                path.pop();
                unchanged
            })
        }),
        (Value::Array(l), Value::Array(c)) => list_unchanged(l, c, shape, path),
        _ => live == config,
    }
}

fn list_unchanged(
    live: &[Value],
    config: &[Value],
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
) -> bool {
    let list = shape.list();
    let item_shape = shape.item();
    let (Ok(lhs), Ok(rhs)) = (
        index_items(list, &shape, live, path, true),
        index_items(list, &shape, config, path, false),
    ) else {
        return false;
    };
    if lhs.len() != live.len() {
        return false;
    }
    // Each configured item is found after the previous one: the merge then keeps live's
    // order and merges each in place.
    let mut from = 0;
    for (element, value) in &rhs {
        let Some(offset) = lhs[from..].iter().position(|(e, _)| e == element) else {
            return false;
        };
        let (element, live_item) = &lhs[from + offset];
        path.push(element.clone());
        let unchanged = unchanged_at(live_item, value, item_shape, path);
        path.pop();
        if !unchanged {
            return false;
        }
        from += offset + 1;
    }
    true
}

fn merge_at(
    live: Option<&Value>,
    config: &Value,
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
) -> Result<Value, ShapeError> {
    let Some(live) = live else {
        return Ok(config.clone());
    };
    let same = std::mem::discriminant(live) == std::mem::discriminant(config);
    if !(same && granular(live, &shape) && granular(config, &shape)) {
        return Ok(config.clone());
    }
    match (live, config) {
        (Value::Object(l), Value::Object(c)) => {
            let mut out = l.clone();
            for (key, value) in c {
                let (child_shape, _) = shape.field(key);
                path.push(PathElement::Field(key.clone()));
                let merged = merge_at(l.get(key), value, child_shape, path)?;
                path.pop();
                out.insert(key.clone(), merged);
            }
            Ok(Value::Object(out))
        }
        (Value::Array(l), Value::Array(c)) => merge_list(l, c, shape, path),
        _ => Ok(config.clone()),
    }
}

fn merge_list(
    live: &[Value],
    config: &[Value],
    shape: Shape<'_>,
    path: &mut Vec<PathElement>,
) -> Result<Value, ShapeError> {
    let list = shape.list();
    let item_shape = shape.item();
    let lhs = index_items(list, &shape, live, path, true)?;
    let rhs = index_items(list, &shape, config, path, false)?;
    let in_lhs: BTreeMap<&PathElement, &Value> = lhs.iter().map(|(e, v)| (e, *v)).collect();
    let in_rhs: BTreeMap<&PathElement, &Value> = rhs.iter().map(|(e, v)| (e, *v)).collect();
    let shared: Vec<&PathElement> = rhs
        .iter()
        .map(|(e, _)| e)
        .filter(|e| in_lhs.contains_key(e))
        .collect();
    let mut next_shared = shared.iter().copied().peekable();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(live.len() + config.len());
    let merge_item = |element: &PathElement,
                      l: Option<&Value>,
                      r: &Value,
                      path: &mut Vec<PathElement>|
     -> Result<Value, ShapeError> {
        path.push(element.clone());
        let merged = merge_at(l, r, item_shape, path);
        path.pop();
        merged
    };
    let (mut li, mut ri) = (0, 0);
    while li < lhs.len() || ri < rhs.len() {
        if li < lhs.len() && ri < rhs.len() {
            let element = &lhs[li].0;
            if *element == rhs[ri].0 {
                merged_rhs.insert(element);
                out.push(merge_item(element, Some(lhs[li].1), rhs[ri].1, path)?);
                li += 1;
                ri += 1;
                if next_shared.peek() == Some(&element) {
                    next_shared.next();
                }
                continue;
            }
            if in_rhs.contains_key(element) && next_shared.peek().is_some_and(|n| *n != element) {
                // A shared item, but not the one due in this round.
                li += 1;
                continue;
            }
        }
        if li < lhs.len() {
            let element = &lhs[li].0;
            if !in_rhs.contains_key(element) {
                out.push(lhs[li].1.clone());
                li += 1;
                continue;
            }
            if merged_rhs.contains(element) {
                li += 1;
                continue;
            }
        }
        if ri < rhs.len() {
            let element = &rhs[ri].0;
            merged_rhs.insert(element);
            out.push(merge_item(
                element,
                in_lhs.get(element).copied(),
                rhs[ri].1,
                path,
            )?);
            ri += 1;
            if next_shared.peek() == Some(&element) {
                next_shared.next();
            }
        }
    }
    Ok(Value::Array(out))
}

/// Removes from `value` what `last` (an applier's previous field set) holds and no
/// manager owns any more (`owned`, every manager's set after this apply).
///
/// # Semantics
/// As `Updater.prune` with `addBackOwnedItems` and `addBackDanglingItems`: every element
/// of `last` (named struct fields with content count as members) is removed unless some
/// manager owns it or something below it; an element that stays is looked into. The
/// root's `apiVersion`, `kind` and `metadata` always stay.
pub fn prune(value: &mut Value, last: &FieldSet, owned: &FieldSet, shape: Shape<'_>) {
    prune_at(value, last, Some(owned), shape, true);
}

fn prune_at(
    value: &mut Value,
    last: &FieldSet,
    owned: Option<&FieldSet>,
    shape: Shape<'_>,
    root: bool,
) {
    let elements: BTreeSet<&PathElement> = last
        .members()
        .chain(last.children().map(|(e, _)| e))
        .collect();
    for element in elements {
        if root
            && matches!(element, PathElement::Field(f) if matches!(f.as_str(), "apiVersion" | "kind" | "metadata"))
        {
            prune_below(value, element, last, owned, &shape);
            continue;
        }
        let kept = owned
            .is_some_and(|o| o.has(std::slice::from_ref(element)) || o.child(element).is_some());
        if !kept {
            remove(value, element);
            continue;
        }
        prune_below(value, element, last, owned, &shape);
    }
}

/// Prunes the child `element` of `value`, when `last` has something below it.
fn prune_below(
    value: &mut Value,
    element: &PathElement,
    last: &FieldSet,
    owned: Option<&FieldSet>,
    shape: &Shape<'_>,
) {
    if let (Some(below), Some(child)) = (last.child(element), locate(value, element, shape)) {
        prune_at(
            child,
            below,
            owned.and_then(|o| o.child(element)),
            child_shape(shape, element),
            false,
        );
    }
}

fn child_shape<'a>(shape: &Shape<'a>, element: &PathElement) -> Shape<'a> {
    match element {
        PathElement::Field(name) => shape.field(name).0,
        _ => shape.item(),
    }
}

fn matches(item: &Value, element: &PathElement, shape: &Shape<'_>) -> bool {
    match element {
        PathElement::Key(fields) => fields.iter().all(|(name, value)| {
            item.get(name)
                .or_else(|| shape.key_default(name))
                .is_some_and(|v| super::path::Scalar(v.clone()) == *value)
        }),
        PathElement::Value(value) => super::path::Scalar(item.clone()) == *value,
        _ => false,
    }
}

fn locate<'v>(
    value: &'v mut Value,
    element: &PathElement,
    shape: &Shape<'_>,
) -> Option<&'v mut Value> {
    match (value, element) {
        (Value::Object(map), PathElement::Field(name)) => map.get_mut(name),
        (Value::Array(items), PathElement::Index(i)) => items.get_mut(*i),
        (Value::Array(items), _) => items.iter_mut().find(|item| matches(item, element, shape)),
        _ => None,
    }
}

fn remove(value: &mut Value, element: &PathElement) {
    match (value, element) {
        (Value::Object(map), PathElement::Field(name)) => {
            map.remove(name);
        }
        (Value::Array(items), PathElement::Index(i)) if *i < items.len() => {
            items.remove(*i);
        }
        (Value::Array(items), _) => {
            // Key defaults are not consulted here: an item is found by the fields it has.
            items.retain(|item| !matches(item, element, &Shape::Deduced));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssa::walk::tests::schema;
    use crate::ssa::walk::to_field_set;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn lists_merge_by_their_list_type() {
        let schema = schema();
        let live = json!({"spec": {
            "args": ["a", "b"],
            "tags": ["a", "b"],
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
        }});
        let config = json!({"spec": {
            "args": ["c"],
            "tags": ["c", "a"],
            "ports": [{"name": "https", "port": 443}, {"name": "http", "port": 8080}],
        }});
        let merged = merge(&live, &config, Shape::Root(&schema)).unwrap();
        assert_eq!(
            merged,
            json!({"spec": {
                "args": ["c"],
                "tags": ["c", "a", "b"],
                "ports": [
                    {"name": "https", "port": 443},
                    {"name": "http", "port": 8080},
                    {"name": "dns", "port": 53},
                ],
            }})
        );
    }

    /// A spec of `schema()`'s fields from small domains, so that two specs often share
    /// values: lists may repeat an item, a port may lack its key.
    fn spec() -> impl Strategy<Value = Value> {
        let word = || prop::sample::select(vec!["a", "b", "c"]);
        let port = (
            prop::option::weighted(0.9, word()),
            prop::option::of(0..2u8),
        )
            .prop_map(|(name, port)| {
                let mut item = serde_json::Map::new();
                if let Some(name) = name {
                    item.insert("name".into(), json!(name));
                }
                if let Some(port) = port {
                    item.insert("port".into(), json!(port));
                }
                Value::Object(item)
            });
        (
            prop::option::of(word()),
            prop::option::of(prop::collection::vec(word(), 0..4)),
            prop::option::of(prop::collection::vec(port, 0..4)),
            prop::option::of(prop::collection::vec(word(), 0..3)),
            prop::option::of(prop::collection::btree_map(word(), word(), 0..3)),
            prop::option::of(prop::option::of(word())),
            any::<bool>(),
        )
            .prop_map(|(x, tags, ports, args, labels, config, empty)| {
                let mut spec = serde_json::Map::new();
                let mut put = |key: &str, value: Option<Value>| {
                    if let Some(value) = value {
                        spec.insert(key.into(), value);
                    }
                };
                put("x", x.map(|x| json!(x)));
                put("tags", tags.map(|t| json!(t)));
                put("ports", ports.map(Value::Array));
                put("args", args.map(|a| json!(a)));
                put("labels", labels.map(|l| json!(l)));
                put(
                    "config",
                    config.map(|a| a.map_or(json!({}), |a| json!({"a": a}))),
                );
                put("empty", empty.then(|| json!({})));
                Value::Object(spec)
            })
    }

    fn object(spec: Value) -> Value {
        json!({"apiVersion": "example.org/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
    }

    /// A configuration: another spec, or the live spec with some of its fields left out and
    /// its lists cut to some of their items, kept in order or reversed (what a repeated
    /// apply sends, and what reorders a list).
    fn live_and_config() -> impl Strategy<Value = (Value, Value)> {
        (
            spec(),
            spec(),
            prop::collection::vec(any::<u8>(), 8),
            any::<bool>(),
        )
            .prop_map(|(live, other, picks, derived)| {
                let config = if derived {
                    let fields = live.as_object().into_iter().flatten();
                    Value::Object(
                        fields
                            .zip(picks)
                            .filter(|(_, pick)| pick % 4 != 0)
                            .map(|((k, v), pick)| (k.clone(), cut(v, pick)))
                            .collect(),
                    )
                } else {
                    other
                };
                (object(live), object(config))
            })
    }

    /// A list's items that `pick`'s bits 2 to 5 select, reversed when bit 6 is set; any
    /// other value as it is.
    fn cut(value: &Value, pick: u8) -> Value {
        let Value::Array(items) = value else {
            return value.clone();
        };
        let mut kept: Vec<Value> = items
            .iter()
            .enumerate()
            .filter(|(i, _)| pick & (4 << i) != 0)
            .map(|(_, v)| v.clone())
            .collect();
        if pick & 64 != 0 {
            kept.reverse();
        }
        Value::Array(kept)
    }

    proptest::proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn leaves_unchanged_is_whether_the_merge_returns_live((live, config) in live_and_config()) {
            let schema = schema();
            let shape = Shape::Root(&schema);
            let merged = merge(&live, &config, shape);
            prop_assert_eq!(
                leaves_unchanged(&live, &config, shape),
                merged.as_ref().ok() == Some(&live),
                "merged: {:?}", merged
            );
        }
    }

    #[test]
    fn a_repeated_configuration_leaves_live_unchanged_and_a_reordered_list_does_not() {
        let schema = schema();
        let shape = Shape::Root(&schema);
        let live = json!({"spec": {
            "x": "1",
            "tags": ["a", "b", "c"],
            "ports": [{"name": "http", "port": 80}, {"name": "dns", "port": 53}],
        }});
        for same in [
            json!({"spec": {"x": "1"}}),
            json!({"spec": {"tags": ["a", "c"], "ports": [{"name": "dns"}]}}),
            json!({"spec": {"ports": [{"name": "http", "port": 80}, {"name": "dns"}]}}),
        ] {
            assert!(leaves_unchanged(&live, &same, shape), "{same}");
        }
        for changes in [
            json!({"spec": {"x": "2"}}),
            json!({"spec": {"y": "1"}}),
            json!({"spec": {"tags": ["c", "a"]}}),
            json!({"spec": {"ports": [{"name": "http", "port": 81}]}}),
            json!({"spec": "atomic now"}),
        ] {
            assert!(!leaves_unchanged(&live, &changes, shape), "{changes}");
        }
    }

    #[test]
    fn a_field_no_one_owns_any_more_is_pruned() {
        let schema = schema();
        let shape = Shape::Root(&schema);
        let mut value =
            json!({"metadata": {"name": "a"}, "spec": {"x": "1", "y": "2", "tags": ["a", "b"]}});
        let last = to_field_set(
            &json!({"spec": {"x": "1", "y": "2", "tags": ["a", "b"]}}),
            shape,
        )
        .unwrap();
        let now = to_field_set(
            &json!({"metadata": {"name": "a"}, "spec": {"x": "1", "tags": ["a"]}}),
            shape,
        )
        .unwrap();
        prune(&mut value, &last, &now, shape);
        assert_eq!(
            value,
            json!({"metadata": {"name": "a"}, "spec": {"x": "1", "tags": ["a"]}})
        );
        // Nothing owned below spec any more: spec goes as a whole.
        let none = to_field_set(&json!({"metadata": {"name": "a"}}), shape).unwrap();
        prune(&mut value, &now, &none, shape);
        assert_eq!(value, json!({"metadata": {"name": "a"}}));
    }
}
