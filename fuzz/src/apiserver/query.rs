//! Query parameters: what list, watch and write requests take, label and field selectors
//! among them, and how they are written.

use arbitrary::Arbitrary;

use super::words::Word;
use crate::pick::{Pick, vocabulary};

vocabulary!(
    /// Field selector paths.
    FieldPaths,
    8,
    [
        "metadata.name", "metadata.namespace", "type", "status.phase", "involvedObject.name",
        "involvedObject.kind", "involvedObject.namespace", "reason", "regarding.name", "spec.x",
    ]
);
/// A field selector path.
pub type FieldPath = Pick<FieldPaths>;

/// A query parameter.
#[derive(Arbitrary, Debug)]
pub enum Param {
    LabelSelector(LabelSelector),
    FieldSelector(Vec<(FieldPath, FieldOp, Word)>),
    Watch(Word),
    ResourceVersion(Word),
    ResourceVersionMatch(Word),
    Limit(i64),
    Continue(String),
    TimeoutSeconds(i32),
    AllowWatchBookmarks(bool),
    SendInitialEvents(bool),
    DryRun(Word),
    FieldManager(Word),
    Force(bool),
    PropagationPolicy(Word),
    Since(u64),
    Other(Word, Word),
    /// Text appended to the query as it is.
    Raw(String),
}

/// A label selector.
#[derive(Arbitrary, Debug)]
pub enum LabelSelector {
    Requirements(Vec<Requirement>),
    Raw(String),
}

/// One label requirement.
#[derive(Arbitrary, Debug)]
pub struct Requirement {
    pub key: Word,
    pub op: LabelOp,
    pub values: Vec<Word>,
}

/// A label selector operator.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum LabelOp {
    Eq,
    DoubleEq,
    NotEq,
    In,
    NotIn,
    Exists,
    NotExists,
    Gt,
    Lt,
}

/// A field selector operator.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum FieldOp {
    Eq,
    DoubleEq,
    NotEq,
}

/// The query: pairs to form-encode, and raw text to append.
pub(super) fn query(params: &[Param]) -> (Vec<(String, String)>, String) {
    let mut pairs = Vec::new();
    let mut raw = String::new();
    for p in params {
        let (key, value) = match p {
            Param::LabelSelector(s) => ("labelSelector", label_selector(s)),
            Param::FieldSelector(reqs) => {
                let text: Vec<String> = reqs
                    .iter()
                    .map(|(path, op, value)| {
                        let op = match op {
                            FieldOp::Eq => "=",
                            FieldOp::DoubleEq => "==",
                            FieldOp::NotEq => "!=",
                        };
                        format!("{}{op}{}", path.as_str(), value.as_str())
                    })
                    .collect();
                ("fieldSelector", text.join(","))
            }
            Param::Watch(w) => ("watch", w.as_str().to_owned()),
            Param::ResourceVersion(w) => ("resourceVersion", w.as_str().to_owned()),
            Param::ResourceVersionMatch(w) => ("resourceVersionMatch", w.as_str().to_owned()),
            Param::Limit(n) => ("limit", n.to_string()),
            Param::Continue(t) => ("continue", t.clone()),
            Param::TimeoutSeconds(n) => ("timeoutSeconds", n.to_string()),
            Param::AllowWatchBookmarks(b) => ("allowWatchBookmarks", b.to_string()),
            Param::SendInitialEvents(b) => ("sendInitialEvents", b.to_string()),
            Param::DryRun(w) => ("dryRun", w.as_str().to_owned()),
            Param::FieldManager(w) => ("fieldManager", w.as_str().to_owned()),
            Param::Force(b) => ("force", b.to_string()),
            Param::PropagationPolicy(w) => ("propagationPolicy", w.as_str().to_owned()),
            Param::Since(n) => ("since", n.to_string()),
            Param::Other(k, v) => {
                pairs.push((k.as_str().to_owned(), v.as_str().to_owned()));
                continue;
            }
            Param::Raw(t) => {
                raw.push_str(t);
                continue;
            }
        };
        pairs.push((key.to_owned(), value));
    }
    (pairs, raw)
}

fn label_selector(s: &LabelSelector) -> String {
    let requirements = match s {
        LabelSelector::Raw(t) => return t.clone(),
        LabelSelector::Requirements(r) => r,
    };
    let text: Vec<String> = requirements
        .iter()
        .map(|r| {
            let key = r.key.as_str();
            let first = r.values.first().map_or("", Word::as_str);
            let set = || {
                r.values
                    .iter()
                    .map(Word::as_str)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            match r.op {
                LabelOp::Eq => format!("{key}={first}"),
                LabelOp::DoubleEq => format!("{key}=={first}"),
                LabelOp::NotEq => format!("{key}!={first}"),
                LabelOp::In => format!("{key} in ({})", set()),
                LabelOp::NotIn => format!("{key} notin ({})", set()),
                LabelOp::Exists => key.to_owned(),
                LabelOp::NotExists => format!("!{key}"),
                LabelOp::Gt => format!("{key}>{first}"),
                LabelOp::Lt => format!("{key}<{first}"),
            }
        })
        .collect();
    text.join(",")
}
