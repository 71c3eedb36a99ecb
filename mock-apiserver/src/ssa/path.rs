//! Path elements of field sets, as structured-merge-diff's `fieldpath/element.go`
//! defines them: a struct field or map key, a list item by its key fields, a set item
//! by its value, or a list item by index.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// A scalar value inside a path (a key field of an associative list, or a set item),
/// ordered as structured-merge-diff's `value.Compare` orders values: numbers, then
/// strings, then booleans, then anything else by its JSON text.
#[derive(Debug, Clone)]
pub struct Scalar(pub Value);

impl Scalar {
    fn rank(&self) -> u8 {
        match &self.0 {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scalar {}

impl PartialOrd for Scalar {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scalar {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (Value::Number(a), Value::Number(b)) => {
                let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                a.total_cmp(&b)
            }
            (Value::String(a), Value::String(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            (a, b) if self.rank() == other.rank() => a.to_string().cmp(&b.to_string()),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// One step of a field path.
///
/// # Semantics
/// The derived order (fields, then keys, then values, then indexes; each by its content)
/// is `PathElement.Compare` of structured-merge-diff, which also orders a set's
/// serialization.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElement {
    /// A struct field or a map key: `f:name`.
    Field(String),
    /// An item of an associative list, by its key fields sorted by name: `k:{...}`.
    Key(Vec<(String, Scalar)>),
    /// An item of a set, by its value: `v:...`.
    Value(Scalar),
    /// An item of an atomic-free list without keys, by position: `i:N`.
    Index(usize),
}

impl PathElement {
    /// The key of this element in a `fieldsV1` object (`FieldsV1` of
    /// `fieldpath/serialize-pe.go`).
    pub fn to_fields_v1(&self) -> String {
        match self {
            Self::Field(name) => format!("f:{name}"),
            Self::Key(fields) => {
                let object: String = fields
                    .iter()
                    .map(|(name, value)| format!("{}:{}", Value::from(name.as_str()), value.0))
                    .collect::<Vec<_>>()
                    .join(",");
                format!("k:{{{object}}}")
            }
            Self::Value(value) => format!("v:{}", value.0),
            Self::Index(index) => format!("i:{index}"),
        }
    }

    /// Parses a `fieldsV1` key; `None` for `.` and for anything malformed.
    pub fn from_fields_v1(key: &str) -> Option<Self> {
        let (prefix, rest) = key.split_once(':')?;
        match prefix {
            "f" => Some(Self::Field(rest.to_owned())),
            "k" => {
                let Value::Object(map) = serde_json::from_str(rest).ok()? else {
                    return None;
                };
                let mut fields: Vec<(String, Scalar)> =
                    map.into_iter().map(|(k, v)| (k, Scalar(v))).collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Some(Self::Key(fields))
            }
            "v" => serde_json::from_str(rest)
                .ok()
                .map(|v| Self::Value(Scalar(v))),
            "i" => rest.parse().ok().map(Self::Index),
            _ => None,
        }
    }
}

/// `PathElement.String()`: `.name`, `[k=v,...]`, `[=v]`, `[N]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                let pairs: Vec<String> = fields
                    .iter()
                    .map(|(name, value)| format!("{name}={}", value.0))
                    .collect();
                write!(f, "[{}]", pairs.join(","))
            }
            Self::Value(value) => write!(f, "[={}]", value.0),
            Self::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A whole path, written as `Path.String()` writes it (`.spec.containers[name="a"].image`).
pub struct Path<'a>(pub &'a [PathElement]);

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|e| write!(f, "{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn elements_round_trip_through_their_fields_v1_keys() {
        let elements = [
            PathElement::Field("spec".into()),
            PathElement::Key(vec![
                ("containerPort".into(), Scalar(json!(80))),
                ("protocol".into(), Scalar(json!("TCP"))),
            ]),
            PathElement::Value(Scalar(json!("a"))),
            PathElement::Index(3),
        ];
        let keys: Vec<String> = elements.iter().map(PathElement::to_fields_v1).collect();
        assert_eq!(
            keys,
            [
                "f:spec",
                r#"k:{"containerPort":80,"protocol":"TCP"}"#,
                r#"v:"a""#,
                "i:3"
            ]
        );
        for (key, element) in keys.iter().zip(&elements) {
            assert_eq!(PathElement::from_fields_v1(key).as_ref(), Some(element));
        }
        assert_eq!(PathElement::from_fields_v1("."), None);
    }

    #[test]
    fn paths_print_as_structured_merge_diff_prints_them() {
        let path = [
            PathElement::Field("spec".into()),
            PathElement::Field("containers".into()),
            PathElement::Key(vec![("name".into(), Scalar(json!("nginx")))]),
            PathElement::Field("image".into()),
        ];
        assert_eq!(
            Path(&path).to_string(),
            r#".spec.containers[name="nginx"].image"#
        );
        let set_item = [
            PathElement::Field("finalizers".into()),
            PathElement::Value(Scalar(json!("a"))),
        ];
        assert_eq!(Path(&set_item).to_string(), r#".finalizers[="a"]"#);
    }

    #[test]
    fn numbers_sort_before_strings_and_numerically() {
        assert!(Scalar(json!(80)) < Scalar(json!(443)));
        assert!(Scalar(json!(443)) < Scalar(json!("a")));
        assert!(PathElement::Field("z".into()) < PathElement::Index(0));
    }
}
