//! Label and field selectors, as `labelSelector` and `fieldSelector` query parameters.

/// A selector that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement {term:?}: {problem}")]
pub struct SelectorError {
    /// The offending term.
    pub term: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
/// joined by commas (all must hold).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses the text of a `labelSelector` parameter; empty text selects everything.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for term in split_terms(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(term)?);
        }
        Ok(Self(requirements))
    }

    /// Whether labels looked up through `get` satisfy every requirement.
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0_i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

fn err(term: &str, problem: &'static str) -> SelectorError {
    SelectorError {
        term: term.to_owned(),
        problem,
    }
}

fn parse_requirement(term: &str) -> Result<Requirement, SelectorError> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(check_key(term, key.trim())?));
    }
    if let Some(open) = term.find('(') {
        let close = term
            .rfind(')')
            .filter(|&c| c == term.len() - 1)
            .ok_or_else(|| err(term, "missing closing parenthesis"))?;
        let head = term[..open].trim();
        let (key, op) = head
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| err(term, "expected `key in (values)`"))?;
        let key = check_key(term, key.trim())?;
        let values = term[open + 1..close]
            .split(',')
            .map(|v| check_value(term, v.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        return match op {
            "in" => Ok(Requirement::In(key, values)),
            "notin" => Ok(Requirement::NotIn(key, values)),
            _ => Err(err(term, "expected operator `in` or `notin`")),
        };
    }
    for (op, negate) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((key, value)) = term.split_once(op) {
            let key = check_key(term, key.trim())?;
            let value = check_value(term, value.trim())?;
            return Ok(if negate {
                Requirement::NotEquals(key, value)
            } else {
                Requirement::Equals(key, value)
            });
        }
    }
    Ok(Requirement::Exists(check_key(term, term)?))
}

fn check_key(term: &str, key: &str) -> Result<String, SelectorError> {
    let valid = !key.is_empty()
        && key.len() <= 316
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
        && key.bytes().filter(|&b| b == b'/').count() <= 1;
    if valid {
        Ok(key.to_owned())
    } else {
        Err(err(term, "invalid label key"))
    }
}

fn check_value(term: &str, value: &str) -> Result<String, SelectorError> {
    let valid = value.len() <= 63
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if valid {
        Ok(value.to_owned())
    } else {
        Err(err(term, "invalid label value"))
    }
}

/// A parsed field selector: `field=value`, `field==value`, `field!=value`, joined by commas.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses the text of a `fieldSelector` parameter; empty text selects everything.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut terms = Vec::new();
        for term in text.split(',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==") {
                (f, true, v)
            } else if let Some((f, v)) = term.split_once('=') {
                (f, true, v)
            } else {
                return Err(err(
                    term,
                    "expected `field=value`, `field==value` or `field!=value`",
                ));
            };
            let field = field.trim();
            if field.is_empty()
                || !field
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.')
            {
                return Err(err(term, "invalid field name"));
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(terms))
    }

    /// Whether the selector is empty (selects everything).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The fields the selector reads.
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(f, _, _)| f.as_str())
    }

    /// Whether the fields, read through `get`, satisfy every term. A missing field reads
    /// as the empty string, as in the real server.
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let actual = get(field).unwrap_or_default();
            (actual == *value) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<&'static str> {
        move |k| pairs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v)
    }

    #[test]
    fn every_label_operator_selects_as_kubernetes_does() {
        let get = labels(&[("app", "web"), ("tier", "front")]);
        for (text, expected) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("missing notin (web)", true),
            ("tier", true),
            ("!tier", false),
            ("!missing", true),
            ("app=web,tier=back", false),
            ("", true),
        ] {
            assert_eq!(
                LabelSelector::parse(text).unwrap().matches(&get),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn malformed_label_selectors_are_errors() {
        for text in ["app in (web", "app foo (x)", "a b c", "=x", "app=we b"] {
            assert!(LabelSelector::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn field_selectors_compare_strings_and_treat_missing_as_empty() {
        let sel = FieldSelector::parse("metadata.name=b1,spec.x!=y").unwrap();
        assert_eq!(
            sel.fields().collect::<Vec<_>>(),
            ["metadata.name", "spec.x"]
        );
        assert!(sel.matches(|f| (f == "metadata.name").then(|| "b1".to_owned())));
        assert!(!sel.matches(|f| Some(if f == "metadata.name" { "b1" } else { "y" }.to_owned())));
        assert!(FieldSelector::parse("nonsense").is_err());
    }
}
