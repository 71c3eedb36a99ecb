//! What a script has defined: the types of the runner's state, apart from the commands that
//! act on them (`runner`, `rate`, `queues`), so that those import this module and never each
//! other.

use std::collections::HashMap;

use super::limiters::Limiters;
use super::out::Out;
use super::scripted::Script;
use crate::clock::VirtualClock;
use crate::controller::{Controller, Request};
use crate::crossplane::circuit::Breaker;
use crate::go::GoDuration;
use crate::rate::{Limiter, Reservation};
use crate::workqueue::{DelayingQueue, PriorityQueue, Queue, RateLimitingQueue};

/// Everything a script has defined.
pub(crate) struct World {
    pub(crate) clock: VirtualClock,
    pub(crate) out: Out,
    pub(crate) rate: RateState,
    pub(crate) rls: Limiters,
    pub(crate) queues: HashMap<String, ScriptQueue>,
    pub(crate) controllers: Vec<(String, ScriptController)>,
    pub(crate) breakers: HashMap<String, Breaker>,
    pub(crate) get_limit: GoDuration,
}

/// A controller of the script and its scripted reconciler.
pub(crate) struct ScriptController {
    pub(crate) controller: Controller<Request>,
    pub(crate) script: Script,
}

/// The script's token buckets and named reservations.
#[derive(Default)]
pub(crate) struct RateState {
    pub(crate) limiters: HashMap<String, Limiter>,
    pub(crate) reservations: HashMap<String, (String, Reservation)>,
}

/// A queue of the script.
#[derive(Clone)]
pub(crate) enum ScriptQueue {
    Fifo(Queue<String>),
    Delaying(DelayingQueue<String>),
    RateLimiting(RateLimitingQueue<String>),
    Priority(PriorityQueue<String>),
}

/// The default `getlimit`.
pub(crate) const DEFAULT_GET_LIMIT: GoDuration = GoDuration(3_600_000_000_000);
