//! The small JSONPath subset printer columns use: `.a.b`, `.a[0]`, `.a[*].b` and
//! `.a[?(@.type=="Ready")].status`.

use serde_json::Value;

/// Evaluates `path` against `root`, returning every matched value.
pub fn evaluate<'a>(root: &'a Value, path: &str) -> Vec<&'a Value> {
    let path = path
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .trim_start_matches('$');
    let mut current = vec![root];
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = find_close(after) else {
                return Vec::new();
            };
            let inner = &after[..end];
            rest = &after[end + 1..];
            current = current.into_iter().flat_map(|v| index(v, inner)).collect();
        } else if let Some(after) = rest.strip_prefix('.') {
            // A field name runs to the next unescaped `.` or `[`; `\.` is a literal dot, as
            // in `.metadata.annotations.crossplane\.io/external-name`.
            let mut field = String::new();
            let mut chars = after.char_indices().peekable();
            let mut end = after.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' if chars.peek().is_some_and(|(_, n)| *n == '.') => {
                        field.push('.');
                        chars.next();
                    }
                    '.' | '[' => {
                        end = i;
                        break;
                    }
                    _ => field.push(c),
                }
            }
            rest = &after[end..];
            if field.is_empty() {
                continue;
            }
            current = current
                .into_iter()
                .filter_map(|v| v.get(field.as_str()))
                .collect();
        } else {
            return Vec::new();
        }
    }
    current
}

fn find_close(text: &str) -> Option<usize> {
    let mut depth = 0;
    let mut quoted = None;
    for (i, c) in text.char_indices() {
        match (c, quoted) {
            ('"' | '\'', None) => quoted = Some(c),
            (q, Some(open)) if q == open => quoted = None,
            ('[', None) => depth += 1,
            (']', None) if depth == 0 => return Some(i),
            (']', None) => depth -= 1,
            _ => {}
        }
    }
    None
}

fn index<'a>(value: &'a Value, inner: &str) -> Vec<&'a Value> {
    let inner = inner.trim();
    if inner == "*" {
        return match value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(map) => map.values().collect(),
            _ => Vec::new(),
        };
    }
    if let Ok(i) = inner.parse::<i64>() {
        let Value::Array(items) = value else {
            return Vec::new();
        };
        let i = if i < 0 { items.len() as i64 + i } else { i };
        return usize::try_from(i)
            .ok()
            .and_then(|i| items.get(i))
            .into_iter()
            .collect();
    }
    if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
        let Value::Array(items) = value else {
            return Vec::new();
        };
        let Some((left, right)) = filter.split_once("==") else {
            return Vec::new();
        };
        let field = left.trim().trim_start_matches('@');
        let expected = right.trim().trim_matches(|c| c == '"' || c == '\'');
        return items
            .iter()
            .filter(|item| {
                evaluate(item, field).first().is_some_and(|v| match v {
                    Value::String(s) => s == expected,
                    other => serde_json::from_str::<Value>(expected).ok().as_ref() == Some(*other),
                })
            })
            .collect();
    }
    let key = inner.trim_matches(|c| c == '"' || c == '\'');
    value.get(key).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn printer_column_paths_find_their_values() {
        let obj = json!({
            "spec": {"region": "eu", "sizes": [1, 2]},
            "status": {"conditions": [{"type": "Synced", "status": "True"}, {"type": "Ready", "status": "False"}]}
        });
        assert_eq!(evaluate(&obj, ".spec.region"), [&json!("eu")]);
        assert_eq!(evaluate(&obj, ".spec.sizes[1]"), [&json!(2)]);
        assert_eq!(evaluate(&obj, ".spec.sizes[*]").len(), 2);
        assert_eq!(
            evaluate(&obj, r#".status.conditions[?(@.type=="Ready")].status"#),
            [&json!("False")]
        );
        assert!(evaluate(&obj, ".status.missing").is_empty());
    }

    #[test]
    fn an_escaped_dot_is_part_of_the_field_name() {
        let obj = json!({"metadata": {"annotations": {"crossplane.io/external-name": "b-1"}}});
        assert_eq!(
            evaluate(&obj, r".metadata.annotations.crossplane\.io/external-name"),
            [&json!("b-1")]
        );
    }
}
