//! What core's own phases cost (budget.md §12.8): a Composition edit's fan-out
//! ([`revision_edit`]) and a function's fault ([`function_fault`]), for one XR shape.

use super::CoreShape;
use super::load::{function_calls, function_calls_bound};
use crate::predict::formula::{Meaning, Prediction};

/// Core's deadline for one reconcile (s): every request and function call of a reconcile
/// shares it, and the reconcile fails when it passes.
pub const RECONCILE_DEADLINE: f64 = 120.0;

/// What one Composition edit changes per XR.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    /// N_c: composed resources per XR whose rendered spec changes.
    pub changed: f64,
    /// N_new: composed resources per XR the edit adds (a larger count).
    pub created: f64,
    /// N_x′: composed resources per XR after the edit.
    pub composed_after: f64,
    /// u_upd: the provider's writes to a composed resource it updates (ours: 1, the status
    /// write with the new observed generation, counted at the API server's journal).
    pub update_writes: f64,
}

impl Edit {
    /// An edit changing `changed` of each XR's resources and adding `created`, leaving
    /// `composed_after`, for our provider (u_upd = 1).
    #[must_use]
    pub fn new(changed: f64, created: f64, composed_after: f64) -> Self {
        Edit {
            changed,
            created,
            composed_after,
            update_writes: 1.0,
        }
    }
}

/// Everything §12.8 predicts of one edit for one XR shape.
#[derive(Clone, Debug, PartialEq)]
pub struct EditPrediction {
    /// R_rev: reconciles of one XR the edit causes, at most.
    pub reconciles: Prediction,
    /// Core's API requests of the whole fan-out, at most.
    pub requests: Prediction,
    /// Calls of each function in the fan-out, at most.
    pub function_calls: Vec<Prediction>,
    /// Composed resources whose spec changes: the updates reaching the provider.
    pub composed_updates: Prediction,
    /// The cloud's Updates: one per changed composed resource.
    pub cloud_updates: Prediction,
    /// τ_rev′: breaker tokens the edit takes from each XR.
    pub tokens: Prediction,
    /// Whether the edit opens each XR's circuit (τ_rev′ > B_cb).
    pub opens: Prediction,
}

impl EditPrediction {
    /// Every prediction.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        [
            &self.reconciles,
            &self.requests,
            &self.composed_updates,
            &self.cloud_updates,
            &self.tokens,
            &self.opens,
        ]
        .into_iter()
        .chain(&self.function_calls)
    }
}

/// R_rev \[D\] §12.8: every event that maps to the XR enqueues it once, and no reconcile runs
/// without one: the revision's Create and its `ValidPipeline` status Update (2), the XR's
/// own v_rev changing writes as it moves, each changed composed resource's Update by core's
/// apply and the provider's u_upd writes, each new one's Create and the provider's u writes.
#[must_use]
pub fn edit_reconciles(s: &CoreShape, e: &Edit) -> f64 {
    2.0 + s.xr_writes_per_revision
        + e.changed * (1.0 + e.update_writes)
        + e.created * (1.0 + s.provider_writes)
}

/// τ_rev′ \[D\] §12.5, §12.8: the revision's 3 tokens and 2 per XR write (τ_rev), 2 per
/// Update of a changed composed resource (core's apply and the provider's u_upd writes),
/// and for a new one its Create (1) and 2 per provider write.
#[must_use]
pub fn edit_tokens(s: &CoreShape, e: &Edit) -> f64 {
    super::breaker::revision_tokens(s)
        + 2.0 * e.changed * (1.0 + e.update_writes)
        + e.created * (1.0 + 2.0 * s.provider_writes)
}

fn edit_inputs(p: Prediction, s: &CoreShape, e: &Edit) -> Prediction {
    p.input("X", s.xrs)
        .input("v_rev", s.xr_writes_per_revision)
        .input("N_c", e.changed)
        .input("N_new", e.created)
        .input("u_upd", e.update_writes)
        .input("u", s.provider_writes)
        .source("[D] §12.8")
}

/// §12.8 for one edit of the Composition of `s`'s XRs.
#[must_use]
pub fn revision_edit(s: &CoreShape, e: &Edit) -> EditPrediction {
    let r = edit_reconciles(s, e);
    // A reconcile's requests: N_x′ + 2 applies, a status Update, S reads, and core's
    // events (one for the composition step and one per composed resource not yet Ready,
    // at most N_x′ + 1).
    let per_reconcile = 2.0 * e.composed_after + 4.0 + s.secret_reads;
    let tau = edit_tokens(s, e);
    let b = &s.breaker;
    let opens = s.realtime && super::breaker::exceeds(tau, 0.0, b.burst, b.refill);
    EditPrediction {
        reconciles: edit_inputs(
            Prediction::new(
                "core/edit/reconciles",
                "reconciles of one XR a Composition edit causes",
                r,
                "reconciles",
            ),
            s,
            e,
        )
        .formula("R_rev = 2 + v_rev + N_c·(1 + u_upd) + N_new·(1 + u)")
        .meaning(Meaning::UpperBound),
        requests: edit_inputs(
            Prediction::new(
                "core/edit/requests",
                "core's API requests of a Composition edit's fan-out",
                s.xrs * r * per_reconcile,
                "requests",
            ),
            s,
            e,
        )
        .input("N_x′", e.composed_after)
        .input("S", s.secret_reads)
        .formula("X·R_rev·(2·N_x′ + 4 + S)")
        .meaning(Meaning::UpperBound)
        .note("each reconcile: N_x′ + 2 applies, a status Update, S reads and at most N_x′ + 1 events"),
        function_calls: s
            .functions()
            .iter()
            .map(|f| {
                let k = s.calls_of(f);
                edit_inputs(
                    Prediction::new(
                        format!("core/edit/function-calls/{f}"),
                        format!("calls of function {f} in a Composition edit's fan-out"),
                        s.xrs * r * k,
                        "calls",
                    ),
                    s,
                    e,
                )
                .input("k_f", k)
                .formula("X·R_rev·k_f")
                .meaning(Meaning::UpperBound)
            })
            .collect(),
        composed_updates: edit_inputs(
            Prediction::new(
                "core/edit/composed-updates",
                "composed resources whose spec the edit changes",
                s.xrs * e.changed,
                "resources",
            ),
            s,
            e,
        )
        .formula("X·N_c")
        .meaning(Meaning::Expected)
        .note("every XR on the Automatic policy moves to the new revision (#7114): none is spared"),
        cloud_updates: edit_inputs(
            Prediction::new(
                "core/edit/cloud-updates",
                "the cloud's Updates the edit causes through the provider",
                s.xrs * e.changed,
                "calls",
            ),
            s,
            e,
        )
        .formula("X·N_c")
        .meaning(Meaning::Expected)
        .note("the provider's reconcile of a changed resource finds its spec unlike the cloud's and updates it once"),
        tokens: edit_inputs(
            Prediction::new(
                "core/edit/tokens",
                "breaker tokens a Composition edit takes from each XR",
                tau,
                "tokens",
            ),
            s,
            e,
        )
        .formula("τ_rev′ = 3 + 2·v_rev + 2·N_c·(1 + u_upd) + N_new·(1 + 2·u)")
        .meaning(Meaning::UpperBound),
        opens: edit_inputs(
            Prediction::new(
                "core/edit/opens",
                "a Composition edit opens each XR's circuit",
                if opens { 1.0 } else { 0.0 },
                "",
            ),
            s,
            e,
        )
        .input("τ_rev′", tau)
        .input("B_cb", b.burst)
        .formula("τ_rev′ > B_cb")
        .meaning(Meaning::Condition)
        .source("[P] §12.5, §12.8"),
    }
}

/// A function's fault, as §12.8 reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    /// The faulted function.
    pub function: String,
    /// d: latency added to each of its calls (s).
    pub delay: f64,
    /// p: the share of its calls answered with a FATAL result, in [0, 1].
    pub errors: f64,
    /// No call reaches it.
    pub down: bool,
    /// The TTL its answers carry instead (s; 0: none).
    pub ttl: Option<f64>,
    /// D: how long the fault lasts (s).
    pub duration: f64,
}

/// One reconcile under `f`: how long it takes, the calls of the faulted function it makes
/// (the one the deadline ends included), and whether the deadline ends it. The steps run
/// in order, each call taking t_fn (+ d for the faulted function; a down function's call
/// waits for the deadline), then the N_x + 2 + S requests.
#[must_use]
pub fn faulted_reconcile(s: &CoreShape, f: &Fault) -> (f64, f64, bool) {
    let mut t = 0.0;
    let mut calls = 0.0;
    for step in &s.steps {
        let faulted = step.function == f.function;
        let mut k = step.calls;
        while k > 0.0 {
            k -= 1.0;
            let call = if faulted && f.down {
                f64::INFINITY
            } else if faulted {
                s.t_fn + f.delay
            } else {
                s.t_fn
            };
            if faulted {
                calls += 1.0;
            }
            t += call;
            if t >= RECONCILE_DEADLINE {
                return (RECONCILE_DEADLINE, calls, true);
            }
        }
    }
    t += s.steady_requests() * s.t_apply;
    if t >= RECONCILE_DEADLINE {
        return (RECONCILE_DEADLINE, calls, true);
    }
    (t, calls, false)
}

/// Everything §12.8 predicts of one function fault for one XR shape.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultPrediction {
    /// L′: one reconcile under the fault (at most the deadline).
    pub reconcile_time: Prediction,
    /// Whether the deadline ends every reconcile (L′ ≥ 120 s).
    pub deadline_hit: Prediction,
    /// Core's calls of the function during the fault, at most.
    pub calls_bound: Prediction,
    /// The same, expected.
    pub calls: Prediction,
    /// Reconciles the deadline ends during the fault, at most.
    pub deadline_reconciles: Prediction,
}

impl FaultPrediction {
    /// Every prediction.
    pub fn all(&self) -> impl Iterator<Item = &Prediction> {
        [
            &self.reconcile_time,
            &self.deadline_hit,
            &self.calls_bound,
            &self.calls,
            &self.deadline_reconciles,
        ]
        .into_iter()
    }
}

fn fault_inputs(p: Prediction, s: &CoreShape, f: &Fault) -> Prediction {
    p.input("X", s.xrs)
        .input("d", f.delay)
        .input("p", f.errors)
        .input("down", if f.down { 1.0 } else { 0.0 })
        .input("D", f.duration)
        .input("w_core", s.workers)
}

/// §12.8 for fault `f` of `s`'s pipeline.
///
/// - The deadline \[P\]: L′ = Σk_i·t_fn + k_f·d + (N_x + 2 + S)·t_apply ≥ 120 s (or the
///   function down) ends every reconcile at 120 s, before any apply: the XR is not
///   composed while the fault lasts, and its reconcile is retried after the backoff. Each
///   worker starts at most ⌊D/120⌋ + 1 reconciles in D, each making c_f calls of the
///   function (the one the deadline ends included), so at most
///   min(X, w_core)·(⌊D/120⌋ + 1)·c_f calls \[D\], about min(X, w_core)·D/120·c_f \[A\].
/// - Otherwise \[D\]\[A\] the steady formulas of §12.1–§12.2 over D with L′ and, when the fault
///   sets one, its TTL; with errors p, about 1/(1 − p)^k_f as many (a reconcile with a
///   FATAL answer fails and is retried after the backoff's first second) \[A\].
#[must_use]
pub fn function_fault(s: &CoreShape, f: &Fault) -> FaultPrediction {
    let (l, c_f, hit) = faulted_reconcile(s, f);
    let id = |x: &str| format!("core/fault/{}/{x}", f.function);
    let busy = s.xrs.min(s.workers);
    let starts = (f.duration / RECONCILE_DEADLINE + 1e-9).floor() + 1.0;
    let (bound, expected, bound_formula, expected_formula, deadline) = if hit {
        (
            busy * starts * c_f,
            busy * f.duration / RECONCILE_DEADLINE * c_f,
            "min(X, w_core)·(⌊D/120⌋ + 1)·c_f",
            "min(X, w_core)·D/120·c_f",
            busy * starts,
        )
    } else {
        let mut faulted = s.clone();
        // The faulted calls' delay in L, spread over the steps' calls.
        let k_all = s.calls_per_reconcile();
        if k_all > 0.0 {
            faulted.t_fn += f.delay * s.calls_of(&f.function) / k_all;
        }
        if let Some(ttl) = f.ttl {
            faulted.ttl = ttl;
        }
        let retries = (1.0 - f.errors).max(1e-9).powf(s.calls_of(&f.function));
        let b = function_calls_bound(&faulted, &f.function, f.duration).value;
        let e = function_calls(&faulted, &f.function, f.duration).value / retries;
        (
            if f.errors > 0.0 { f64::INFINITY } else { b },
            e,
            "X·k_f·(⌊D/(0.9·TTL′ + L′)⌋ + 1 + 2·i·(⌊D/(0.9·S_sync)⌋ + 1))",
            "k_f·D·min(X·(1/(TTL′ + L′) + ρ/S_sync), w_core/L′)/(1 − p)^k_f",
            0.0,
        )
    };
    FaultPrediction {
        reconcile_time: fault_inputs(
            Prediction::new(id("reconcile-time"), "one reconcile under the fault", l, "s"),
            s,
            f,
        )
        .input("t_fn", s.t_fn)
        .input("t_apply", s.t_apply)
        .formula("L′ = min(Σk_i·t_fn + k_f·d + (N_x + 2 + S)·t_apply, 120 s)")
        .meaning(Meaning::Expected)
        .source("[D] §12.8"),
        deadline_hit: fault_inputs(
            Prediction::new(
                id("deadline-hit"),
                "core's 2-minute deadline ends every reconcile during the fault",
                if hit { 1.0 } else { 0.0 },
                "",
            ),
            s,
            f,
        )
        .formula("Σk_i·t_fn + k_f·d + (N_x + 2 + S)·t_apply ≥ 120 s, or the function down")
        .meaning(Meaning::Condition)
        .source("[P] §12.8"),
        calls_bound: fault_inputs(
            Prediction::new(
                id("calls-bound"),
                format!("core's calls of {} during the fault, at most", f.function),
                bound,
                "calls",
            ),
            s,
            f,
        )
        .input("c_f", c_f)
        .formula(bound_formula)
        .meaning(Meaning::UpperBound)
        .source("[D] §12.8")
        .note(if f.errors > 0.0 && !hit {
            "no hard bound with errors: a failed reconcile is retried after the backoff (1 s doubling to 30 s), however often it fails"
        } else {
            "the calls a reconcile started during the fault makes"
        }),
        calls: fault_inputs(
            Prediction::new(
                id("calls"),
                format!("core's calls of {} during the fault", f.function),
                expected,
                "calls",
            ),
            s,
            f,
        )
        .input("c_f", c_f)
        .formula(expected_formula)
        .meaning(Meaning::Expected)
        .source("[A] §12.8"),
        deadline_reconciles: fault_inputs(
            Prediction::new(
                id("deadline-reconciles"),
                "reconciles core's deadline ends during the fault, at most",
                deadline,
                "reconciles",
            ),
            s,
            f,
        )
        .formula("min(X, w_core)·(⌊D/120⌋ + 1)·[deadline hit]")
        .meaning(Meaning::UpperBound)
        .source("[D] §12.8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::core::Step;

    fn pairs(xrs: f64) -> CoreShape {
        CoreShape::new(xrs, 2.0, vec![Step::new("resources")])
    }

    #[test]
    fn an_edit_changing_every_composed_resource_fans_out_to_every_xr() {
        // 1,000 XRs of 2 Buckets, both changed: R_rev = 2 + 3 + 2·(1 + 1) = 9.
        let s = pairs(1000.0);
        let p = revision_edit(&s, &Edit::new(2.0, 0.0, 2.0));
        assert_eq!(p.reconciles.value, 9.0);
        assert_eq!(p.requests.value, 1000.0 * 9.0 * 8.0);
        assert_eq!(p.function_calls[0].value, 9_000.0);
        assert_eq!(p.composed_updates.value, 2000.0);
        assert_eq!(p.cloud_updates.value, 2000.0);
        // τ_rev′ = 3 + 2·3 + 2·2·2 = 17 ≤ 100: one edit opens nothing.
        assert_eq!(p.tokens.value, 17.0);
        assert_eq!(p.opens.value, 0.0);
        // 60 changed resources per XR: 9 + 240 = 249 tokens open every circuit.
        let large = CoreShape::new(10.0, 60.0, vec![Step::new("resources")]);
        let p = revision_edit(&large, &Edit::new(60.0, 0.0, 60.0));
        assert_eq!(p.tokens.value, 249.0);
        assert_eq!(p.opens.value, 1.0);
        // An edit that adds resources: each new one's Create and the provider's u writes.
        assert_eq!(
            edit_reconciles(&s, &Edit::new(0.0, 1.0, 3.0)),
            2.0 + 3.0 + 7.0
        );
        // An edit that changes nothing composed is #7114's bare revision: τ_rev.
        assert_eq!(
            edit_tokens(&s, &Edit::new(0.0, 0.0, 2.0)),
            super::super::breaker::revision_tokens(&s)
        );
    }

    fn fault(delay: f64, duration: f64) -> Fault {
        Fault {
            function: "resources".to_owned(),
            delay,
            errors: 0.0,
            down: false,
            ttl: None,
            duration,
        }
    }

    #[test]
    fn a_slow_function_and_the_applies_pass_the_deadline_together() {
        // 60 Buckets, 0.5 s per request: 62 applies take 31 s.
        let mut s = CoreShape::new(1.0, 60.0, vec![Step::new("resources")]);
        s.t_apply = 0.5;
        let (l, calls, hit) = faulted_reconcile(&s, &fault(80.0, 600.0));
        assert_eq!((l, calls, hit), (111.0, 1.0, false));
        let (l, calls, hit) = faulted_reconcile(&s, &fault(90.0, 600.0));
        assert_eq!((l, calls, hit), (RECONCILE_DEADLINE, 1.0, true));
        let p = function_fault(&s, &fault(90.0, 600.0));
        assert_eq!(p.deadline_hit.value, 1.0);
        // One XR: ⌊600/120⌋ + 1 = 6 reconciles at most, one call each; about 5.
        assert_eq!(p.calls_bound.value, 6.0);
        assert_eq!(p.calls.value, 5.0);
        assert_eq!(p.deadline_reconciles.value, 6.0);
        // 1,000 XRs: the workers bound it, 100 reconciles at a time.
        let many = CoreShape { xrs: 1000.0, ..s };
        assert_eq!(
            function_fault(&many, &fault(90.0, 600.0)).calls_bound.value,
            600.0
        );
    }

    #[test]
    fn a_function_that_is_down_is_called_once_per_reconcile_until_the_deadline() {
        let s = CoreShape::new(3.0, 2.0, vec![Step::new("other"), Step::new("resources")]);
        let down = Fault {
            down: true,
            ..fault(0.0, 240.0)
        };
        let (l, calls, hit) = faulted_reconcile(&s, &down);
        assert_eq!((l, calls, hit), (RECONCILE_DEADLINE, 1.0, true));
        assert_eq!(function_fault(&s, &down).calls_bound.value, 3.0 * 3.0);
    }

    #[test]
    fn below_the_deadline_a_fault_is_the_steady_state_with_its_delay_and_ttl() {
        let s = CoreShape {
            sync_interval: f64::INFINITY,
            ..pairs(10.0)
        };
        // 10 XRs every 60 s + 4 s: 600/64 reconciles each in 600 s.
        let p = function_fault(&s, &fault(4.0, 600.0));
        assert_eq!(p.deadline_hit.value, 0.0);
        assert!((p.calls.value - 10.0 * 600.0 / 64.0).abs() < 1e-9);
        // ⌊600/(54 + 4)⌋ + 1 = 11 each, at most.
        assert_eq!(p.calls_bound.value, 110.0);
        // A 30 s TTL instead: ⌊600/27⌋ + 1 = 23 each.
        let ttl = Fault {
            ttl: Some(30.0),
            ..fault(0.0, 600.0)
        };
        assert_eq!(function_fault(&s, &ttl).calls_bound.value, 230.0);
        // A quarter of the calls failing: about 4/3 as many calls, and no hard bound.
        let errors = Fault {
            errors: 0.25,
            ..fault(0.0, 600.0)
        };
        let p = function_fault(&s, &errors);
        assert!((p.calls.value - 100.0 * 4.0 / 3.0).abs() < 1e-9);
        assert!(p.calls_bound.value.is_infinite());
    }
}
