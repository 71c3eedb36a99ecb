//! What the checks of `cargo xtask validate` share: a list of failed expectations, a
//! manifest stream read as JSON values, and its objects by kind and name.

use std::collections::HashMap;

use serde_json::Value;

/// The expectations a check found unmet, in the order it checked them.
#[derive(Debug, Default)]
pub struct Need(Vec<String>);

impl Need {
    /// Records `what` unless `ok`.
    pub fn need(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.0.push(what.into());
        }
    }

    /// The unmet expectations: none is `Ok`.
    pub fn finish(self) -> Result<(), Vec<String>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

/// The documents of a (multi-document) YAML stream, empty ones left out; an error names
/// `origin` and, from the parser, the line and column.
pub fn documents(text: &str, origin: &str) -> Result<Vec<Value>, String> {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| format!("{origin}: {e}"))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// One YAML document (a file that is not a stream).
pub fn document(text: &str, origin: &str) -> Result<Value, String> {
    serde_saphyr::from_str(text).map_err(|e| format!("{origin}: {e}"))
}

/// The objects of a manifest stream by kind and name (the last one wins, as in a map).
pub struct Objects<'a>(HashMap<(&'a str, &'a str), &'a Value>);

impl<'a> Objects<'a> {
    pub fn new(docs: &'a [Value]) -> Objects<'a> {
        Objects(
            docs.iter()
                .map(|d| ((str_of(&d["kind"]), str_of(&d["metadata"]["name"])), d))
                .collect(),
        )
    }

    /// The object `kind`/`name`, or `Null` (whose fields are all `Null`).
    pub fn get(&self, kind: &str, name: &str) -> &'a Value {
        self.0.get(&(kind, name)).copied().unwrap_or(&Value::Null)
    }
}

/// A string value, or "" for anything else.
pub fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// The elements of an array value (none for anything else).
pub fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The keys of an object value (none for anything else).
pub fn keys(v: &Value) -> impl Iterator<Item = &str> {
    v.as_object()
        .into_iter()
        .flat_map(|m| m.keys().map(String::as_str))
}

/// The `(name, port)` pairs of a list of ports, `port_field` being `port` (a Service's)
/// or `containerPort` (a container's).
pub fn named_ports<'a>(ports: &'a Value, port_field: &str) -> Vec<(&'a str, i64)> {
    items(ports)
        .iter()
        .map(|p| (str_of(&p["name"]), p[port_field].as_i64().unwrap_or(-1)))
        .collect()
}

/// Prints a check's unmet expectations and fails on them.
pub fn report<T>(result: Result<T, Vec<String>>) -> crate::step::Result<T> {
    result.map_err(|errors| {
        for e in &errors {
            println!("  error: {e}");
        }
        crate::step::Error::Failed(format!("{} check(s) failed (above)", errors.len()))
    })
}

#[cfg(test)]
pub mod tests {
    use serde_json::Value;

    /// `docs` with the value at `pointer` of the object `kind`/`name` replaced by `value`,
    /// or removed when `value` is `None`.
    pub fn mutate(
        docs: &[Value],
        kind: &str,
        name: &str,
        pointer: &str,
        value: Option<Value>,
    ) -> Vec<Value> {
        let mut out = docs.to_vec();
        let doc = out
            .iter_mut()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} in the fixture"));
        let (parent, last) = pointer.rsplit_once('/').expect("a JSON pointer");
        let parent = doc
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("no {parent} in {kind}/{name}"));
        match (parent, value) {
            (Value::Object(m), Some(v)) => {
                m.insert(last.to_owned(), v);
            }
            (Value::Object(m), None) => {
                m.remove(last).expect("the field to remove");
            }
            (Value::Array(a), Some(v)) => a[last.parse::<usize>().expect("an index")] = v,
            (Value::Array(a), None) => {
                a.remove(last.parse::<usize>().expect("an index"));
            }
            (other, _) => panic!("{pointer}: not in an object or array: {other}"),
        }
        out
    }

    #[test]
    fn a_stream_reads_as_its_non_empty_documents() {
        let docs = super::documents("---\na: 1\n---\n---\nb: [x]\n", "t").unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"][0], "x");
        let err = super::documents("a: [1\n", "file.yaml").unwrap_err();
        assert!(err.starts_with("file.yaml: "), "{err}");
    }
}
