//! Field paths as Crossplane writes them (`spec.forProvider.region`, `spec.items[0].name`,
//! `metadata.labels[example.org/team]`): parsed once, then read from and written into JSON.

use std::fmt;

use serde_json::{Map, Value};

/// One step of a [`FieldPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object's field.
    Field(String),
    /// An array's element.
    Index(usize),
}

/// A parsed field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    text: String,
    segments: Vec<Segment>,
}

/// Why a field path does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid field path {path:?}: {reason}")]
pub struct FieldPathError {
    /// The path as written.
    pub path: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Why a value cannot be written at a field path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write {path}: {reason}")]
pub struct WriteError {
    /// The path.
    pub path: String,
    /// What is in the way.
    pub reason: String,
}

impl FieldPath {
    /// Parses `text`: fields separated by `.`, and `[N]` (an index) or `[key]` (a field
    /// whose name may hold dots; quotes around it are optional).
    ///
    /// # Errors
    /// An empty path or field, or an unclosed bracket.
    pub fn parse(text: &str) -> Result<FieldPath, FieldPathError> {
        let error = |reason| FieldPathError {
            path: text.to_owned(),
            reason,
        };
        let mut segments = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let end = after.find(']').ok_or_else(|| error("unclosed '['"))?;
                let inner = after[..end].trim_matches(|c| c == '"' || c == '\'');
                if inner.is_empty() {
                    return Err(error("empty brackets"));
                }
                segments.push(match inner.parse::<usize>() {
                    Ok(index) => Segment::Index(index),
                    Err(_) => Segment::Field(inner.to_owned()),
                });
                rest = &after[end + 1..];
                rest = rest.strip_prefix('.').unwrap_or(rest);
            } else {
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                if end == 0 {
                    return Err(error("empty field"));
                }
                segments.push(Segment::Field(rest[..end].to_owned()));
                rest = &rest[end..];
                if let Some(after) = rest.strip_prefix('.') {
                    if after.is_empty() {
                        return Err(error("ends with '.'"));
                    }
                    rest = after;
                }
            }
        }
        if segments.is_empty() {
            return Err(error("empty path"));
        }
        Ok(FieldPath {
            text: text.to_owned(),
            segments,
        })
    }

    /// The segments.
    #[must_use]
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The value at this path in `object`, if there is one.
    #[must_use]
    pub fn get<'a>(&self, object: &'a Map<String, Value>) -> Option<&'a Value> {
        let (first, rest) = self.segments.split_first()?;
        let Segment::Field(name) = first else {
            return None;
        };
        rest.iter()
            .try_fold(object.get(name)?, |value, segment| match segment {
                Segment::Field(name) => value.as_object()?.get(name),
                Segment::Index(i) => value.as_array()?.get(*i),
            })
    }

    /// Writes `value` at this path in `object`, making the objects and array elements
    /// (padded with `null`) on the way.
    ///
    /// # Errors
    /// A value on the way is not the object or array the path needs.
    pub fn set(&self, object: &mut Map<String, Value>, value: Value) -> Result<(), WriteError> {
        let error = |reason: String| WriteError {
            path: self.text.clone(),
            reason,
        };
        let Some((Segment::Field(first), rest)) = self.segments.split_first() else {
            return Err(error(
                "a resource is an object; the path must start with a field".into(),
            ));
        };
        let mut slot = object.entry(first.clone()).or_insert(Value::Null);
        for segment in rest {
            slot = match segment {
                Segment::Field(name) => {
                    if slot.is_null() {
                        *slot = Value::Object(Map::new());
                    }
                    let Value::Object(map) = slot else {
                        return Err(error(format!("{name:?}'s parent is not an object")));
                    };
                    map.entry(name.clone()).or_insert(Value::Null)
                }
                Segment::Index(i) => {
                    if slot.is_null() {
                        *slot = Value::Array(Vec::new());
                    }
                    let Value::Array(items) = slot else {
                        return Err(error(format!("[{i}]'s parent is not an array")));
                    };
                    if items.len() <= *i {
                        items.resize(i + 1, Value::Null);
                    }
                    &mut items[*i]
                }
            };
        }
        *slot = value;
        Ok(())
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn dots_brackets_and_indexes_parse_into_segments() {
        let path = FieldPath::parse("metadata.labels[example.org/team].x[2]").unwrap();
        assert_eq!(
            path.segments(),
            [
                Segment::Field("metadata".into()),
                Segment::Field("labels".into()),
                Segment::Field("example.org/team".into()),
                Segment::Field("x".into()),
                Segment::Index(2),
            ]
        );
        assert_eq!(
            FieldPath::parse("a[\"b.c\"]").unwrap().segments(),
            [Segment::Field("a".into()), Segment::Field("b.c".into())]
        );
    }

    #[test]
    fn malformed_paths_are_refused_with_the_reason() {
        for (text, reason) in [
            ("", "empty path"),
            ("a..b", "empty field"),
            ("a.", "ends with '.'"),
            ("a[0", "unclosed '['"),
            ("a[]", "empty brackets"),
        ] {
            assert_eq!(
                FieldPath::parse(text).unwrap_err().reason,
                reason,
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_value_is_read_where_the_path_points_and_a_missing_one_is_none() {
        let xr = object(json!({"spec": {"items": [{"name": "a"}, {"name": "b"}]}}));
        let path = FieldPath::parse("spec.items[1].name").unwrap();
        assert_eq!(path.get(&xr), Some(&json!("b")));
        assert_eq!(
            FieldPath::parse("spec.items[5].name").unwrap().get(&xr),
            None
        );
        assert_eq!(FieldPath::parse("spec.nothing").unwrap().get(&xr), None);
    }

    #[test]
    fn writing_makes_the_objects_and_array_elements_on_the_way() {
        let mut composed = object(json!({"spec": {"keep": 1}}));
        FieldPath::parse("spec.forProvider.tags[1].value")
            .unwrap()
            .set(&mut composed, json!("x"))
            .unwrap();
        assert_eq!(
            Value::Object(composed),
            json!({"spec": {"keep": 1, "forProvider": {"tags": [null, {"value": "x"}]}}})
        );
    }

    #[test]
    fn writing_through_a_scalar_is_an_error() {
        let mut composed = object(json!({"spec": "scalar"}));
        let error = FieldPath::parse("spec.region")
            .unwrap()
            .set(&mut composed, json!("x"));
        assert!(error.unwrap_err().reason.contains("not an object"));
    }
}
