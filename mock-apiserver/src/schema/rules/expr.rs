//! A parsed rule: its expression tree.

use serde_json::Value;

#[derive(Debug, Clone)]
pub(super) enum Expr {
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

/// Whether the expression reads `oldSelf` (a transition rule).
pub(super) fn uses_old_self(expr: &Expr) -> bool {
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
