//! Field sets: structured-merge-diff's `fieldpath.Set`, with its `fieldsV1` form.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::path::PathElement;

/// A set of field paths, as a tree: the elements that are members at this level, and
/// the sets below each element.
///
/// # Semantics
/// As `fieldpath.Set`: a path is in the set when its last element is a member of the
/// set its prefix leads to; a prefix with children is not itself a member unless
/// inserted. Empty children are never kept, so equal sets compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// Whether the set holds no path.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path` (nothing for the empty path).
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                if !self.members.contains(last) {
                    self.members.insert(last.clone());
                }
            }
            [first, rest @ ..] => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => {
                    let mut child = FieldSet::default();
                    child.insert(rest);
                    self.children.insert(first.clone(), child);
                }
            },
        }
    }

    /// Whether `path` is a member.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The set below `element`, if any path continues through it.
    pub fn child(&self, element: &PathElement) -> Option<&FieldSet> {
        self.children.get(element)
    }

    /// The members at this level.
    pub fn members(&self) -> impl Iterator<Item = &PathElement> {
        self.members.iter()
    }

    /// The elements with paths below them, with those sets.
    pub fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// Removes the member `element` at this level (not what is below it).
    pub fn remove_member(&mut self, element: &PathElement) {
        self.members.remove(element);
    }

    /// Removes `element` at this level with everything below it.
    pub fn remove_subtree(&mut self, element: &PathElement) {
        self.members.remove(element);
        self.children.remove(element);
    }

    /// Every path in both sets.
    #[must_use]
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            let merged = match out.children.get(element) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(element.clone(), merged);
        }
        out
    }

    /// The paths of `self` that are not in `other`.
    #[must_use]
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, child)| {
                let rest = match other.children.get(element) {
                    Some(theirs) => child.difference(theirs),
                    None => child.clone(),
                };
                (!rest.is_empty()).then(|| (element.clone(), rest))
            })
            .collect();
        FieldSet { members, children }
    }

    /// The paths in both sets.
    #[must_use]
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, child)| {
                let both = child.intersection(other.children.get(element)?);
                (!both.is_empty()).then(|| (element.clone(), both))
            })
            .collect();
        FieldSet { members, children }
    }

    /// Calls `f` with every path: at each level the members first, then the paths below
    /// each element, in order (`Set.Iterate`).
    pub fn for_each_path(&self, f: &mut impl FnMut(&[PathElement])) {
        let mut prefix = Vec::new();
        self.walk(&mut prefix, f);
    }

    fn walk(&self, prefix: &mut Vec<PathElement>, f: &mut impl FnMut(&[PathElement])) {
        for member in &self.members {
            prefix.push(member.clone());
            f(prefix);
            prefix.pop();
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.walk(prefix, f);
            prefix.pop();
        }
    }

    /// The `fieldsV1` object (`Set.ToJSON`): one key per element, `{}` for a member
    /// without children, and `".": {}` inside the children of an element that is also a
    /// member.
    pub fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        for member in &self.members {
            if !self.children.contains_key(member) {
                out.insert(member.to_fields_v1(), Value::Object(Map::new()));
            }
        }
        for (element, child) in &self.children {
            let mut inner = match child.to_fields_v1() {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            if self.members.contains(element) {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            out.insert(element.to_fields_v1(), Value::Object(inner));
        }
        Value::Object(out)
    }

    /// Reads a `fieldsV1` object; `None` when it is not one.
    pub fn from_fields_v1(value: &Value) -> Option<FieldSet> {
        let map = value.as_object()?;
        let mut set = FieldSet::default();
        for (key, inner) in map {
            if key == "." {
                continue;
            }
            let element = PathElement::from_fields_v1(key)?;
            let inner_map = inner.as_object()?;
            if inner_map.is_empty() || inner_map.contains_key(".") {
                set.members.insert(element.clone());
            }
            let child = FieldSet::from_fields_v1(inner)?;
            if !child.is_empty() {
                set.children.insert(element, child);
            }
        }
        Some(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    #[test]
    fn a_set_writes_and_reads_the_fields_v1_form() {
        let fields = json!({
            "f:data": {".": {}, "f:a": {}},
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:list": {"k:{\"name\":\"x\"}": {".": {}, "f:name": {}}}},
        });
        let set = FieldSet::from_fields_v1(&fields).unwrap();
        assert!(set.has(&[f("data")]));
        assert!(set.has(&[f("data"), f("a")]));
        assert!(!set.has(&[f("metadata")]));
        assert!(set.has(&[f("metadata"), f("labels"), f("app")]));
        assert_eq!(set.to_fields_v1(), fields);
    }

    #[test]
    fn difference_and_intersection_keep_no_empty_children() {
        let mut a = FieldSet::default();
        a.insert(&[f("spec"), f("x")]);
        a.insert(&[f("spec"), f("y")]);
        let mut b = FieldSet::default();
        b.insert(&[f("spec"), f("x")]);
        let mut only_y = FieldSet::default();
        only_y.insert(&[f("spec"), f("y")]);
        assert_eq!(a.difference(&b), only_y);
        assert_eq!(a.intersection(&b), b);
        assert!(b.difference(&a).is_empty());
        assert_eq!(b.union(&only_y), a);
    }

    #[test]
    fn paths_are_visited_members_first() {
        let mut set = FieldSet::default();
        set.insert(&[f("b"), f("c")]);
        set.insert(&[f("z")]);
        set.insert(&[f("a")]);
        let mut seen = Vec::new();
        set.for_each_path(&mut |p| seen.push(super::super::path::Path(p).to_string()));
        assert_eq!(seen, [".a", ".z", ".b.c"]);
    }
}
