use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::limiters::{Limiters, Traced};
use super::out::{Out, with_nanos};
use super::scripted::{Script, Step};
use super::{ReplayError, ScriptError};
use crate::controller::{Controller, ControllerOptions, Request, SharedReconciler};
use crate::crossplane::{GlobalRateLimited, limit_rest_config};
use crate::go::{GoDuration, format_float};
use crate::instant::add_duration;
use crate::rate::{Limit, Limiter, Reservation};
use crate::workqueue::{
    AddOpts, DelayingQueue, PriorityQueue, Queue, RateLimitingQueue, SharedRateLimiter, WorkQueue,
    client_go_default, controller_runtime_pq_default,
};

/// Yields per settle: each lets every runnable task run; chains of wake-ups in the library are a
/// few hops long, and tokio's cooperative budget splits long runs of work into rounds.
const SETTLE_ROUNDS: usize = 512;

async fn settle() {
    for _ in 0..SETTLE_ROUNDS {
        tokio::task::yield_now().await;
    }
}

enum ScriptQueue {
    Fifo(Queue<String>),
    Delaying(DelayingQueue<String>),
    RateLimiting(RateLimitingQueue<String>),
    Priority(PriorityQueue<String>),
}

impl ScriptQueue {
    fn fifo(&self) -> &Queue<String> {
        match self {
            ScriptQueue::Fifo(q) => q,
            ScriptQueue::Delaying(q) => q.queue(),
            ScriptQueue::RateLimiting(q) => q.delaying().queue(),
            ScriptQueue::Priority(_) => unreachable!("priority queues are handled first"),
        }
    }

    fn delaying(&self) -> Result<&DelayingQueue<String>, ScriptError> {
        match self {
            ScriptQueue::Delaying(q) => Ok(q),
            ScriptQueue::RateLimiting(q) => Ok(q.delaying()),
            _ => Err(ScriptError::new("not a delaying queue")),
        }
    }
}

struct ScriptController {
    controller: Controller<Request>,
    script: Script,
}

struct World {
    out: Out,
    limiters: HashMap<String, Limiter>,
    reservations: HashMap<String, (String, Reservation)>,
    rls: Limiters,
    queues: HashMap<String, ScriptQueue>,
    controllers: HashMap<String, ScriptController>,
    get_limit: Duration,
}

fn get<'a, V>(map: &'a HashMap<String, V>, name: &str, what: &str) -> Result<&'a V, ScriptError> {
    map.get(name)
        .ok_or_else(|| ScriptError::new(format!("no {what} named {name:?}")))
}

fn dur(s: &str) -> Result<GoDuration, ScriptError> {
    GoDuration::parse(s).map_err(|e| ScriptError::new(format!("bad duration {s:?}: {e}")))
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, ScriptError> {
    s.parse()
        .map_err(|_| ScriptError::new(format!("bad {what} {s:?}")))
}

fn arg<'a>(words: &[&'a str], i: usize, what: &str) -> Result<&'a str, ScriptError> {
    words
        .get(i)
        .copied()
        .ok_or_else(|| ScriptError::new(format!("missing {what}")))
}

pub(super) async fn run(script: &str) -> Result<String, ReplayError> {
    let out = Out::new(Instant::now());
    let mut world = World {
        out: out.clone(),
        limiters: HashMap::new(),
        reservations: HashMap::new(),
        rls: Limiters::default(),
        queues: HashMap::new(),
        controllers: HashMap::new(),
        get_limit: Duration::from_secs(3600),
    };
    for (i, raw) in script.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Err(e) = world.command(line).await {
            return Err(ReplayError {
                line: i + 1,
                message: e.0,
                partial: out.take(),
            });
        }
        settle().await;
    }
    for (_, c) in world.controllers.drain() {
        c.controller.shut_down().await;
    }
    Ok(out.take())
}

impl World {
    async fn command(&mut self, line: &str) -> Result<(), ScriptError> {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        let cmd = words[0];
        if cmd == "print" {
            let text = line.strip_prefix("print").unwrap_or_default().trim_start();
            self.out.echo(&format!("# {text}"));
            return Ok(());
        }
        self.out.echo(line);
        // An explicit time for x/time/rate calls.
        let mut at = Instant::now();
        if let Some(last) = words.last()
            && let Some(offset) = last.strip_prefix("at=")
        {
            at = add_duration(Instant::now(), dur(offset)?);
            words.pop();
        }
        let w = &words;
        match cmd {
            "advance" => advance(dur(arg(w, 1, "duration")?)?).await,
            "settle" => {}
            "getlimit" => self.get_limit = dur(arg(w, 1, "duration")?)?.to_std(),
            "limiter" | "allow" | "reserve" | "delay" | "cancel" | "tokens" | "limit" | "burst"
            | "setlimit" | "setburst" | "waitn" => self.rate(cmd, w, at).await?,
            "rl" => self.rls.define(arg(w, 1, "name")?, &w[2..])?,
            "when" => {
                let rl = self.rls.lookup(arg(w, 1, "rate limiter")?)?;
                let d = rl.when(&arg(w, 2, "item")?.to_owned());
                self.out.result(with_nanos(d));
            }
            "whenx" => {
                let rl = self.rls.lookup(arg(w, 1, "rate limiter")?)?;
                let item = arg(w, 2, "item")?.to_owned();
                let n: usize = num(arg(w, 3, "count")?, "count")?;
                let all: Vec<String> = (0..n).map(|_| rl.when(&item).to_string()).collect();
                self.out.result(all.join(" "));
            }
            "forget" if self.queues.contains_key(arg(w, 1, "name")?) => {
                let item = arg(w, 2, "item")?.to_owned();
                match get(&self.queues, w[1], "queue")? {
                    ScriptQueue::RateLimiting(q) => q.forget(&item),
                    ScriptQueue::Priority(q) => q.forget(&item),
                    _ => return Err(ScriptError::new("queue has no rate limiter")),
                }
            }
            "numrequeues" if self.queues.contains_key(arg(w, 1, "name")?) => {
                let item = arg(w, 2, "item")?.to_owned();
                let n = match get(&self.queues, w[1], "queue")? {
                    ScriptQueue::RateLimiting(q) => q.num_requeues(&item),
                    ScriptQueue::Priority(q) => q.num_requeues(&item),
                    _ => return Err(ScriptError::new("queue has no rate limiter")),
                };
                self.out.result(n);
            }
            "forget" => self
                .rls
                .lookup(arg(w, 1, "rate limiter")?)?
                .forget(&arg(w, 2, "item")?.to_owned()),
            "numrequeues" => {
                let rl = self.rls.lookup(arg(w, 1, "rate limiter")?)?;
                self.out
                    .result(rl.num_requeues(&arg(w, 2, "item")?.to_owned()));
            }
            "restconfig" => {
                let c = limit_rest_config(num(arg(w, 1, "rps")?, "rps")?);
                self.out.result(format_args!(
                    "QPS={} Burst={}",
                    format_float(c.qps),
                    c.burst
                ));
            }
            "queue" => self.new_queue(w)?,
            "add" | "addafter" | "addratelimited" | "addopts" | "get" | "len" | "done"
            | "shutdown" | "shutdownwithdrain" | "shuttingdown" => self.queue_op(cmd, w).await?,
            "controller" => self.new_controller(w)?,
            "outcome" | "event" | "cnumrequeues" | "clen" | "stop" => {
                self.controller_op(cmd, w).await?;
            }
            other => return Err(ScriptError::new(format!("unknown command {other:?}"))),
        }
        Ok(())
    }

    async fn rate(&mut self, cmd: &str, w: &[&str], at: Instant) -> Result<(), ScriptError> {
        let name = arg(w, 1, "name")?;
        if cmd == "limiter" {
            let limit = match arg(w, 2, "limit")? {
                "inf" => Limit::INF,
                s => match s.strip_prefix("every=") {
                    Some(d) => Limit::every(dur(d)?),
                    None => Limit(num(s, "limit")?),
                },
            };
            let burst = num(arg(w, 3, "burst")?, "burst")?;
            self.limiters
                .insert(name.to_owned(), Limiter::new(limit, burst));
            return Ok(());
        }
        if matches!(cmd, "delay" | "cancel") {
            let (lim, r) = get(&self.reservations, name, "reservation")?;
            let lim = get(&self.limiters, lim, "limiter")?;
            if cmd == "delay" {
                self.out.result(with_nanos(r.delay_from(at)));
            } else {
                lim.cancel_at(r, at);
            }
            return Ok(());
        }
        let lim = get(&self.limiters, name, "limiter")?.clone();
        let n = |i: usize| -> Result<i64, ScriptError> {
            match w.get(i) {
                Some(s) if *s != "as" => num(s, "count"),
                _ => Ok(1),
            }
        };
        match cmd {
            "allow" => self.out.result(lim.allow_n_at(at, n(2)?)),
            "reserve" => {
                let r = lim.reserve_n_at(at, n(2)?);
                self.out.result(format_args!(
                    "ok={} delay={}",
                    r.ok(),
                    with_nanos(r.delay_from(at))
                ));
                if let Some(i) = w.iter().position(|x| *x == "as") {
                    let label = arg(w, i + 1, "reservation name")?;
                    self.reservations
                        .insert(label.to_owned(), (name.to_owned(), r));
                }
            }
            "tokens" => self.out.result(format_float(lim.tokens_at(at))),
            "limit" => self.out.result(format_float(lim.limit().0)),
            "burst" => self.out.result(lim.burst()),
            "setlimit" => lim.set_limit_at(at, Limit(num(arg(w, 2, "limit")?, "limit")?)),
            "setburst" => lim.set_burst_at(at, num(arg(w, 2, "burst")?, "burst")?),
            "waitn" => {
                let count = n(2)?;
                let deadline = match w.get(3) {
                    Some(d) => Some(add_duration(Instant::now(), dur(d)?)),
                    None => None,
                };
                let start = Instant::now();
                let result = lim.wait_n(count, deadline).await;
                let waited = GoDuration::from_std(start.elapsed());
                let err = match result {
                    Ok(()) => "<nil>".to_owned(),
                    Err(e) => e.to_string(),
                };
                self.out.result(format_args!("err={err} waited={waited}"));
            }
            _ => unreachable!("dispatched above"),
        }
        Ok(())
    }

    fn new_queue(&mut self, w: &[&str]) -> Result<(), ScriptError> {
        let name = arg(w, 1, "name")?;
        let q = match arg(w, 2, "kind")? {
            "fifo" => ScriptQueue::Fifo(Queue::new()),
            "delaying" => ScriptQueue::Delaying(DelayingQueue::new()),
            "ratelimiting" => ScriptQueue::RateLimiting(RateLimitingQueue::new(
                self.rls.lookup(arg(w, 3, "rate limiter")?)?,
            )),
            "pq" => {
                let rl: SharedRateLimiter<String> = match w.get(3) {
                    Some(r) => self.rls.lookup(r)?,
                    None => Arc::new(controller_runtime_pq_default()),
                };
                ScriptQueue::Priority(PriorityQueue::new(rl))
            }
            other => return Err(ScriptError::new(format!("unknown queue kind {other:?}"))),
        };
        self.queues.insert(name.to_owned(), q);
        Ok(())
    }

    async fn queue_op(&mut self, cmd: &str, w: &[&str]) -> Result<(), ScriptError> {
        let q = get(&self.queues, arg(w, 1, "queue")?, "queue")?;
        let item = || arg(w, 2, "item").map(str::to_owned);
        if let ScriptQueue::Priority(pq) = q {
            match cmd {
                "add" => {
                    pq.add_with_opts(AddOpts::default(), w[2..].iter().map(|s| (*s).to_owned()))
                }
                "addafter" => pq.add_after(item()?, dur(arg(w, 3, "duration")?)?),
                "addratelimited" => pq.add_rate_limited(item()?),
                "addopts" => {
                    let mut opts = AddOpts::default();
                    for o in &w[3..] {
                        if let Some(d) = o.strip_prefix("after=") {
                            opts.after = dur(d)?;
                        } else if let Some(p) = o.strip_prefix("priority=") {
                            opts.priority = num(p, "priority")?;
                        } else if *o == "ratelimited" {
                            opts.rate_limited = true;
                        } else {
                            return Err(ScriptError::new(format!("unknown add option {o:?}")));
                        }
                    }
                    pq.add_with_opts(opts, [item()?]);
                }
                "get" => {
                    let got = tokio::time::timeout(self.get_limit, pq.get_with_priority())
                        .await
                        .map_err(|_| ScriptError::new("get waited past its limit"))?;
                    let (item, prio, shut) = match got {
                        Some((i, p)) => (i, p, false),
                        None => (String::new(), 0, true),
                    };
                    self.out.result(format_args!(
                        "item={item:?} priority={prio} shutdown={shut}"
                    ));
                }
                "len" => self.out.result(pq.len()),
                "done" => pq.done(&item()?),
                "shutdown" | "shutdownwithdrain" => pq.shut_down(),
                "shuttingdown" => self.out.result(pq.shutting_down()),
                _ => unreachable!("dispatched above"),
            }
            return Ok(());
        }
        match cmd {
            "add" => {
                for x in &w[2..] {
                    q.fifo().add((*x).to_owned());
                }
            }
            "addafter" => q
                .delaying()?
                .add_after(item()?, dur(arg(w, 3, "duration")?)?),
            "addratelimited" => match q {
                ScriptQueue::RateLimiting(rq) => rq.add_rate_limited(item()?),
                _ => return Err(ScriptError::new("not a rate-limiting queue")),
            },
            "addopts" => return Err(ScriptError::new("addopts is for priority queues")),
            "get" => {
                let got = tokio::time::timeout(self.get_limit, q.fifo().get())
                    .await
                    .map_err(|_| ScriptError::new("get waited past its limit"))?;
                let (item, shut) = match got {
                    Some(i) => (i, false),
                    None => (String::new(), true),
                };
                self.out
                    .result(format_args!("item={item:?} shutdown={shut}"));
            }
            "len" => self.out.result(q.fifo().len()),
            "done" => q.fifo().done(&item()?),
            "shutdown" => match q {
                ScriptQueue::Fifo(f) => f.shut_down(),
                other => other.delaying()?.shut_down(),
            },
            "shutdownwithdrain" => {
                let fifo = q.fifo().clone();
                let waiting = q.delaying().ok().cloned();
                let name = w[1].to_owned();
                let out = self.out.clone();
                self.out.result("started");
                tokio::spawn(async move {
                    match waiting {
                        Some(d) => d.shut_down_with_drain().await,
                        None => fifo.shut_down_with_drain().await,
                    }
                    out.event(format_args!("{name} ShutDownWithDrain returned"));
                });
            }
            "shuttingdown" => self.out.result(q.fifo().shutting_down()),
            _ => unreachable!("dispatched above"),
        }
        Ok(())
    }

    fn new_controller(&mut self, w: &[&str]) -> Result<(), ScriptError> {
        let name = arg(w, 1, "name")?;
        let (mut workers, mut pq, mut rl, mut global, mut took, mut trace) =
            (1usize, true, None, None, GoDuration::ZERO, false);
        for o in &w[2..] {
            match o.split_once('=') {
                Some(("workers", n)) => workers = num(n, "workers")?,
                Some(("pq", b)) => pq = num(b, "pq flag")?,
                Some(("rl", "crdefault")) => rl = None,
                Some(("rl", r)) => rl = Some(r.to_owned()),
                Some(("xpglobal", g)) => global = Some(g.to_owned()),
                Some(("took", d)) => took = dur(d)?,
                None if *o == "trace" => trace = true,
                _ => return Err(ScriptError::new(format!("unknown controller option {o:?}"))),
            }
        }
        let mut limiter: SharedRateLimiter<Request> = match (&rl, pq) {
            (Some(r), _) => self.rls.fresh(r)?,
            (None, true) => Arc::new(controller_runtime_pq_default()),
            (None, false) => Arc::new(client_go_default()),
        };
        if trace {
            limiter = Arc::new(Traced {
                name: format!("{name}.rl"),
                inner: limiter,
                out: self.out.clone(),
            });
        }
        let queue = if pq {
            WorkQueue::Priority(PriorityQueue::new(limiter))
        } else {
            WorkQueue::Classic(RateLimitingQueue::new(limiter))
        };
        self.out
            .result(format_args!("queue type {}", queue.go_type_name()));
        let script = Script::new(name, self.out.clone(), took);
        let mut reconciler: SharedReconciler<Request> = script.inner();
        if let Some(g) = global {
            let mut g_rl = self.rls.lookup(&g)?;
            if trace {
                g_rl = Arc::new(Traced {
                    name: g.clone(),
                    inner: g_rl,
                    out: self.out.clone(),
                });
            }
            reconciler = Arc::new(GlobalRateLimited::new(name, reconciler, g_rl));
        }
        let controller = Controller::start(
            ControllerOptions::new(name, queue).workers(workers),
            script.traced(reconciler),
        );
        self.controllers
            .insert(name.to_owned(), ScriptController { controller, script });
        Ok(())
    }

    async fn controller_op(&mut self, cmd: &str, w: &[&str]) -> Result<(), ScriptError> {
        let name = arg(w, 1, "controller")?;
        if cmd == "stop" {
            let c = self
                .controllers
                .remove(name)
                .ok_or_else(|| ScriptError::new(format!("no controller named {name:?}")))?;
            c.controller.shut_down().await;
            return Ok(());
        }
        let c = get(&self.controllers, name, "controller")?;
        let queue = c.controller.queue();
        match cmd {
            "outcome" => {
                let steps = w[3..]
                    .iter()
                    .map(|s| Step::parse(s))
                    .collect::<Result<Vec<_>, _>>()?;
                c.script
                    .push_outcomes(Request::parse(arg(w, 2, "item")?), steps);
            }
            "event" => {
                let mut opts = AddOpts::default();
                if let Some(p) = w.get(3) {
                    let p = p
                        .strip_prefix("priority=")
                        .ok_or_else(|| ScriptError::new(format!("unknown event option {p:?}")))?;
                    opts.priority = num(p, "priority")?;
                }
                queue.add_with_opts(opts, Request::parse(arg(w, 2, "item")?));
            }
            "cnumrequeues" => {
                let n = queue.num_requeues(&Request::parse(arg(w, 2, "item")?));
                self.out.result(n);
            }
            "clen" => self.out.result(queue.len()),
            _ => unreachable!("dispatched above"),
        }
        Ok(())
    }
}

/// Sleeps `d` of tokio time, whole milliseconds through the timer wheel (so every timer in the
/// window fires at its own instant), the sub-millisecond rest by moving the clock.
async fn advance(d: GoDuration) {
    let d = d.to_std();
    let whole = Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    if !whole.is_zero() {
        tokio::time::sleep(whole).await;
    }
    let rest = d - whole;
    if !rest.is_zero() {
        tokio::time::advance(rest).await;
    }
    settle().await;
}
