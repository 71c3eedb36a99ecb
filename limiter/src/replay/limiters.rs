//! Named workqueue rate limiters of a script: their definitions (to build fresh copies for
//! controllers) and their shared string-keyed instances.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::CommandError;
use super::args::{Result, Word};
use super::out::{Out, with_nanos};
use crate::clock::Clock;
use crate::controller::Request;
use crate::crossplane;
use crate::go::GoDuration;
use crate::workqueue::{
    Bucket, ItemExponential, ItemFastSlow, MaxOf, MaxWait, RateLimiter, SharedRateLimiter,
    client_go_default_with_clock, client_go_item_default,
};

#[derive(Clone, Debug)]
pub(crate) enum RlDef {
    Exp(GoDuration, GoDuration),
    FastSlow(GoDuration, GoDuration, i64),
    Bucket(f64, i64),
    Default,
    ItemDefault,
    MaxOf(Vec<String>),
    MaxWait(String, GoDuration),
    XpGlobal(i64),
    XpController,
}

/// How an item prints in a trace: `[namespace/]name`.
pub(crate) trait Show {
    fn show(&self) -> String;
}

impl Show for String {
    fn show(&self) -> String {
        self.clone()
    }
}

impl Show for Request {
    fn show(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

/// The named workqueue rate limiters of a script; buckets run on the script's clock.
pub(crate) struct Limiters {
    defs: HashMap<String, RlDef>,
    shared: HashMap<String, SharedRateLimiter<String>>,
    clock: Clock,
}

/// The words after `rl NAME KIND`, which must be exactly `n`.
fn exactly<'a>(kind: Word<'a>, args: &[Word<'a>], n: usize, expected: &'static str) -> Result<()> {
    match args.get(n) {
        Some(extra) => Err(extra.unknown(expected)),
        None if args.len() < n => Err(kind.error(CommandError::Missing(expected))),
        None => Ok(()),
    }
}

impl Limiters {
    pub(crate) fn new(clock: Clock) -> Self {
        Limiters {
            defs: HashMap::new(),
            shared: HashMap::new(),
            clock,
        }
    }

    /// `rl NAME kind args...`: `kind` and its arguments.
    pub(crate) fn define(&mut self, name: &str, kind: Word<'_>, args: &[Word<'_>]) -> Result<()> {
        let def = match kind.text {
            "exp" => {
                exactly(kind, args, 2, "exp BASE MAX")?;
                RlDef::Exp(
                    args[0].duration("the base delay")?,
                    args[1].duration("the max delay")?,
                )
            }
            "fastslow" => {
                exactly(kind, args, 3, "fastslow FAST SLOW MAX-FAST-ATTEMPTS")?;
                RlDef::FastSlow(
                    args[0].duration("the fast delay")?,
                    args[1].duration("the slow delay")?,
                    args[2].int("an integer count of fast attempts")?,
                )
            }
            "bucket" => {
                exactly(kind, args, 2, "bucket QPS BURST")?;
                RlDef::Bucket(
                    args[0].float("a number of events per second")?,
                    args[1].int("an integer burst")?,
                )
            }
            "default" => RlDef::Default,
            "itemdefault" => RlDef::ItemDefault,
            "maxof" => {
                for part in args {
                    self.lookup(*part)?;
                }
                RlDef::MaxOf(args.iter().map(|w| w.text.to_owned()).collect())
            }
            "maxwait" => {
                exactly(kind, args, 2, "maxwait RATE-LIMITER MAX-DELAY")?;
                self.lookup(args[0])?;
                RlDef::MaxWait(args[0].text.to_owned(), args[1].duration("the max delay")?)
            }
            "xpglobal" => {
                exactly(kind, args, 1, "xpglobal RPS")?;
                RlDef::XpGlobal(args[0].int("an integer rate per second")?)
            }
            "xpcontroller" => RlDef::XpController,
            _ => {
                return Err(kind.unknown(
                    "a rate limiter kind: exp, fastslow, bucket, default, itemdefault, maxof, \
                     maxwait, xpglobal or xpcontroller",
                ));
            }
        };
        let instance = self.build_shared(&def);
        self.defs.insert(name.to_owned(), def);
        self.shared.insert(name.to_owned(), instance);
        Ok(())
    }

    /// The shared instance named by `word`.
    pub(crate) fn lookup(&self, word: Word<'_>) -> Result<SharedRateLimiter<String>> {
        self.shared.get(word.text).cloned().ok_or_else(|| {
            word.error(CommandError::NotDefined {
                kind: "rate limiter",
                name: word.text.to_owned(),
            })
        })
    }

    /// The shared instance: `maxof` and `maxwait` share the named instances they list.
    fn build_shared(&self, def: &RlDef) -> SharedRateLimiter<String> {
        let named = |name: &String| Arc::clone(&self.shared[name]);
        match def {
            RlDef::MaxOf(parts) => Arc::new(MaxOf::new(parts.iter().map(named).collect())),
            RlDef::MaxWait(inner, max) => Arc::new(MaxWait::with_go_duration(named(inner), *max)),
            other => self.build_fresh::<String>(other),
        }
    }

    /// A fresh instance of the definition named by `word`, for items of type `T`.
    pub(crate) fn fresh<T>(&self, word: Word<'_>) -> Result<SharedRateLimiter<T>>
    where
        T: Eq + Hash + Clone + Send + Sync + 'static,
    {
        let def = self.defs.get(word.text).ok_or_else(|| {
            word.error(CommandError::NotDefined {
                kind: "rate limiter",
                name: word.text.to_owned(),
            })
        })?;
        Ok(self.build_fresh(def))
    }

    fn build_fresh<T>(&self, def: &RlDef) -> SharedRateLimiter<T>
    where
        T: Eq + Hash + Clone + Send + Sync + 'static,
    {
        let clock = self.clock.clone();
        match def {
            RlDef::Exp(base, max) => Arc::new(ItemExponential::with_go_durations(*base, *max)),
            RlDef::FastSlow(fast, slow, n) => {
                Arc::new(ItemFastSlow::with_go_durations(*fast, *slow, *n))
            }
            RlDef::Bucket(qps, burst) => Arc::new(Bucket::with_clock(*qps, *burst, clock)),
            RlDef::Default => Arc::new(client_go_default_with_clock(clock)),
            RlDef::ItemDefault => Arc::new(client_go_item_default()),
            RlDef::MaxOf(parts) => Arc::new(MaxOf::new(
                parts
                    .iter()
                    .map(|p| self.build_fresh(&self.defs[p]))
                    .collect(),
            )),
            RlDef::MaxWait(inner, max) => Arc::new(MaxWait::with_go_duration(
                self.build_fresh(&self.defs[inner]),
                *max,
            )),
            RlDef::XpGlobal(rps) => Arc::new(crossplane::new_global_with_clock(*rps, clock)),
            RlDef::XpController => Arc::new(crossplane::new_controller()),
        }
    }
}

/// A rate limiter that logs `NAME.When(item) = d` and `NAME.Forget(item)` as events.
pub(crate) struct Traced<T> {
    pub(crate) name: String,
    pub(crate) inner: SharedRateLimiter<T>,
    pub(crate) out: Out,
}

impl<T: Show> RateLimiter<T> for Traced<T> {
    fn when(&self, item: &T) -> GoDuration {
        let d = self.inner.when(item);
        self.out.event(format_args!(
            "{}.When({}) = {}",
            self.name,
            item.show(),
            with_nanos(d)
        ));
        d
    }

    fn forget(&self, item: &T) {
        self.inner.forget(item);
        self.out
            .event(format_args!("{}.Forget({})", self.name, item.show()));
    }

    fn num_requeues(&self, item: &T) -> usize {
        self.inner.num_requeues(item)
    }
}
