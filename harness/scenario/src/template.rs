//! Name, annotation and spec templates: `{{index}}`, `{{group}}` and `{{scenario}}`, and
//! `{{cloudUrl}}` in scenario objects (replaced when the run creates them).

use std::fmt;

/// The placeholder of mock-cloud's base URL in a profile's command line and in scenario
/// objects.
pub const CLOUD_URL: &str = "{{cloudUrl}}";

/// Values of the placeholders for one resource.
#[derive(Clone, Copy, Debug)]
pub struct Vars<'a> {
    /// 0-based index in the group.
    pub index: u32,
    /// The group's name.
    pub group: &'a str,
    /// The scenario's name.
    pub scenario: &'a str,
}

impl<'a> Vars<'a> {
    /// The variables of object `index` of the group `group` in the scenario `scenario`.
    #[must_use]
    pub const fn new(index: u32, group: &'a str, scenario: &'a str) -> Self {
        Self {
            index,
            group,
            scenario,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Index,
    Group,
    Scenario,
    /// `{{cloudUrl}}`: kept as written; the run replaces it in scenario objects with
    /// mock-cloud's URL as the provider reaches it.
    CloudUrl,
}

/// A parsed template string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    source: String,
    pieces: Vec<Piece>,
}

/// A template string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{{` without `}}`.
    #[error("unclosed placeholder in {0:?}, expected `}}}}`")]
    Unclosed(String),
    /// A name that is not a placeholder (escaped as Rust escapes a string's debug form, so
    /// a line break in it keeps the problem on one line).
    #[error(
        "unknown placeholder `{{{{{}}}}}`, expected one of {{{{index}}}}, {{{{group}}}}, {{{{scenario}}}}, {{{{cloudUrl}}}}",
        .0.escape_debug()
    )]
    Unknown(String),
}

impl Template {
    /// Parses `source`.
    ///
    /// # Errors
    /// [`TemplateError`] for an unclosed or unknown placeholder.
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = source;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_owned()));
            }
            let after = &rest[open + 2..];
            let close = after
                .find("}}")
                .ok_or_else(|| TemplateError::Unclosed(source.to_owned()))?;
            let name = after[..close].trim();
            pieces.push(match name {
                "index" => Piece::Index,
                "group" => Piece::Group,
                "scenario" => Piece::Scenario,
                "cloudUrl" => Piece::CloudUrl,
                other => return Err(TemplateError::Unknown(other.to_owned())),
            });
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_owned()));
        }
        Ok(Template {
            source: source.to_owned(),
            pieces,
        })
    }

    /// The template as written.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the template uses `{{index}}` (so every resource gets its own value).
    #[must_use]
    pub fn uses_index(&self) -> bool {
        self.pieces.contains(&Piece::Index)
    }

    /// The string for one resource.
    #[must_use]
    pub fn render(&self, vars: Vars<'_>) -> String {
        let mut out = String::with_capacity(self.source.len() + 8);
        for p in &self.pieces {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Index => out.push_str(&vars.index.to_string()),
                Piece::Group => out.push_str(vars.group),
                Piece::Scenario => out.push_str(vars.scenario),
                Piece::CloudUrl => out.push_str(CLOUD_URL),
            }
        }
        out
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Checks every string in a JSON value as a template.
///
/// # Errors
/// The first string that does not parse.
pub fn check_json(value: &serde_json::Value) -> Result<(), TemplateError> {
    match value {
        serde_json::Value::String(s) => Template::parse(s).map(|_| ()),
        serde_json::Value::Array(items) => items.iter().try_for_each(check_json),
        serde_json::Value::Object(map) => map.values().try_for_each(check_json),
        _ => Ok(()),
    }
}

/// Renders every string of a JSON value (templates already checked with [`check_json`]; a
/// string that does not parse is kept as written).
#[must_use]
pub fn render_json(value: &serde_json::Value, vars: Vars<'_>) -> serde_json::Value {
    match value {
        serde_json::Value::String(s) => match Template::parse(s) {
            Ok(t) => serde_json::Value::String(t.render(vars)),
            Err(_) => value.clone(),
        },
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.iter().map(|v| render_json(v, vars)).collect())
        }
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), render_json(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VARS: Vars<'static> = Vars {
        index: 7,
        group: "buckets",
        scenario: "smoke",
    };

    #[test]
    fn placeholders_are_replaced_and_text_is_kept() {
        let t = Template::parse("{{scenario}}-{{ group }}-{{index}}x").unwrap();
        assert_eq!(t.render(VARS), "smoke-buckets-7x");
        assert!(t.uses_index());
    }

    #[test]
    fn unknown_and_unclosed_placeholders_are_errors_that_say_what_was_expected() {
        assert_eq!(
            Template::parse("a-{{idx}}").unwrap_err().to_string(),
            "unknown placeholder `{{idx}}`, expected one of {{index}}, {{group}}, {{scenario}}, {{cloudUrl}}"
        );
        assert_eq!(
            Template::parse("a-{{index").unwrap_err().to_string(),
            "unclosed placeholder in \"a-{{index\", expected `}}`"
        );
        // A line break in the name stays escaped: one problem, one line.
        assert!(
            Template::parse("a-{{in\ndex}}")
                .unwrap_err()
                .to_string()
                .starts_with("unknown placeholder `{{in\\ndex}}`")
        );
    }

    #[test]
    fn json_strings_are_rendered_at_any_depth() {
        let v = serde_json::json!({"a": ["{{index}}", 1], "b": {"c": "{{group}}"}});
        check_json(&v).unwrap();
        assert_eq!(
            render_json(&v, VARS),
            serde_json::json!({"a": ["7", 1], "b": {"c": "buckets"}})
        );
    }
}
