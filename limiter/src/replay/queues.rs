//! The queue commands: `queue`, `add`, `addafter`, `addratelimited`, `addopts`, `get`, `len`,
//! `done`, `forget`, `numrequeues`, `shutdown`, `shutdownwithdrain`, `shuttingdown`.

use std::sync::Arc;

use super::CommandError;
use super::args::{Result, Word, Words};
use super::world::{ScriptQueue, World};
use crate::clock::{Clock, Stalled};
use crate::workqueue::{
    AddOpts, DelayingQueue, PriorityQueue, Queue, QueueConfig, RateLimitingQueue,
    SharedRateLimiter, controller_runtime_pq_default,
};

impl ScriptQueue {
    /// The client-go queue underneath (not for the priority queue).
    fn fifo(&self) -> Option<&Queue<String>> {
        match self {
            ScriptQueue::Fifo(q) => Some(q),
            ScriptQueue::Delaying(q) => Some(q.queue()),
            ScriptQueue::RateLimiting(q) => Some(q.delaying().queue()),
            ScriptQueue::Priority(_) => None,
        }
    }

    fn delaying(&self) -> Option<&DelayingQueue<String>> {
        match self {
            ScriptQueue::Delaying(q) => Some(q),
            ScriptQueue::RateLimiting(q) => Some(q.delaying()),
            _ => None,
        }
    }

    /// `ShutDownWithDrain()`: the priority queue's is its plain `ShutDown`.
    async fn shut_down_with_drain(self) {
        match self {
            ScriptQueue::Fifo(q) => q.shut_down_with_drain().await,
            ScriptQueue::Delaying(q) => q.shut_down_with_drain().await,
            ScriptQueue::RateLimiting(q) => q.delaying().shut_down_with_drain().await,
            ScriptQueue::Priority(q) => q.shut_down(),
        }
    }
}

fn wrong(word: Word<'_>, command: &'static str, needs: &'static str) -> super::args::Located {
    word.error(CommandError::WrongKind { command, needs })
}

impl World {
    fn queue(&self, word: Word<'_>) -> Result<ScriptQueue> {
        self.queues.get(word.text).cloned().ok_or_else(|| {
            word.error(CommandError::NotDefined {
                kind: "queue",
                name: word.text.to_owned(),
            })
        })
    }

    /// `queue Q fifo|delaying|ratelimiting R|pq [R]`.
    pub(crate) fn new_queue(&mut self, w: &Words<'_>) -> Result<()> {
        let name = w.get(1, "a queue name")?;
        let config = QueueConfig::default().clock(Clock::from(&self.clock));
        let kind = w.get(2, "a queue kind")?;
        let q = match kind.text {
            "fifo" => ScriptQueue::Fifo(Queue::with_config(config)),
            "delaying" => ScriptQueue::Delaying(DelayingQueue::with_config(config)),
            "ratelimiting" => ScriptQueue::RateLimiting(RateLimitingQueue::with_config(
                self.rls.lookup(w.get(3, "a rate limiter name")?)?,
                config,
            )),
            "pq" => {
                let rl: SharedRateLimiter<String> = match w.opt(3) {
                    Some(r) => self.rls.lookup(r)?,
                    None => Arc::new(controller_runtime_pq_default()),
                };
                ScriptQueue::Priority(PriorityQueue::with_config(rl, config))
            }
            _ => return Err(kind.unknown("a queue kind: fifo, delaying, ratelimiting or pq")),
        };
        self.queues.insert(name.text.to_owned(), q);
        Ok(())
    }

    /// A command on a queue.
    pub(crate) async fn queue_op(&mut self, cmd: &'static str, w: &Words<'_>) -> Result<()> {
        let qword = w.get(1, "a queue name")?;
        let q = self.queue(qword)?;
        let item = || w.get(2, "an item").map(|i| i.text.to_owned());
        match cmd {
            "get" => return self.get(q, w).await,
            "shutdownwithdrain" => {
                let (out, name) = (self.out.clone(), qword.text.to_owned());
                self.out.result("started");
                tokio::spawn(async move {
                    q.shut_down_with_drain().await;
                    out.event(format_args!("{name} ShutDownWithDrain returned"));
                });
                return Ok(());
            }
            _ => {}
        }
        if let ScriptQueue::Priority(pq) = &q {
            match cmd {
                "add" => pq.add_with_opts(
                    AddOpts::default(),
                    w.from(2).iter().map(|x| x.text.to_owned()),
                ),
                "addafter" => pq.add_after(item()?, w.get(3, "a delay")?.duration("the delay")?),
                "addratelimited" => pq.add_rate_limited(item()?),
                "addopts" => {
                    let mut opts = AddOpts::default();
                    for o in w.from(3) {
                        if let Some(d) = o.value_of("after") {
                            opts.after = d.duration("after=")?;
                        } else if let Some(p) = o.value_of("priority") {
                            opts.priority = p.priority()?;
                        } else if o.text == "ratelimited" {
                            opts.rate_limited = true;
                        } else {
                            return Err(o.unknown(
                                "an add option: after=DURATION, ratelimited or priority=N",
                            ));
                        }
                    }
                    pq.add_with_opts(opts, [item()?]);
                }
                "len" => self.out.result(pq.len()),
                "done" => pq.done(&item()?),
                "forget" => pq.forget(&item()?),
                "numrequeues" => self.out.result(pq.num_requeues(&item()?)),
                "shutdown" => pq.shut_down(),
                "shuttingdown" => self.out.result(pq.shutting_down()),
                _ => unreachable!("dispatched by the runner"),
            }
            return Ok(());
        }
        let fifo = q.fifo().expect("not a priority queue");
        match cmd {
            "add" => {
                for x in w.from(2) {
                    fifo.add(x.text.to_owned());
                }
            }
            "addafter" => {
                let d = q.delaying().ok_or_else(|| {
                    wrong(qword, "addafter", "a delaying, ratelimiting or pq queue")
                })?;
                d.add_after(item()?, w.get(3, "a delay")?.duration("the delay")?);
            }
            "addratelimited" => match &q {
                ScriptQueue::RateLimiting(rq) => rq.add_rate_limited(item()?),
                _ => return Err(wrong(qword, "addratelimited", "a ratelimiting or pq queue")),
            },
            "addopts" => return Err(wrong(qword, "addopts", "a pq queue")),
            "len" => self.out.result(fifo.len()),
            "done" => fifo.done(&item()?),
            "forget" | "numrequeues" => {
                let ScriptQueue::RateLimiting(rq) = &q else {
                    return Err(wrong(
                        qword,
                        if cmd == "forget" {
                            "forget"
                        } else {
                            "numrequeues"
                        },
                        "a ratelimiting or pq queue",
                    ));
                };
                let item = item()?;
                if cmd == "forget" {
                    rq.forget(&item);
                } else {
                    self.out.result(rq.num_requeues(&item));
                }
            }
            "shutdown" => match q.delaying() {
                Some(d) => d.shut_down(),
                None => fifo.shut_down(),
            },
            "shuttingdown" => self.out.result(fifo.shutting_down()),
            _ => unreachable!("dispatched by the runner"),
        }
        Ok(())
    }

    /// `get Q`: blocks, letting virtual time move, up to `getlimit`.
    async fn get(&mut self, q: ScriptQueue, w: &Words<'_>) -> Result<()> {
        let limit = self.get_limit;
        let timed_out = |e: Stalled| {
            w.at_end(match e {
                Stalled::Limit(_) => CommandError::GetLimit(limit),
                Stalled::Deadlock => CommandError::Deadlock("get"),
            })
        };
        let limit_std = limit.to_std();
        match q {
            ScriptQueue::Priority(pq) => {
                let got = self
                    .clock
                    .run_until(pq.get_with_priority(), Some(limit_std))
                    .await
                    .map_err(timed_out)?;
                let (item, prio, shut) = match got {
                    Some((i, p)) => (i, p, false),
                    None => (String::new(), 0, true),
                };
                self.out.result(format_args!(
                    "item={item:?} priority={prio} shutdown={shut}"
                ));
            }
            other => {
                let fifo = other.fifo().expect("not a priority queue").clone();
                let got = self
                    .clock
                    .run_until(fifo.get(), Some(limit_std))
                    .await
                    .map_err(timed_out)?;
                let (item, shut) = match got {
                    Some(i) => (i, false),
                    None => (String::new(), true),
                };
                self.out
                    .result(format_args!("item={item:?} shutdown={shut}"));
            }
        }
        Ok(())
    }
}
