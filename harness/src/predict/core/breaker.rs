//! The realtime circuit breaker (budget.md §12.5): Lemma 6 (when a bucket of B_cb tokens
//! refilled at R_cb opens), and for one XR shape whether creation, an informer's resync or
//! a Composition update opens it, for how long, and which XRs it leaves stale.
//!
//! The breaker is core's `internal/circuit` as the composer runs it: one bucket per XR,
//! full at first; every event mapped to the XR takes a token (an Update maps its old and its
//! new object: two); an event that finds less than one token opens the circuit and is still
//! let through; while open, events are dropped but one each half-open interval; requeues
//! are never gated; released, the circuit closes on the first event after the cooldown;
//! under PR #7725's eager mode, the XR is requeued every half-open interval while open and
//! the reconcile after the cooldown closes it.

use super::load::{creation_xr_writes, creation_xr_writes_min};
use super::{CloseMode, CoreShape};
use crate::predict::formula::{Meaning, Prediction};

/// Lemma 6 by its definition: the index of the mapping that opens a closed circuit whose
/// bucket of `burst` tokens, refilled at `refill` per second, is full at the first of the
/// mappings at `times` (sorted), or `None`.
#[must_use]
pub fn first_open(times: &[f64], burst: f64, refill: f64) -> Option<usize> {
    let mut tokens = burst;
    let mut last = times.first().copied()?;
    for (i, &t) in times.iter().enumerate() {
        tokens = (tokens + refill * (t - last)).min(burst);
        last = t;
        if tokens >= 1.0 {
            tokens -= 1.0;
        } else {
            return Some(i);
        }
    }
    None
}

/// Lemma 6's closed form: the first mapping j for which some earlier mapping k (k ≤ j)
/// starts a window holding more than B_cb + R_cb·(t_j − t_k) mappings; equal to
/// [`first_open`] (the test proves them equal on random sequences and against `limiter`'s
/// breaker).
#[must_use]
pub fn first_open_by_windows(times: &[f64], burst: f64, refill: f64) -> Option<usize> {
    (0..times.len())
        .find(|&j| (0..=j).any(|k| exceeds((j - k + 1) as f64, times[j] - times[k], burst, refill)))
}

/// The breaker's condition: `mappings` events within `span` seconds open a full bucket when
/// c + 2U > B_cb + R_cb·Δt.
#[must_use]
pub fn exceeds(mappings: f64, span: f64, burst: f64, refill: f64) -> bool {
    mappings > burst + refill * span + 1e-9
}

/// What one trigger does to each XR's breaker.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// 1 when the trigger opens the circuit of every XR of the shape whatever the order of
    /// its events (its fewest tokens pass the bound), else 0.
    pub opens: Prediction,
    /// 1 when the trigger may open it (its most tokens pass the bound), else 0: with 0, a
    /// `breakerOpens` of 0 is assured.
    pub may_open: Prediction,
    /// c + 2U: the most tokens the trigger takes from one XR's bucket within Δt.
    pub tokens: Prediction,
    /// The fewest (equal to `tokens` but for creation, where a reconcile may see several
    /// composed resources' changes at once).
    pub tokens_min: Prediction,
    /// How long the circuit stays open, at most (0 when it does not open).
    pub open_for: Prediction,
    /// XRs left stale until the next resync (#7703): all their composed resources Ready,
    /// the XR not, with nothing to reconcile it.
    pub stale_xrs: Prediction,
    /// How long an XR may stay stale after the circuit opens, at most (0 when none is).
    pub stale_for: Prediction,
}

impl Verdict {
    /// The seven predictions.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        [
            &self.opens,
            &self.may_open,
            &self.tokens,
            &self.tokens_min,
            &self.open_for,
            &self.stale_xrs,
            &self.stale_for,
        ]
        .into_iter()
    }
}

fn breaker_inputs(p: Prediction, s: &CoreShape) -> Prediction {
    p.input("B_cb", s.breaker.burst)
        .input("R_cb", s.breaker.refill)
}

/// How long the circuit stays open, at most \[D\] §12.5: released, T_cool and then until the
/// first event after it, which with nothing else writing is the next informer resync (at
/// most 1.1·S_sync away); eager, T_cool + T_half (the half-open requeue after the cooldown).
fn open_for(s: &CoreShape, id: &str, opens: bool) -> Prediction {
    let b = &s.breaker;
    let (v, formula) = match b.mode {
        CloseMode::Released => (b.cooldown + 1.1 * s.sync_interval, "T_cool + 1.1·S_sync"),
        CloseMode::Eager => (b.cooldown + b.half_open, "T_cool + T_half"),
    };
    Prediction::new(
        format!("core/{id}/open-for"),
        format!("how long the {id} keeps an XR's circuit open"),
        if opens { v } else { 0.0 },
        "s",
    )
    .formula(formula)
    .input("T_cool", b.cooldown)
    .input("T_half", b.half_open)
    .input("S_sync", s.sync_interval)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.5")
    .note(if opens {
        "at least T_cool; released, any watch event of the XR after T_cool closes it sooner"
    } else {
        "the circuit does not open"
    })
}

/// Stale XRs and how long, at most \[D\] §12.5. `dropped` says whether the trigger's last
/// change (a Ready write, a new revision) is dropped by the open circuit. A TTL requeue is
/// never gated, so with a TTL an XR is stale at most 1.1·TTL + L; eager, at most T_half + L
/// (the half-open requeue); released with no TTL, until an event passes, which with nothing
/// else writing is the next resync (1.1·S_sync): those are the XRs counted.
fn stale(s: &CoreShape, id: &str, dropped: bool) -> (Prediction, Prediction) {
    let b = &s.breaker;
    let l = s.reconcile_time();
    let t = s.period();
    let mut bound = f64::INFINITY;
    if t > 0.0 {
        bound = bound.min(1.1 * t + l);
    }
    if b.mode == CloseMode::Eager {
        bound = bound.min(b.half_open + l);
    }
    let until_resync = bound.is_infinite();
    if until_resync {
        bound = 1.1 * s.sync_interval + l;
    }
    let count = if dropped && until_resync { s.xrs } else { 0.0 };
    let xrs = Prediction::new(
        format!("core/{id}/stale-xrs"),
        format!("XRs the {id} leaves stale until the next resync"),
        count,
        "XRs",
    )
    .formula("X·[change dropped]·[TTL = 0]·[released]")
    .input("X", s.xrs)
    .input("TTL", t)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.5");
    let how_long = Prediction::new(
        format!("core/{id}/stale-for"),
        format!("how long the {id} may leave an XR stale"),
        if dropped { bound } else { 0.0 },
        "s",
    )
    .formula("min(1.1·TTL + L, eager: T_half + L), else 1.1·S_sync + L")
    .input("TTL", t)
    .input("L", l)
    .input("T_half", b.half_open)
    .input("S_sync", s.sync_interval)
    .meaning(Meaning::UpperBound)
    .source("[D] §12.5");
    (xrs, how_long)
}

fn condition(id: &str, what: String, opens: bool, formula: &str) -> Prediction {
    Prediction::new(
        format!("core/{id}"),
        what,
        if opens { 1.0 } else { 0.0 },
        "",
    )
    .formula(formula)
    .meaning(Meaning::Condition)
    .source("[P] §12.5, Lemma 6")
}

/// Δt_max: the longest span of one XR's creation events, its time to Ready (τ_MR + t_watch
/// + L, §12.4), or the scenario's span when that is longer.
#[must_use]
pub fn creation_span_max(s: &CoreShape) -> f64 {
    super::ready::xr_time_to_ready(s).value.max(s.creation_span)
}

/// Creation \[P\]\[D\] §12.5: c = 1 + N_x Creates (the XR and each composed resource) and
/// U = w_xr + u·N_x Updates (the XR's own changing writes and the provider's) within Δt
/// open a full bucket when c + 2U > B_cb + R_cb·Δt. w_xr lies between its fewest (every
/// composed resource's change seen by one reconcile) and its most (each by its own), and
/// Δt between its shortest (the scenario's span, 0 by default) and its longest, the XR's
/// time to Ready (every creation event of the XR falls between its create and its Ready
/// write): the circuit opens surely when the fewest tokens pass the bound over the longest
/// span, and may when the most do over the shortest. A provider that needs minutes for the
/// composed resources of every XR spreads each XR's events over them, and no circuit is
/// sure to open.
/// The last composed resource's Ready write comes last but for the XR's two status writes
/// it causes (4 mappings): it is dropped, and the XR left behind, when the mappings up to
/// it, c + 2U − 4, pass the bound by more than the one mapping of its Update the opening may
/// keep: c + 2U > B_cb + R_cb·Δt + 6.
#[must_use]
pub fn creation(s: &CoreShape) -> Verdict {
    let c = 1.0 + s.composed;
    let provider = s.provider_writes * s.composed;
    let most = c + 2.0 * (creation_xr_writes(s) + provider);
    let fewest = c + 2.0 * (creation_xr_writes_min(s) + provider);
    let b = &s.breaker;
    let longest = creation_span_max(s);
    let opens = s.realtime && exceeds(fewest, longest, b.burst, b.refill);
    let may_open = s.realtime && exceeds(most, s.creation_span, b.burst, b.refill);
    let dropped = s.realtime && exceeds(most, s.creation_span, b.burst + 6.0, b.refill);
    let (stale_xrs, stale_for) = stale(s, "creation", dropped);
    let tokens = |id: &str, what: &str, v: f64, w: f64, formula: &str, m: Meaning| {
        Prediction::new(format!("core/creation/{id}"), what, v, "tokens")
            .formula(formula)
            .input("N_x", s.composed)
            .input("w_xr", w)
            .input("u", s.provider_writes)
            .input("h", s.status_changes)
            .meaning(m)
            .source("[D] §12.5")
    };
    Verdict {
        opens: breaker_inputs(
            condition(
                "creation/opens",
                "creation surely opens each XR's circuit".to_owned(),
                opens,
                "c + 2U_min > B_cb + R_cb·Δt_max",
            ),
            s,
        )
        .input("c + 2U", fewest)
        .input("Δt_max", longest)
        .source("[D] §12.5, Lemma 6 with Δt_max from §12.4"),
        may_open: breaker_inputs(
            condition(
                "creation/may-open",
                "creation may open each XR's circuit".to_owned(),
                may_open,
                "c + 2U > B_cb + R_cb·Δt",
            ),
            s,
        )
        .input("c + 2U", most)
        .input("Δt", s.creation_span),
        tokens: tokens(
            "tokens",
            "breaker tokens one XR's creation takes, at most",
            most,
            creation_xr_writes(s),
            "c + 2U = 1 + N_x + 2·(w_xr + u·N_x), w_xr = 7 + 2·h·N_x",
            Meaning::UpperBound,
        ),
        tokens_min: tokens(
            "tokens-min",
            "breaker tokens one XR's creation takes, at least",
            fewest,
            creation_xr_writes_min(s),
            "1 + N_x + 2·(w_xr + u·N_x), w_xr = 7 + 2·h",
            Meaning::LowerBound,
        ),
        open_for: open_for(s, "creation", may_open),
        stale_xrs,
        stale_for,
    }
}

fn resync_condition(s: &CoreShape, id: &str, opens: bool) -> Prediction {
    breaker_inputs(
        condition(
            &format!("resync/{id}"),
            "an informer's resync opens each XR's circuit".to_owned(),
            opens,
            "2·n_kind > B_cb",
        ),
        s,
    )
    .input("n_kind", s.watched_per_kind)
}

fn resync_tokens(s: &CoreShape, id: &str, tokens: f64) -> Prediction {
    Prediction::new(
        format!("core/resync/{id}"),
        "breaker tokens one informer's resync takes from an XR",
        tokens,
        "tokens",
    )
    .formula("2·n_kind")
    .input("n_kind", s.watched_per_kind)
    .meaning(Meaning::Expected)
    .source("[D] §12.5")
}

/// An informer's resync \[P\]\[D\] §12.5: the replay of one watched kind maps the XR's n_kind
/// objects of it, each an Update (2 tokens), at one instant; in steady state the bucket is
/// full, so it opens when 2·n_kind > B_cb. A replay changes nothing, so nothing is left
/// stale by it.
#[must_use]
pub fn resync(s: &CoreShape) -> Verdict {
    let tokens = 2.0 * s.watched_per_kind;
    let b = &s.breaker;
    let opens = s.realtime && exceeds(tokens, 0.0, b.burst, b.refill);
    let (stale_xrs, stale_for) = stale(s, "resync", false);
    Verdict {
        opens: resync_condition(s, "opens", opens),
        may_open: resync_condition(s, "may-open", opens),
        tokens: resync_tokens(s, "tokens", tokens),
        tokens_min: resync_tokens(s, "tokens-min", tokens),
        open_for: open_for(s, "resync", opens),
        stale_xrs,
        stale_for,
    }
}

/// The replay's reopening \[D\] §12.5: a circuit the creation surely opened stays open,
/// released and with nothing else writing, until the first event after the cooldown; when
/// the first replay comes after it (0.9·S_sync > T_cool, the earliest replay past the
/// cooldown), its first event closes the circuit and empties the ring, the rest of it takes
/// 2·n_kind tokens from the bucket, refilled full meanwhile, and the XR's own status Update
/// that the closing causes (its `Responsive` condition back to True: 2 tokens) finds it
/// short: the circuit opens again at the replay's instant when **2·n_kind + 2 > B_cb**, one
/// more than the replay alone (2·n_kind > B_cb) needs. Under the eager mode the reconcile
/// after the cooldown closes the circuit before the replay, whose bucket then holds its
/// 2·n_kind alone: no reopening beyond [`resync`]'s. 1 when it surely reopens, else 0.
#[must_use]
pub fn replay_reopens(s: &CoreShape, opened_by_creation: bool) -> Prediction {
    let b = &s.breaker;
    let tokens = 2.0 * s.watched_per_kind + 2.0;
    let reopens = s.realtime
        && opened_by_creation
        && b.mode == CloseMode::Released
        && 0.9 * s.sync_interval > b.cooldown
        && exceeds(tokens, 0.0, b.burst, b.refill);
    breaker_inputs(
        Prediction::new(
            "core/resync/reopens",
            "the first replay closes the circuit the creation opened, and the XR's status Update it causes opens it again",
            if reopens { 1.0 } else { 0.0 },
            "",
        )
        .formula("[creation opens]·[released]·[0.9·S_sync > T_cool]·[2·n_kind + 2 > B_cb]")
        .meaning(Meaning::Condition)
        .source("[D] §12.5"),
        s,
    )
    .input("n_kind", s.watched_per_kind)
    .input("S_sync", s.sync_interval)
    .input("T_cool", b.cooldown)
}

/// τ_rev: tokens one new CompositionRevision takes from each Automatic XR: its Create (1)
/// and its `ValidPipeline` status Update (2), and the XR's own v_rev changing writes (2 each).
#[must_use]
pub fn revision_tokens(s: &CoreShape) -> f64 {
    3.0 + 2.0 * s.xr_writes_per_revision
}

/// n*: the edit of a storm of Composition edits δ_edit apart that opens every XR's circuit,
/// ⌊(B_cb − R_cb·δ_edit)/(τ_rev − R_cb·δ_edit)⌋ + 1, or `None` when the bucket keeps up
/// (τ_rev ≤ R_cb·δ_edit and τ_rev ≤ B_cb).
#[must_use]
pub fn edits_to_open(s: &CoreShape) -> Option<f64> {
    let b = &s.breaker;
    let tau = revision_tokens(s);
    if tau > b.burst {
        return Some(1.0);
    }
    let per_edit = b.refill * s.edit_interval;
    if tau <= per_edit || !s.realtime {
        return None;
    }
    Some(((b.burst - per_edit) / (tau - per_edit) + 1e-9).floor() + 1.0)
}

fn revision_condition(
    s: &CoreShape,
    id: &str,
    opens: bool,
    tau: f64,
    n: Option<f64>,
) -> Prediction {
    breaker_inputs(
        condition(
            &format!("revision/{id}"),
            "Composition edits δ_edit apart open each XR's circuit".to_owned(),
            opens,
            "n·τ_rev > B_cb + R_cb·(n − 1)·δ_edit for some edit n",
        ),
        s,
    )
    .input("τ_rev", tau)
    .input("δ_edit", s.edit_interval)
    .input("n*", n.unwrap_or(f64::INFINITY))
}

fn revision_tokens_prediction(s: &CoreShape, id: &str, tau: f64) -> Prediction {
    Prediction::new(
        format!("core/revision/{id}"),
        "breaker tokens one new revision takes from each Automatic XR",
        tau,
        "tokens",
    )
    .formula("τ_rev = 3 + 2·v_rev")
    .input("v_rev", s.xr_writes_per_revision)
    .meaning(Meaning::Expected)
    .source("[D] §12.5")
}

/// A Composition update \[P\]\[D\] §12.5: every new revision maps to every Automatic XR of the
/// Composition (#7114), τ_rev tokens each. One edit opens it when τ_rev > B_cb; a storm of
/// edits δ_edit apart at the n*-th edit ([`edits_to_open`]). Once open, the later revisions'
/// events are dropped: the XR stays on an older revision.
#[must_use]
pub fn revision(s: &CoreShape) -> Verdict {
    let tau = revision_tokens(s);
    let n = edits_to_open(s);
    let opens = n.is_some();
    let (stale_xrs, stale_for) = stale(s, "revision", opens);
    Verdict {
        opens: revision_condition(s, "opens", opens, tau, n),
        may_open: revision_condition(s, "may-open", opens, tau, n),
        tokens: revision_tokens_prediction(s, "tokens", tau),
        tokens_min: revision_tokens_prediction(s, "tokens-min", tau),
        open_for: open_for(s, "revision", opens),
        stale_xrs,
        stale_for,
    }
}
