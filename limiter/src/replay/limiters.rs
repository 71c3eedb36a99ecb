//! Named workqueue rate limiters of a script: their definitions (to build fresh copies for
//! controllers) and their shared string-keyed instances.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use super::ScriptError;
use super::out::{Out, with_nanos};
use crate::controller::Request;
use crate::crossplane;
use crate::go::GoDuration;
use crate::workqueue::{
    Bucket, ItemExponential, ItemFastSlow, MaxOf, MaxWait, RateLimiter, SharedRateLimiter,
    client_go_default, client_go_item_default,
};

#[derive(Clone, Debug)]
pub(crate) enum RlDef {
    Exp(GoDuration, GoDuration),
    FastSlow(GoDuration, GoDuration, u64),
    Bucket(f64, i64),
    Default,
    ItemDefault,
    MaxOf(Vec<String>),
    MaxWait(String, GoDuration),
    XpGlobal(u32),
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

#[derive(Default)]
pub(crate) struct Limiters {
    defs: HashMap<String, RlDef>,
    shared: HashMap<String, SharedRateLimiter<String>>,
}

fn dur(s: &str) -> Result<GoDuration, ScriptError> {
    GoDuration::parse(s).map_err(|e| ScriptError::new(format!("bad duration {s:?}: {e}")))
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, ScriptError> {
    s.parse()
        .map_err(|_| ScriptError::new(format!("bad {what} {s:?}")))
}

impl Limiters {
    /// `rl NAME kind args...`
    pub(crate) fn define(&mut self, name: &str, args: &[&str]) -> Result<(), ScriptError> {
        let need = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(ScriptError::new(format!(
                    "rl {}: expected {} arguments, got {}",
                    args.first().unwrap_or(&""),
                    n - 1,
                    args.len().saturating_sub(1)
                )))
            }
        };
        let def = match *args.first().unwrap_or(&"") {
            "exp" => {
                need(3)?;
                RlDef::Exp(dur(args[1])?, dur(args[2])?)
            }
            "fastslow" => {
                need(4)?;
                RlDef::FastSlow(dur(args[1])?, dur(args[2])?, num(args[3], "count")?)
            }
            "bucket" => {
                need(3)?;
                RlDef::Bucket(num(args[1], "qps")?, num(args[2], "burst")?)
            }
            "default" => RlDef::Default,
            "itemdefault" => RlDef::ItemDefault,
            "maxof" => {
                for part in &args[1..] {
                    self.lookup(part)?;
                }
                RlDef::MaxOf(args[1..].iter().map(|s| (*s).to_owned()).collect())
            }
            "maxwait" => {
                need(3)?;
                self.lookup(args[1])?;
                RlDef::MaxWait(args[1].to_owned(), dur(args[2])?)
            }
            "xpglobal" => {
                need(2)?;
                RlDef::XpGlobal(num(args[1], "rps")?)
            }
            "xpcontroller" => RlDef::XpController,
            other => {
                return Err(ScriptError::new(format!(
                    "unknown rate limiter kind {other:?}"
                )));
            }
        };
        let instance = self.build_shared(&def)?;
        self.defs.insert(name.to_owned(), def);
        self.shared.insert(name.to_owned(), instance);
        Ok(())
    }

    pub(crate) fn lookup(&self, name: &str) -> Result<SharedRateLimiter<String>, ScriptError> {
        self.shared
            .get(name)
            .cloned()
            .ok_or_else(|| ScriptError::new(format!("no rate limiter named {name:?}")))
    }

    /// The shared instance: `maxof` and `maxwait` share the named instances they list.
    fn build_shared(&self, def: &RlDef) -> Result<SharedRateLimiter<String>, ScriptError> {
        Ok(match def {
            RlDef::MaxOf(parts) => Arc::new(MaxOf::new(
                parts
                    .iter()
                    .map(|p| self.lookup(p))
                    .collect::<Result<_, _>>()?,
            )),
            RlDef::MaxWait(inner, max) => Arc::new(MaxWait::new(self.lookup(inner)?, max.to_std())),
            other => self.build_fresh::<String>(other)?,
        })
    }

    /// A fresh instance of `name`'s definition for items of type `T`.
    pub(crate) fn fresh<T>(&self, name: &str) -> Result<SharedRateLimiter<T>, ScriptError>
    where
        T: Eq + Hash + Clone + Send + Sync + 'static,
    {
        let def = self
            .defs
            .get(name)
            .ok_or_else(|| ScriptError::new(format!("no rate limiter named {name:?}")))?;
        self.build_fresh(def)
    }

    fn build_fresh<T>(&self, def: &RlDef) -> Result<SharedRateLimiter<T>, ScriptError>
    where
        T: Eq + Hash + Clone + Send + Sync + 'static,
    {
        Ok(match def {
            RlDef::Exp(base, max) => Arc::new(ItemExponential::with_go_durations(*base, *max)),
            RlDef::FastSlow(fast, slow, n) => {
                Arc::new(ItemFastSlow::new(fast.to_std(), slow.to_std(), *n))
            }
            RlDef::Bucket(qps, burst) => Arc::new(Bucket::new(*qps, *burst)),
            RlDef::Default => Arc::new(client_go_default()),
            RlDef::ItemDefault => Arc::new(client_go_item_default()),
            RlDef::MaxOf(parts) => Arc::new(MaxOf::new(
                parts
                    .iter()
                    .map(|p| self.fresh(p))
                    .collect::<Result<_, _>>()?,
            )),
            RlDef::MaxWait(inner, max) => Arc::new(MaxWait::new(self.fresh(inner)?, max.to_std())),
            RlDef::XpGlobal(rps) => Arc::new(crossplane::new_global(*rps)),
            RlDef::XpController => Arc::new(crossplane::new_controller()),
        })
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
