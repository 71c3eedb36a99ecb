//! Evaluating a parsed rule on an object's value (and its old value, on updates).

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Value, json};

use super::expr::Expr;

pub(super) struct Scope<'a> {
    pub(super) value: &'a Value,
    pub(super) old: Option<&'a Value>,
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

pub(super) fn eval(expr: &Expr, scope: &Scope<'_>) -> Result<Value, String> {
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
