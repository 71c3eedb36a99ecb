//! The script runner: one world of named limiters, queues and controllers on one virtual clock,
//! and the commands that are neither rate nor queue commands.

use std::collections::HashMap;
use std::sync::Arc;

use super::args::{Located, Result, Words};
use super::limiters::{Limiters, Traced};
use super::out::{Out, with_nanos};
use super::scripted::{Script, Step};
use super::world::{DEFAULT_GET_LIMIT, RateState, ScriptController, World};
use super::{CommandError, ReplayError};
use crate::clock::{Clock, VirtualClock};
use crate::controller::{Controller, ControllerOptions, Request, SharedReconciler};
use crate::crossplane::{GlobalRateLimited, limit_rest_config};
use crate::go::{GoDuration, format_float32};
use crate::instant::add_duration;
use crate::workqueue::{
    AddOpts, PriorityQueue, QueueConfig, RateLimitingQueue, SharedRateLimiter, WorkQueue,
    client_go_default_with_clock, controller_runtime_pq_default,
};

pub(super) async fn run(script: &str) -> std::result::Result<String, ReplayError> {
    let clock = VirtualClock::new();
    let out = Out::new(Clock::from(&clock));
    let mut world = World {
        out: out.clone(),
        rate: RateState::default(),
        rls: Limiters::new(Clock::from(&clock)),
        queues: HashMap::new(),
        controllers: Vec::new(),
        breakers: HashMap::new(),
        get_limit: DEFAULT_GET_LIMIT,
        clock,
    };
    for (i, raw) in script.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Err(Located { column, error }) = world.command(raw).await {
            return Err(ReplayError {
                line: i + 1,
                column,
                error,
                partial: out.take(),
            });
        }
        crate::clock::settle().await;
    }
    world.stop_all().await;
    Ok(out.take())
}

impl World {
    async fn command(&mut self, raw: &str) -> Result<()> {
        let mut w = Words::split(raw);
        let cmd = w.get(0, "a command")?;
        if cmd.text == "print" {
            let text = raw.trim().strip_prefix("print").unwrap_or_default();
            self.out.echo(&format!("# {}", text.trim_start()));
            return Ok(());
        }
        self.out.echo(raw.trim());
        // An explicit time for x/time/rate calls.
        let mut at = self.clock.now();
        let explicit_at = w.pop_option("at");
        if let Some(offset) = explicit_at {
            at = add_duration(at, offset.duration("at=")?);
        }
        let w = &w;
        let name = cmd.text;
        match name {
            "advance" => {
                let d = w.get(1, "a duration")?.duration("advance")?;
                self.clock.advance(d.to_std()).await;
            }
            "settle" => {}
            "getlimit" => self.get_limit = w.get(1, "a duration")?.duration("getlimit")?,
            "limiter" | "allow" | "reserve" | "delay" | "cancel" | "tokens" | "limit" | "burst"
            | "setlimit" | "setburst" | "waitn" => self.rate(name, w, at).await?,
            "rl" => {
                let rl = w.get(1, "a rate limiter name")?;
                let kind = w.get(2, "a rate limiter kind")?;
                self.rls.define(rl.text, kind, w.from(3))?;
            }
            "when" => {
                let rl = self.rls.lookup(w.get(1, "a rate limiter name")?)?;
                let d = rl.when(&w.get(2, "an item")?.text.to_owned());
                self.out.result(with_nanos(d));
            }
            "whenx" => {
                let rl = self.rls.lookup(w.get(1, "a rate limiter name")?)?;
                let item = w.get(2, "an item")?.text.to_owned();
                let n = w.get(3, "a count")?.int("an integer count")?;
                let all: Vec<String> = (0..n).map(|_| rl.when(&item).to_string()).collect();
                self.out.result(all.join(" "));
            }
            "forget" | "numrequeues" if self.queues.contains_key(w.get(1, "a name")?.text) => {
                self.queue_op(
                    if name == "forget" {
                        "forget"
                    } else {
                        "numrequeues"
                    },
                    w,
                )
                .await?;
            }
            "forget" => {
                let rl = self.rls.lookup(w.get(1, "a rate limiter name")?)?;
                rl.forget(&w.get(2, "an item")?.text.to_owned());
            }
            "numrequeues" => {
                let rl = self.rls.lookup(w.get(1, "a rate limiter name")?)?;
                let n = rl.num_requeues(&w.get(2, "an item")?.text.to_owned());
                self.out.result(n);
            }
            "restconfig" => {
                let rps = w.get(1, "a rate")?.int("an integer rate per second")?;
                let c = limit_rest_config(rps);
                self.out.result(format_args!(
                    "QPS={} Burst={}",
                    format_float32(c.qps),
                    c.burst
                ));
            }
            "queue" => self.new_queue(w)?,
            "add" => self.queue_op("add", w).await?,
            "addafter" => self.queue_op("addafter", w).await?,
            "addratelimited" => self.queue_op("addratelimited", w).await?,
            "addopts" => self.queue_op("addopts", w).await?,
            "get" => self.queue_op("get", w).await?,
            "len" => self.queue_op("len", w).await?,
            "done" => self.queue_op("done", w).await?,
            "shutdown" => self.queue_op("shutdown", w).await?,
            "shutdownwithdrain" => self.queue_op("shutdownwithdrain", w).await?,
            "shuttingdown" => self.queue_op("shuttingdown", w).await?,
            "controller" => self.new_controller(w)?,
            "breaker" | "bevent" | "bself" | "bstate" | "bcond" | "btokens" | "btargets"
            | "breset" | "bmetrics" => {
                if let Some(offset) = explicit_at {
                    // The breaker reads time.Now(): there is no explicit time to pass.
                    return Err(offset.unknown("no at= on a breaker command"));
                }
                self.breaker(name, w)?;
            }
            "outcome" | "event" | "cnumrequeues" | "clen" | "stop" => {
                self.controller_op(name, w).await?;
            }
            _ => {
                return Err(cmd.error(CommandError::UnknownCommand(name.to_owned())));
            }
        }
        Ok(())
    }

    /// `controller C [workers=N] [pq=BOOL] [rl=R|crdefault] [xpglobal=R] [took=D] [trace]`.
    fn new_controller(&mut self, w: &Words<'_>) -> Result<()> {
        let name = w.get(1, "a controller name")?.text;
        let (mut workers, mut pq, mut rl, mut global, mut took, mut trace) =
            (1i64, true, None, None, GoDuration::ZERO, false);
        for o in w.from(2) {
            if let Some(n) = o.value_of("workers") {
                workers = n.int("an integer count of workers")?;
            } else if let Some(b) = o.value_of("pq") {
                pq = b.bool("true or false")?;
            } else if let Some(r) = o.value_of("rl") {
                rl = (r.text != "crdefault").then_some(r);
            } else if let Some(g) = o.value_of("xpglobal") {
                global = Some(g);
            } else if let Some(d) = o.value_of("took") {
                took = d.duration("took=")?;
            } else if o.text == "trace" {
                trace = true;
            } else {
                return Err(o.unknown(
                    "a controller option: workers=N, pq=BOOL, rl=NAME, xpglobal=NAME, took=D or trace",
                ));
            }
        }
        let clock = Clock::from(&self.clock);
        let mut limiter: SharedRateLimiter<Request> = match (rl, pq) {
            (Some(r), _) => self.rls.fresh(r)?,
            (None, true) => Arc::new(controller_runtime_pq_default()),
            (None, false) => Arc::new(client_go_default_with_clock(clock.clone())),
        };
        if trace {
            limiter = Arc::new(Traced {
                name: format!("{name}.rl"),
                inner: limiter,
                out: self.out.clone(),
            });
        }
        let config = QueueConfig::default().clock(clock.clone());
        let queue = if pq {
            WorkQueue::Priority(PriorityQueue::with_config(limiter, config))
        } else {
            WorkQueue::Classic(RateLimitingQueue::with_config(limiter, config))
        };
        self.out
            .result(format_args!("queue type {}", queue.go_type_name()));
        let script = Script::new(name, self.out.clone(), took, clock.clone());
        let mut reconciler: SharedReconciler<Request> = script.inner();
        if let Some(g) = global {
            let mut g_rl = self.rls.lookup(g)?;
            if trace {
                g_rl = Arc::new(Traced {
                    name: g.text.to_owned(),
                    inner: g_rl,
                    out: self.out.clone(),
                });
            }
            reconciler = Arc::new(GlobalRateLimited::new(name, reconciler, g_rl).with_clock(clock));
        }
        // controller-runtime: MaxConcurrentReconciles <= 0 falls back to 1.
        let workers = usize::try_from(workers).unwrap_or(0).max(1);
        let controller = Controller::start(
            ControllerOptions::new(name, queue).workers(workers),
            script.traced(reconciler),
        );
        self.controllers
            .push((name.to_owned(), ScriptController { controller, script }));
        Ok(())
    }

    async fn controller_op(&mut self, cmd: &str, w: &Words<'_>) -> Result<()> {
        let word = w.get(1, "a controller name")?;
        let Some(i) = self.controllers.iter().position(|(n, _)| n == word.text) else {
            return Err(word.error(CommandError::NotDefined {
                kind: "controller",
                name: word.text.to_owned(),
            }));
        };
        if cmd == "stop" {
            let (_, c) = self.controllers.remove(i);
            return self
                .clock
                .run_until(c.controller.shut_down(), None)
                .await
                .map_err(|_| w.at_end(CommandError::Deadlock("stop")));
        }
        let c = &self.controllers[i].1;
        let queue = c.controller.queue();
        match cmd {
            "outcome" => {
                let item = w.get(2, "an item")?;
                let steps = w
                    .from(3)
                    .iter()
                    .map(|s| Step::parse(*s))
                    .collect::<Result<Vec<_>>>()?;
                c.script.push_outcomes(Request::parse(item.text), steps);
            }
            "event" => {
                let item = w.get(2, "an item")?;
                let mut opts = AddOpts::default();
                if let Some(o) = w.opt(3) {
                    let p = o
                        .value_of("priority")
                        .ok_or_else(|| o.unknown("an event option: priority=N"))?;
                    opts.priority = p.priority()?;
                }
                queue.add_with_opts(opts, Request::parse(item.text));
            }
            "cnumrequeues" => {
                let n = queue.num_requeues(&Request::parse(w.get(2, "an item")?.text));
                self.out.result(n);
            }
            "clen" => self.out.result(queue.len()),
            _ => unreachable!("dispatched above"),
        }
        Ok(())
    }

    /// At the end of the script: shut every controller's queue down, then let their workers
    /// finish what they are reconciling, in virtual time.
    async fn stop_all(&mut self) {
        for (_, c) in &self.controllers {
            c.controller.queue().shut_down();
        }
        for (_, c) in self.controllers.drain(..) {
            // A worker blocked forever cannot be waited for; its controller is dropped.
            let _ = self.clock.run_until(c.controller.shut_down(), None).await;
        }
    }
}
