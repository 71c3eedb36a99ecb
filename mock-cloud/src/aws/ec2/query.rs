//! Reading an ec2Query request's parameters: flattened lists (`ResourceId.1`,
//! `Filter.2.Value.1`), tags, filters, booleans and page sizes, each with EC2's error
//! for a missing or bad value.

use std::collections::BTreeMap;

use http::StatusCode;

use super::super::envelope::AwsError;

/// An `InvalidParameterValue` error.
pub(crate) fn invalid_value(message: impl Into<String>) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "InvalidParameterValue",
        message.into(),
    )
}

/// EC2's `MissingParameter` for `name`.
pub(crate) fn missing(name: &str) -> AwsError {
    AwsError::new(
        StatusCode::BAD_REQUEST,
        "MissingParameter",
        format!("The request must contain the parameter {name}"),
    )
}

/// A request's decoded parameters.
pub(crate) struct Params(Vec<(String, String)>);

impl Params {
    pub fn new(pairs: Vec<(String, String)>) -> Params {
        Params(pairs)
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key`, or EC2's `MissingParameter`.
    pub fn required(&self, key: &str) -> Result<&str, AwsError> {
        match self.get(key) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(missing(key)),
        }
    }

    /// A boolean parameter (`true`/`false`, as the SDKs write them).
    pub fn flag(&self, key: &str) -> Result<Option<bool>, AwsError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => parse_bool(v)
                .map(Some)
                .ok_or_else(|| invalid_value(format!("Invalid value '{v}' for {key}"))),
        }
    }

    /// The members of a flattened list or of a list of structures: for `prefix`
    /// `Filter`, `Filter.1.Name=a` and `Filter.1.Value.1=b` give index 1 with the pairs
    /// `("Name", "a")` and `("Value.1", "b")`; for `ResourceId`, `ResourceId.2=x` gives
    /// index 2 with `("", "x")`. Indices in numeric order.
    pub fn members(&self, prefix: &str) -> BTreeMap<u32, Vec<(&str, &str)>> {
        let mut out: BTreeMap<u32, Vec<(&str, &str)>> = BTreeMap::new();
        for (k, v) in &self.0 {
            let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            let (index, sub) = rest.split_once('.').unwrap_or((rest, ""));
            if let Ok(index) = index.parse::<u32>() {
                out.entry(index).or_default().push((sub, v.as_str()));
            }
        }
        out
    }

    /// A flattened list of strings (`ResourceId.1`, `ResourceId.2`, …), in index order.
    pub fn list(&self, prefix: &str) -> Vec<&str> {
        self.members(prefix)
            .into_values()
            .filter_map(|fields| fields.iter().find(|(k, _)| k.is_empty()).map(|(_, v)| *v))
            .collect()
    }

    /// A list of tags (`Tag.N.Key`, `Tag.N.Value`); a value may be absent.
    pub fn tags(&self, prefix: &str) -> Vec<TagParam> {
        self.members(prefix)
            .into_values()
            .map(|fields| tag_of(&fields))
            .collect()
    }

    /// The filters (`Filter.N.Name`, `Filter.N.Value.M`).
    pub fn filters(&self) -> Result<Vec<Filter>, AwsError> {
        self.members("Filter")
            .into_values()
            .map(|fields| {
                let name = field(&fields, "Name")
                    .ok_or_else(|| invalid_value("The filter 'null' is invalid"))?;
                let mut values: Vec<(u32, String)> = fields
                    .iter()
                    .filter_map(|(k, v)| {
                        let i = k.strip_prefix("Value.")?.parse::<u32>().ok()?;
                        Some((i, (*v).to_owned()))
                    })
                    .collect();
                values.sort_by_key(|(i, _)| *i);
                Ok(Filter {
                    name: name.to_owned(),
                    values: values.into_iter().map(|(_, v)| v).collect(),
                })
            })
            .collect()
    }

    /// `MaxResults`, checked against EC2's range of 5 to 1,000.
    pub fn max_results(&self) -> Result<Option<usize>, AwsError> {
        let Some(text) = self.get("MaxResults") else {
            return Ok(None);
        };
        let n: i64 = text.parse().map_err(|_| {
            invalid_value(format!(
                "Value ( {text} ) for parameter maxResults is invalid. Expecting an integer."
            ))
        })?;
        if n < 5 {
            return Err(invalid_value(format!(
                "Value ( {n} ) for parameter maxResults is invalid. Expecting a value greater than 5."
            )));
        }
        if n > 1000 {
            return Err(invalid_value(format!(
                "Value ( {n} ) for parameter maxResults is invalid. Expecting a value less than or equal to 1000."
            )));
        }
        Ok(Some(n as usize))
    }
}

fn field<'a>(fields: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
}

fn tag_of(fields: &[(&str, &str)]) -> TagParam {
    TagParam {
        key: field(fields, "Key").map(str::to_owned),
        value: field(fields, "Value").map(str::to_owned),
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A tag as a request gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagParam {
    pub key: Option<String>,
    pub value: Option<String>,
}

/// A tag specification of a create (`TagSpecification.N`).
pub(crate) struct TagSpecification {
    pub resource_type: Option<String>,
    pub tags: Vec<TagParam>,
}

impl Params {
    /// `TagSpecification.N.ResourceType` and `TagSpecification.N.Tag.M.Key/Value`.
    pub fn tag_specifications(&self) -> Vec<TagSpecification> {
        self.members("TagSpecification")
            .into_values()
            .map(|fields| {
                let mut tags: BTreeMap<u32, Vec<(&str, &str)>> = BTreeMap::new();
                for (k, v) in &fields {
                    let Some(rest) = k.strip_prefix("Tag.") else {
                        continue;
                    };
                    let (index, sub) = rest.split_once('.').unwrap_or((rest, ""));
                    if let Ok(index) = index.parse::<u32>() {
                        tags.entry(index).or_default().push((sub, v));
                    }
                }
                TagSpecification {
                    resource_type: field(&fields, "ResourceType").map(str::to_owned),
                    tags: tags.into_values().map(|f| tag_of(&f)).collect(),
                }
            })
            .collect()
    }
}

/// A filter: a name and the values any of which may match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    pub name: String,
    pub values: Vec<String>,
}

impl Filter {
    /// Whether any of the filter's values matches `text` (EC2's wildcards: `*` any run of
    /// characters, `?` one, `\` escapes the next).
    pub fn matches(&self, text: &str) -> bool {
        self.values.iter().any(|pattern| glob(pattern, text))
    }

    /// Whether any value matches any of `texts`.
    pub fn matches_any<'a>(&self, texts: impl IntoIterator<Item = &'a str>) -> bool {
        texts.into_iter().any(|t| self.matches(t))
    }
}

/// EC2's filter wildcards: `*` matches any run of characters, `?` exactly one, and `\`
/// makes the next character literal.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Token {
        Any,
        One,
        Char(char),
    }
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '*' => Token::Any,
            '?' => Token::One,
            '\\' => Token::Char(chars.next().unwrap_or('\\')),
            c => Token::Char(c),
        });
    }
    let text: Vec<char> = text.chars().collect();
    // Iterative matching with backtracking to the last `*`.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::One) => (p, t) = (p + 1, t + 1),
            Some(Token::Char(c)) if *c == text[t] => (p, t) = (p + 1, t + 1),
            Some(Token::Any) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    (p, t) = (sp + 1, st + 1);
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(|tok| *tok == Token::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(text: &str) -> Params {
        Params::new(super::super::super::params::pairs(text.as_bytes()))
    }

    #[test]
    fn flattened_lists_and_structures_are_read_in_index_order() {
        let p = params(
            "ResourceId.2=b&ResourceId.1=a&Tag.1.Key=k&Tag.1.Value=v&Tag.2.Key=only&Filter.1.Name=tag%3AOwner&Filter.1.Value.2=y&Filter.1.Value.1=x",
        );
        assert_eq!(p.list("ResourceId"), ["a", "b"]);
        let tags = p.tags("Tag");
        assert_eq!(tags[0].value.as_deref(), Some("v"));
        assert_eq!(tags[1].key.as_deref(), Some("only"));
        assert_eq!(tags[1].value, None);
        let filters = p.filters().ok().unwrap();
        assert_eq!(filters[0].name, "tag:Owner");
        assert_eq!(filters[0].values, ["x", "y"]);
    }

    #[test]
    fn page_sizes_are_five_to_a_thousand() {
        assert_eq!(params("MaxResults=5").max_results().ok(), Some(Some(5)));
        let err = params("MaxResults=3").max_results().err().unwrap();
        assert_eq!(
            err.message,
            "Value ( 3 ) for parameter maxResults is invalid. Expecting a value greater than 5."
        );
        assert!(params("MaxResults=1001").max_results().is_err());
        assert!(params("MaxResults=x").max_results().is_err());
    }

    #[test]
    fn wildcards_match_runs_single_characters_and_escapes() {
        assert!(glob("web-*", "web-1"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*b*d", "abcbd"));
        assert!(glob("a\\*", "a*"));
        assert!(!glob("a\\*", "ab"));
        assert!(!glob("prod", "production"));
    }
}
