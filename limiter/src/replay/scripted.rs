//! The scripted reconciler of `controller` and its trace of every pass.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::ScriptError;
use super::limiters::Show;
use super::out::Out;
use crate::controller::{
    Action, BoxFuture, ReconcileError, ReconcileResult, Reconciler, Request, SharedReconciler,
};
use crate::go::GoDuration;

/// One scripted outcome: `kind[:D][@took=D][@prio=N]`.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    kind: &'static str,
    arg: Option<GoDuration>,
    took: Option<GoDuration>,
    priority: Option<i32>,
}

impl Step {
    pub(crate) fn parse(text: &str) -> Result<Step, ScriptError> {
        let mut parts = text.split('@');
        let head = parts.next().unwrap_or_default();
        let (kind, arg) = match head.split_once(':') {
            Some((k, a)) => (
                k,
                Some(GoDuration::parse(a).map_err(|e| ScriptError::new(e.to_string()))?),
            ),
            None => (head, None),
        };
        let kind = match kind {
            "ok" => "ok",
            "err" => "err",
            "terminal" => "terminal",
            "requeue" => "requeue",
            "after" => "after",
            "errafter" => "errafter",
            other => return Err(ScriptError::new(format!("unknown outcome {other:?}"))),
        };
        if matches!(kind, "after" | "errafter") != arg.is_some() {
            return Err(ScriptError::new(format!(
                "outcome {kind:?} takes a duration exactly when it is after or errafter"
            )));
        }
        let mut step = Step {
            kind,
            arg,
            took: None,
            priority: None,
        };
        for opt in parts {
            if let Some(d) = opt.strip_prefix("took=") {
                step.took =
                    Some(GoDuration::parse(d).map_err(|e| ScriptError::new(e.to_string()))?);
            } else if let Some(p) = opt.strip_prefix("prio=") {
                step.priority = Some(
                    p.parse()
                        .map_err(|_| ScriptError::new(format!("bad priority {p:?}")))?,
                );
            } else {
                return Err(ScriptError::new(format!("unknown outcome option {opt:?}")));
            }
        }
        Ok(step)
    }

    fn ok() -> Step {
        Step {
            kind: "ok",
            arg: None,
            took: None,
            priority: None,
        }
    }

    fn result(&self) -> ReconcileResult {
        let action = match self.kind {
            "requeue" => Action::requeue(),
            "after" | "errafter" => Action::requeue_after(self.arg.unwrap_or_default().to_std()),
            _ => Action::done(),
        };
        let action = match self.priority {
            Some(p) => action.with_priority(p),
            None => action,
        };
        match self.kind {
            "err" | "errafter" => Err(ReconcileError::new("scripted error").with_result(action)),
            "terminal" => {
                Err(ReconcileError::terminal("scripted terminal error").with_result(action))
            }
            _ => Ok(action),
        }
    }
}

#[derive(Default)]
struct Book {
    outcomes: HashMap<Request, VecDeque<Step>>,
    passes: HashMap<Request, u64>,
    inner_runs: HashMap<Request, u64>,
    inner_ran: HashMap<Request, bool>,
}

/// Shared by the scripted inner reconciler and the tracer of one controller.
#[derive(Clone)]
pub(crate) struct Script {
    name: String,
    out: Out,
    took: GoDuration,
    book: Arc<Mutex<Book>>,
}

impl Script {
    pub(crate) fn new(name: &str, out: Out, took: GoDuration) -> Self {
        Script {
            name: name.to_owned(),
            out,
            took,
            book: Arc::default(),
        }
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn push_outcomes(&self, item: Request, steps: Vec<Step>) {
        self.book().outcomes.entry(item).or_default().extend(steps);
    }

    /// The reconciler the controller sees: trace around `inner` (which may be a middleware
    /// around the scripted reconciler).
    pub(crate) fn traced(&self, inner: SharedReconciler<Request>) -> SharedReconciler<Request> {
        Arc::new(Tracer {
            script: self.clone(),
            inner,
        })
    }

    pub(crate) fn inner(&self) -> SharedReconciler<Request> {
        Arc::new(Inner {
            script: self.clone(),
        })
    }
}

struct Inner {
    script: Script,
}

impl Reconciler<Request> for Inner {
    fn reconcile(&self, item: Request) -> BoxFuture<'_, ReconcileResult> {
        Box::pin(async move {
            let (n, step) = {
                let mut book = self.script.book();
                let n = book.inner_runs.entry(item.clone()).or_default();
                *n += 1;
                let n = *n;
                book.inner_ran.insert(item.clone(), true);
                let step = book
                    .outcomes
                    .get_mut(&item)
                    .and_then(VecDeque::pop_front)
                    .unwrap_or_else(Step::ok);
                (n, step)
            };
            let took = step.took.unwrap_or(self.script.took);
            self.script.out.event(format_args!(
                "{} inner reconcile #{n} {} start (scripted: {} took={took})",
                self.script.name,
                item.show(),
                step.kind
            ));
            if took > GoDuration::ZERO {
                tokio::time::sleep(Duration::from_nanos(took.as_nanos() as u64)).await;
            }
            step.result()
        })
    }
}

struct Tracer {
    script: Script,
    inner: SharedReconciler<Request>,
}

fn describe(result: &ReconcileResult) -> String {
    match result {
        Err(e) if e.is_terminal() => "terminal-error".to_owned(),
        Err(e) => match e.result().requeue_after {
            Some(d) => format!("error (+RequeueAfter={}, ignored)", GoDuration::from_std(d)),
            None => "error".to_owned(),
        },
        Ok(a) => match a.requeue_after {
            Some(d) => format!("RequeueAfter={}", GoDuration::from_std(d)),
            None if a.requeue => "Requeue=true".to_owned(),
            None => "ok".to_owned(),
        },
    }
}

impl Reconciler<Request> for Tracer {
    fn reconcile(&self, item: Request) -> BoxFuture<'_, ReconcileResult> {
        Box::pin(async move {
            let pass = {
                let mut book = self.script.book();
                book.inner_ran.insert(item.clone(), false);
                let n = book.passes.entry(item.clone()).or_default();
                *n += 1;
                *n
            };
            let name = &self.script.name;
            let shown = item.show();
            self.script
                .out
                .event(format_args!("{name} reconcile #{pass} {shown} popped"));
            let result = self.inner.reconcile(item.clone()).await;
            let ran = self
                .script
                .book()
                .inner_ran
                .get(&item)
                .copied()
                .unwrap_or(false);
            let how = if ran {
                "inner ran"
            } else {
                "inner NOT called (crossplane global limiter)"
            };
            self.script.out.event(format_args!(
                "{name} reconcile #{pass} {shown} -> {}; {how}",
                describe(&result)
            ));
            result
        })
    }
}
