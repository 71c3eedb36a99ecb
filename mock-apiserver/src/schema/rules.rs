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

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Value, json};

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

#[derive(Debug, Clone)]
enum Expr {
    Literal(Value),
    List(Vec<Expr>),
    Ident(String),
    Select(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Has(Box<Expr>, String),
    Call(String, Option<Box<Expr>>, Vec<Expr>),
    Unary(char, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
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
        let tokens = lex(&source)?;
        let mut parser = Parser { tokens, at: 0 };
        let expr = parser.expr()?;
        if parser.at != parser.tokens.len() {
            return Err(format!(
                "rule {source:?}: unexpected {:?}",
                parser.tokens[parser.at]
            ));
        }
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

fn uses_old_self(expr: &Expr) -> bool {
    match expr {
        Expr::Ident(name) => name == "oldSelf",
        Expr::Literal(_) => false,
        Expr::List(items) => items.iter().any(uses_old_self),
        Expr::Select(e, _) | Expr::Has(e, _) | Expr::Unary(_, e) => uses_old_self(e),
        Expr::Index(a, b) | Expr::Binary(_, a, b) => uses_old_self(a) || uses_old_self(b),
        Expr::Call(_, target, args) => {
            target.as_deref().is_some_and(uses_old_self) || args.iter().any(uses_old_self)
        }
        Expr::Cond(a, b, c) => uses_old_self(a) || uses_old_self(b) || uses_old_self(c),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(Value),
    Str(String),
    Ident(String),
    Op(&'static str),
}

const OPERATORS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", "(", ")",
    "[", "]", ".", ",",
];

fn lex(source: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            if i < chars.len() && chars[i] == 'u' {
                i += 1;
            }
            let number = if text.contains('.') {
                text.parse::<f64>().ok().map(|f| json!(f))
            } else {
                text.parse::<i64>().ok().map(|n| json!(n))
            };
            tokens.push(Token::Number(
                number.ok_or_else(|| format!("rule {source:?}: bad number {text:?}"))?,
            ));
        } else if c == '"' || c == '\'' {
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                    text.push(match chars[i] {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                } else {
                    text.push(chars[i]);
                }
                i += 1;
            }
            if i == chars.len() {
                return Err(format!("rule {source:?}: unterminated string"));
            }
            i += 1;
            tokens.push(Token::Str(text));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPERATORS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("rule {source:?}: unsupported character {c:?}"))?;
            tokens.push(Token::Op(op));
            i += op.len();
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Op(o)) if *o == op)
    }

    fn eat(&mut self, op: &str) -> bool {
        let found = self.peek_op(op);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected {op:?}"))
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let condition = self.binary(0)?;
        if self.eat("?") {
            let then = self.expr()?;
            self.expect(":")?;
            let otherwise = self.expr()?;
            return Ok(Expr::Cond(
                Box::new(condition),
                Box::new(then),
                Box::new(otherwise),
            ));
        }
        Ok(condition)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!=", "<", "<=", ">", ">=", "in"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            let op = LEVELS[level].iter().find(|op| {
                self.peek_op(op)
                    || (**op == "in"
                        && matches!(self.tokens.get(self.at), Some(Token::Ident(i)) if i == "in"))
            });
            let Some(op) = op else {
                return Ok(left);
            };
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Unary('!', Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Expr::Unary('-', Box::new(self.unary()?)));
        }
        self.member()
    }

    fn args(&mut self) -> Result<Vec<Expr>, String> {
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.expr()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(args)
    }

    fn member(&mut self) -> Result<Expr, String> {
        let mut expr = self.primary()?;
        loop {
            if self.eat(".") {
                let Some(Token::Ident(name)) = self.tokens.get(self.at).cloned() else {
                    return Err("expected a field name after '.'".into());
                };
                self.at += 1;
                if self.eat("(") {
                    let args = self.args()?;
                    check_function(&name, args.len() + 1)?;
                    expr = Expr::Call(name, Some(Box::new(expr)), args);
                } else {
                    expr = Expr::Select(Box::new(expr), name);
                }
            } else if self.eat("[") {
                let index = self.expr()?;
                self.expect("]")?;
                expr = Expr::Index(Box::new(expr), Box::new(index));
            } else {
                return Ok(expr);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or("unexpected end of rule")?;
        self.at += 1;
        match token {
            Token::Number(n) => Ok(Expr::Literal(n)),
            Token::Str(s) => Ok(Expr::Literal(Value::String(s))),
            Token::Op("(") => {
                let inner = self.expr()?;
                self.expect(")")?;
                Ok(inner)
            }
            Token::Op("[") => {
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.expr()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Expr::List(items))
            }
            Token::Ident(name) => match name.as_str() {
                "true" => Ok(Expr::Literal(json!(true))),
                "false" => Ok(Expr::Literal(json!(false))),
                "null" => Ok(Expr::Literal(Value::Null)),
                "self" | "oldSelf" => Ok(Expr::Ident(name)),
                "has" => {
                    self.expect("(")?;
                    let arg = self.expr()?;
                    self.expect(")")?;
                    match arg {
                        Expr::Select(target, field) => Ok(Expr::Has(target, field)),
                        _ => Err("has() takes a field selection".into()),
                    }
                }
                _ if self.eat("(") => {
                    let args = self.args()?;
                    check_function(&name, args.len())?;
                    Ok(Expr::Call(name, None, args))
                }
                _ => Err(format!("unsupported identifier {name:?}")),
            },
            Token::Op(op) => Err(format!("unexpected {op:?}")),
        }
    }
}

fn check_function(name: &str, arity: usize) -> Result<(), String> {
    match (name, arity) {
        ("size", 1) | ("startsWith" | "endsWith" | "contains" | "matches", 2) => Ok(()),
        _ => Err(format!(
            "unsupported function {name} (this server evaluates plain comparisons)"
        )),
    }
}

struct Scope<'a> {
    value: &'a Value,
    old: Option<&'a Value>,
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, String> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => Ok(x.cmp(&y)),
            _ => number(a)
                .zip(number(b))
                .and_then(|(x, y)| x.partial_cmp(&y))
                .ok_or_else(|| "no such overload".into()),
        },
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        _ => Err("no such overload".into()),
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => compare(a, b) == Ok(Ordering::Equal),
        _ => a == b,
    }
}

fn arithmetic(op: &str, a: &Value, b: &Value) -> Result<Value, String> {
    match (op, a, b) {
        ("+", Value::String(x), Value::String(y)) => Ok(json!(format!("{x}{y}"))),
        ("+", Value::Array(x), Value::Array(y)) => Ok(json!([x.as_slice(), y.as_slice()].concat())),
        (_, Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                let result = match op {
                    "+" => x.checked_add(y),
                    "-" => x.checked_sub(y),
                    "*" => x.checked_mul(y),
                    "/" if y == 0 => return Err("division by zero".into()),
                    "/" => x.checked_div(y),
                    "%" if y == 0 => return Err("modulus by zero".into()),
                    _ => x.checked_rem(y),
                };
                return result
                    .map(|n| json!(n))
                    .ok_or_else(|| "integer overflow".into());
            }
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            Ok(json!(match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                _ => return Err("no such overload".into()),
            }))
        }
        _ => Err("no such overload".into()),
    }
}

fn eval(expr: &Expr, scope: &Scope<'_>) -> Result<Value, String> {
    match expr {
        Expr::Literal(v) => Ok(v.clone()),
        Expr::List(items) => items
            .iter()
            .map(|e| eval(e, scope))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Expr::Ident(name) => match name.as_str() {
            "self" => Ok(scope.value.clone()),
            _ => scope.old.cloned().ok_or_else(|| "no oldSelf".into()),
        },
        Expr::Select(target, field) => match eval(target, scope)? {
            Value::Object(map) => map
                .get(field)
                .cloned()
                .ok_or_else(|| format!("no such key: {field}")),
            _ => Err(format!("no such key: {field}")),
        },
        Expr::Has(target, field) => match eval(target, scope)? {
            Value::Object(map) => Ok(json!(map.contains_key(field))),
            _ => Err(format!("invalid type for field selection: {field}")),
        },
        Expr::Index(target, index) => {
            let (target, index) = (eval(target, scope)?, eval(index, scope)?);
            match (&target, &index) {
                (Value::Array(items), Value::Number(n)) => n
                    .as_u64()
                    .and_then(|i| items.get(i as usize))
                    .cloned()
                    .ok_or_else(|| format!("index out of bounds: {n}")),
                (Value::Object(map), Value::String(key)) => map
                    .get(key)
                    .cloned()
                    .ok_or_else(|| format!("no such key: {key}")),
                _ => Err("no such overload".into()),
            }
        }
        Expr::Call(name, target, args) => {
            let mut values = Vec::new();
            if let Some(target) = target {
                values.push(eval(target, scope)?);
            }
            for arg in args {
                values.push(eval(arg, scope)?);
            }
            call(name, &values)
        }
        Expr::Unary('!', inner) => match eval(inner, scope)? {
            Value::Bool(b) => Ok(json!(!b)),
            _ => Err("no such overload".into()),
        },
        Expr::Unary(_, inner) => arithmetic("-", &json!(0), &eval(inner, scope)?),
        Expr::Binary(op @ ("&&" | "||"), left, right) => {
            let short = *op == "||";
            // CEL's logical operators are commutative over errors: an error on one side
            // is absorbed when the other side decides.
            let left = eval(left, scope);
            if left == Ok(json!(short)) {
                return Ok(json!(short));
            }
            let right = eval(right, scope);
            match (left, right) {
                (_, Ok(v)) if v == json!(short) => Ok(v),
                (Ok(Value::Bool(_)), Ok(Value::Bool(b))) => Ok(json!(b)),
                (Err(e), _) | (_, Err(e)) => Err(e),
                _ => Err("no such overload".into()),
            }
        }
        Expr::Binary(op, left, right) => {
            let (a, b) = (eval(left, scope)?, eval(right, scope)?);
            match *op {
                "==" => Ok(json!(equal(&a, &b))),
                "!=" => Ok(json!(!equal(&a, &b))),
                "<" => compare(&a, &b).map(|o| json!(o.is_lt())),
                "<=" => compare(&a, &b).map(|o| json!(o.is_le())),
                ">" => compare(&a, &b).map(|o| json!(o.is_gt())),
                ">=" => compare(&a, &b).map(|o| json!(o.is_ge())),
                "in" => match &b {
                    Value::Array(items) => Ok(json!(items.iter().any(|i| equal(i, &a)))),
                    Value::Object(map) => {
                        Ok(json!(a.as_str().is_some_and(|k| map.contains_key(k))))
                    }
                    _ => Err("no such overload".into()),
                },
                _ => arithmetic(op, &a, &b),
            }
        }
        Expr::Cond(condition, then, otherwise) => match eval(condition, scope)? {
            Value::Bool(true) => eval(then, scope),
            Value::Bool(false) => eval(otherwise, scope),
            _ => Err("no such overload".into()),
        },
    }
}

fn call(name: &str, values: &[Value]) -> Result<Value, String> {
    match (name, values) {
        ("size", [Value::String(s)]) => Ok(json!(s.chars().count())),
        ("size", [Value::Array(a)]) => Ok(json!(a.len())),
        ("size", [Value::Object(m)]) => Ok(json!(m.len())),
        ("startsWith", [Value::String(s), Value::String(p)]) => {
            Ok(json!(s.starts_with(p.as_str())))
        }
        ("endsWith", [Value::String(s), Value::String(p)]) => Ok(json!(s.ends_with(p.as_str()))),
        ("contains", [Value::String(s), Value::String(p)]) => Ok(json!(s.contains(p.as_str()))),
        ("matches", [Value::String(s), Value::String(p)]) => Regex::new(p)
            .map(|r| json!(r.is_match(s)))
            .map_err(|e| format!("invalid regex: {e}")),
        _ => Err(format!("no such overload: {name}")),
    }
}

#[cfg(test)]
mod tests {
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
