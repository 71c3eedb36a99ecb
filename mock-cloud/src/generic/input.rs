//! Reading request input: create and update bodies and list query parameters, with a 400
//! that names the offending field.

use bytes::Bytes;
use http::Response;
use serde_json::Value;

use crate::config::is_path_segment;
use crate::http::respond::{self, ResponseBody};
use crate::http::route::query_param;
use crate::model::Collection;

/// The default and largest page of a list.
const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1_000;

/// A request field that is missing or wrong: answered with a 400 naming it.
#[derive(Debug)]
pub(crate) struct BadField {
    field: String,
    message: String,
}

impl BadField {
    pub fn new(field: &str, message: &str) -> BadField {
        BadField {
            field: field.to_owned(),
            message: message.to_owned(),
        }
    }

    pub fn response(&self) -> Response<ResponseBody> {
        respond::bad_field(&self.field, &self.message)
    }
}

fn parse_object(body: &Bytes) -> Result<serde_json::Map<String, Value>, BadField> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(BadField::new("body", "the body must be a JSON object")),
        Err(err) => Err(BadField::new("body", &format!("malformed JSON: {err}"))),
    }
}

fn spec_of(map: &mut serde_json::Map<String, Value>, required: bool) -> Result<Value, BadField> {
    match map.remove("spec") {
        Some(spec @ Value::Object(_)) => Ok(spec),
        Some(_) => Err(BadField::new("spec", "`spec` must be a JSON object")),
        None if required => Err(BadField::new("spec", "missing field `spec`")),
        None => Ok(Value::Object(serde_json::Map::new())),
    }
}

/// A create body: `{"name": "...", "spec": {...}}`; records need `spec.type` and `spec.value`.
pub(crate) fn parse_create(
    collection: Collection,
    body: &Bytes,
) -> Result<(String, Value), BadField> {
    let mut map = parse_object(body)?;
    let name = match map.remove("name") {
        Some(Value::String(name)) if is_path_segment(&name) => name,
        Some(_) => {
            return Err(BadField::new(
                "name",
                "`name` must be 1 to 64 of a-z, A-Z, 0-9, '-', '_', '.'",
            ));
        }
        None => return Err(BadField::new("name", "missing field `name`")),
    };
    let spec = spec_of(&mut map, false)?;
    if let Some(field) = map.keys().next() {
        return Err(BadField::new(field, &format!("unknown field `{field}`")));
    }
    if collection == Collection::Records {
        for field in ["type", "value"] {
            if !spec.get(field).is_some_and(Value::is_string) {
                let message = format!("a record needs a string `spec.{field}`");
                return Err(BadField::new(&format!("spec.{field}"), &message));
            }
        }
    }
    Ok((name, spec))
}

/// An update body: `{"spec": {...}}`.
pub(crate) fn parse_update(body: &Bytes) -> Result<Value, BadField> {
    let mut map = parse_object(body)?;
    let spec = spec_of(&mut map, true)?;
    match map.keys().next() {
        Some(field) => Err(BadField::new(field, &format!("unknown field `{field}`"))),
        None => Ok(spec),
    }
}

/// `?limit=N&page_token=NAME`.
pub(crate) fn parse_page(query: Option<&str>) -> Result<(usize, Option<&str>), BadField> {
    let limit = match query_param(query, "limit") {
        None => DEFAULT_PAGE,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) => n,
            _ => {
                let message = format!("`limit` must be a whole number from 1 to {MAX_PAGE}");
                return Err(BadField::new("limit", &message));
            }
        },
    };
    let after = query_param(query, "page_token").filter(|t| !t.is_empty());
    Ok((limit, after))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(bad: BadField) -> String {
        let response = bad.response();
        assert_eq!(response.status(), http::StatusCode::BAD_REQUEST);
        let body = futures_body(response);
        assert_eq!(body["error"]["message"], bad.message);
        body["error"]["field"].as_str().unwrap().to_owned()
    }

    fn futures_body(response: Response<ResponseBody>) -> Value {
        serde_json::from_slice(&crate::http::respond::read_body(response)).unwrap()
    }

    #[test]
    fn create_bodies_name_the_missing_or_bad_field() {
        let bad = |body: &str| {
            field_of(parse_create(Collection::Records, &Bytes::from(body.to_owned())).unwrap_err())
        };
        assert_eq!(bad("{"), "body");
        assert_eq!(bad("[]"), "body");
        assert_eq!(bad(r#"{"spec": {}}"#), "name");
        assert_eq!(bad(r#"{"name": "a b"}"#), "name");
        assert_eq!(bad(r#"{"name": "r", "spec": 3}"#), "spec");
        assert_eq!(bad(r#"{"name": "r", "colour": 3}"#), "colour");
        assert_eq!(bad(r#"{"name": "r", "spec": {"type": "A"}}"#), "spec.value");
    }

    #[test]
    fn update_bodies_need_a_spec_and_pages_a_sane_limit() {
        assert_eq!(
            field_of(parse_update(&Bytes::from_static(b"{}")).unwrap_err()),
            "spec"
        );
        assert_eq!(field_of(parse_page(Some("limit=0")).unwrap_err()), "limit");
        assert_eq!(field_of(parse_page(Some("limit=x")).unwrap_err()), "limit");
        assert_eq!(
            parse_page(Some("limit=5&page_token=b")).ok(),
            Some((5, Some("b")))
        );
    }
}
