//! Reading a rule: its tokens, and the expression they make (precedence climbing), with
//! functions outside the supported set refused.

use serde_json::{Value, json};

use super::expr::Expr;

/// The expression of a whole rule; trailing tokens are an error.
pub(super) fn parse(source: &str) -> Result<Expr, String> {
    let tokens = lex(source)?;
    let mut parser = Parser { tokens, at: 0 };
    let expr = parser.expr()?;
    if parser.at != parser.tokens.len() {
        return Err(format!(
            "rule {source:?}: unexpected {:?}",
            parser.tokens[parser.at]
        ));
    }
    Ok(expr)
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
