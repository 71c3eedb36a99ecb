//! `x-kubernetes-validations` rules: the part of CEL that plain comparisons need.
//!
//! Supported: literals (integers, doubles, strings, booleans, `null`, lists), `self` and
//! `oldSelf` with field selection and indexing, `has(self.f)`, `size(x)` and `x.size()`,
//! the string methods `startsWith`, `endsWith`, `contains` and `matches`, `!`, unary `-`,
//! `* / % + -`, `== != < <= > >=`, `in`, `&&`, `||` and `?:`. A rule using anything else
//! is refused when the CRD is loaded, so no rule is silently skipped.
//!
//! # Semantics
//! As in Kubernetes: a rule that evaluates to `false` fails with its `message` (default
//! `failed rule: RULE`) and `reason`; a rule naming `oldSelf` (a transition rule) runs
//! only on updates where the old value exists; `&&` and `||` short-circuit; selecting a
//! missing field is an evaluation error.

mod eval;
mod expr;
mod parse;

use serde_json::Value;

use self::eval::{Scope, eval};
use self::expr::{Expr, uses_old_self};

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    source: String,
    expr: Expr,
    message: Option<String>,
    reason: Option<String>,
    field_path: Option<String>,
    transition: bool,
}

/// What a failed rule reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `FieldValueInvalid` unless the rule sets `reason`.
    pub reason: String,
    /// The message: the rule's, or `failed rule: RULE`, or the evaluation error.
    pub message: String,
    /// The rule's `fieldPath` (`.spec.x`), appended to the node's path.
    pub field_path: Option<String>,
}

impl Rule {
    /// Compiles one `x-kubernetes-validations` entry.
    pub fn compile(rule: &Value) -> Result<Self, String> {
        let source = rule["rule"]
            .as_str()
            .ok_or("a rule needs a `rule` string")?
            .to_owned();
        let expr = parse::parse(&source)?;
        Ok(Self {
            transition: uses_old_self(&expr),
            source,
            expr,
            message: rule["message"].as_str().map(str::to_owned),
            reason: rule["reason"].as_str().map(str::to_owned),
            field_path: rule["fieldPath"].as_str().map(str::to_owned),
        })
    }

    /// Evaluates the rule on `value` (and the old value, on updates); `None` when it
    /// passes or does not apply.
    pub fn check(&self, value: &Value, old: Option<&Value>) -> Option<Failure> {
        if self.transition && old.is_none() {
            return None;
        }
        let scope = Scope { value, old };
        let message = match eval(&self.expr, &scope) {
            Ok(Value::Bool(true)) => return None,
            Ok(Value::Bool(false)) => self
                .message
                .clone()
                .unwrap_or_else(|| format!("failed rule: {}", self.source)),
            Ok(other) => format!("rule {} did not evaluate to a bool: {other}", self.source),
            Err(error) => error,
        };
        Some(Failure {
            reason: self
                .reason
                .clone()
                .unwrap_or_else(|| "FieldValueInvalid".into()),
            message,
            field_path: self.field_path.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(rule: &str, value: Value, old: Option<Value>) -> Option<Failure> {
        Rule::compile(&json!({"rule": rule}))
            .unwrap()
            .check(&value, old.as_ref())
    }

    #[test]
    fn plain_comparisons_pass_and_fail_with_the_default_message() {
        let spec = json!({"min": 1, "max": 3, "name": "web", "tags": ["a"]});
        assert_eq!(check("self.min <= self.max", spec.clone(), None), None);
        assert_eq!(
            check(
                "size(self.name) < 4 && self.name.startsWith('w')",
                spec.clone(),
                None
            ),
            None
        );
        assert_eq!(
            check("'a' in self.tags && !has(self.other)", spec.clone(), None),
            None
        );
        assert_eq!(
            check(
                "self.max - self.min == 2 ? true : false",
                spec.clone(),
                None
            ),
            None
        );
        let failure = check("self.min > self.max", spec, None).unwrap();
        assert_eq!(failure.message, "failed rule: self.min > self.max");
        assert_eq!(failure.reason, "FieldValueInvalid");
    }

    #[test]
    fn transition_rules_run_only_with_an_old_value() {
        let rule = "self == oldSelf";
        assert_eq!(check(rule, json!("a"), None), None);
        assert!(check(rule, json!("b"), Some(json!("a"))).is_some());
    }

    #[test]
    fn missing_fields_are_evaluation_errors_and_unknown_functions_are_refused() {
        let failure = check("self.x == 1", json!({}), None).unwrap();
        assert_eq!(failure.message, "no such key: x");
        assert!(check("has(self.x) || self.x == 1", json!({}), None).is_some());
        assert_eq!(check("!has(self.x) || self.x == 1", json!({}), None), None);
        assert!(Rule::compile(&json!({"rule": "self.all(x, x > 0)"})).is_err());
    }
}
