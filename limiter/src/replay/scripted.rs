//! The scripted reconciler of `controller` and its trace of every pass.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use super::args::{Result, Word};
use super::limiters::Show;
use super::out::Out;
use crate::clock::Clock;
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
    priority: Option<i64>,
}

/// The part of `word` from byte `offset` to `end`, as a word of its own.
fn part<'a>(word: Word<'a>, offset: usize, end: usize) -> Word<'a> {
    Word {
        text: &word.text[offset..end],
        column: word.column + word.text[..offset].chars().count(),
    }
}

impl Step {
    pub(crate) fn parse(word: Word<'_>) -> Result<Step> {
        let text = word.text;
        let head_end = text.find('@').unwrap_or(text.len());
        let (kind_end, arg) = match text[..head_end].find(':') {
            Some(colon) => (
                colon,
                Some(part(word, colon + 1, head_end).duration("the outcome's duration")?),
            ),
            None => (head_end, None),
        };
        let kind_word = part(word, 0, kind_end);
        let kind = match kind_word.text {
            "ok" => "ok",
            "err" => "err",
            "terminal" => "terminal",
            "requeue" => "requeue",
            "after" => "after",
            "errafter" => "errafter",
            _ => {
                return Err(kind_word
                    .unknown("an outcome: ok, err, terminal, requeue, after:D or errafter:D"));
            }
        };
        if matches!(kind, "after" | "errafter") != arg.is_some() {
            return Err(
                kind_word.unknown("a duration (after:D, errafter:D) exactly on after and errafter")
            );
        }
        let mut step = Step {
            kind,
            arg,
            took: None,
            priority: None,
        };
        let mut offset = head_end;
        while offset < text.len() {
            let start = offset + 1;
            let end = text[start..].find('@').map_or(text.len(), |i| start + i);
            let opt = part(word, start, end);
            if let Some(d) = opt.value_of("took") {
                step.took = Some(d.duration("took=")?);
            } else if let Some(p) = opt.value_of("prio") {
                step.priority = Some(p.priority()?);
            } else {
                return Err(opt.unknown("an outcome option: @took=D or @prio=N"));
            }
            offset = end;
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
    clock: Clock,
    book: Arc<Mutex<Book>>,
}

impl Script {
    pub(crate) fn new(name: &str, out: Out, took: GoDuration, clock: Clock) -> Self {
        Script {
            name: name.to_owned(),
            out,
            took,
            clock,
            book: Arc::default(),
        }
    }

    pub(crate) fn push_outcomes(&self, item: Request, steps: Vec<Step>) {
        self.book
            .lock()
            .outcomes
            .entry(item)
            .or_default()
            .extend(steps);
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
                let mut book = self.script.book.lock();
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
                self.script.clock.sleep(took.to_std()).await;
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
                let mut book = self.script.book.lock();
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
                .book
                .lock()
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
