//! A hold in the coupled regime (docs/budget.md §9.7): the global bucket binds while
//! resources fail, or the cloud's quota answers polls 429. The simulation of
//! [`crate::predict::coupled`] gives each class's rate and busiest window; this file turns
//! them into the predictions the hold's checks read, in place of the backoff ramp A(t).

use crate::predict::bounds;
use crate::predict::coupled::{self, Behaviour, Class, Outcome};
use crate::predict::fmt_num;
use crate::predict::formula::{Meaning, Prediction};
use crate::predict::params::Params;
use crate::predict::scan;
use crate::scenario::{Check, Scenario};

/// τ: the tolerance on the simulation's busiest windows (per resource, and of the whole
/// hold's calls). One simulated path is not the run's: the busiest window of the run may pass
/// the simulated one by this share (§9.7).
pub const TOLERANCE: f64 = 0.5;

/// The windows a hold's coupled predictions are made for: the plan's and those of every
/// `perResourceCalls` and `hotLoops` assertion.
pub(super) fn sim_windows(s: &Scenario, plan_windows: &[f64]) -> Vec<f64> {
    let mut w = plan_windows.to_vec();
    for a in &s.assertions {
        if let Check::PerResourceCalls { window, .. } | Check::HotLoops { window, .. } = a.check {
            w.push(window.as_secs_f64());
        }
    }
    w.sort_by(f64::total_cmp);
    w.dedup();
    w
}

/// The most calls a resource of `class` can make in a closed window of `w` in a hold [P]: a
/// reconcile follows the last one's end after at least its poll interval less the jitter,
/// or, when it failed (a lasting error, or a call answered 429), after at least the
/// backoff's first step b, whatever reset the ramp; and a reconcile lasts at least L_min.
#[must_use]
pub fn hard_per_resource(p: &Params, class: &Class, can_fail: bool, w: f64) -> f64 {
    let poll = (class.interval - class.jitter).max(1e-3);
    let gap = if class.behaviour.fails() {
        p.backoff.0
    } else if can_fail {
        p.backoff.0.min(poll)
    } else {
        poll
    };
    f64::from(class.behaviour.calls(class.reads)) * ((w / (gap + p.l_min).max(1e-3)).floor() + 1.0)
}

/// Whether a resource of `class` can fail in the hold: a lasting error, or a quota that may
/// answer its calls 429.
fn can_fail(s: &Scenario, class: &Class) -> bool {
    class.behaviour.fails()
        || s.cloud.accounts.get(class.account).is_some_and(|a| {
            a.quotas.read.is_some()
                || (matches!(class.behaviour, Behaviour::Drift) && a.quotas.mutate.is_some())
        })
}

/// The coupled predictions of hold `name` of `t` seconds, replacing the steady and
/// error-path figures that assume the ramp; `reasons` say why the hold is coupled.
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    s: &Scenario,
    p: &Params,
    alive: &[bool],
    (name, t, alpha): (&str, f64, f64),
    reasons: &super::coverage::Reasons,
    plan_windows: &[f64],
    out: &Outcome,
    preds: &mut Vec<Prediction>,
) {
    let classes = coupled::classes(s, p, alive);
    let windows = sim_windows(s, plan_windows);
    debug_assert_eq!(
        windows.len(),
        out.classes
            .first()
            .map_or(windows.len(), |c| c.busiest_calls.len())
    );
    let why: Vec<&str> = reasons.iter().map(|(w, _)| w.as_str()).collect();
    let mut regime = Prediction::new(
        format!("{name}/coupled/regime"),
        "the coupled regime: the bucket, the backoff and the quotas act on one another",
        1.0,
        "",
    )
    .formula("the hold's bucket binds while resources fail, or a quota rejects polls (§9.7)")
    .meaning(Meaning::Condition)
    .source("[S] §9.7")
    .phase(Some(name))
    .note(format!(
        "{}; the simulation of §9.7 predicts the hold instead of A(t){}",
        why.join("; "),
        out.truncated_at.map_or(String::new(), |at| format!(
            " (simulated {} s of the hold, the rest as a fluid)",
            fmt_num(at.max(0.0).round())
        ))
    ));
    for (_, inputs) in reasons {
        for (k, v) in inputs {
            regime = regime.input(k, *v);
        }
    }
    preds.push(regime);
    if let Some((_, inputs)) = reasons
        .iter()
        .find(|(_, i)| i.iter().any(|x| x.0 == "demand"))
    {
        let demand = inputs.iter().find(|x| x.0 == "demand").map_or(0.0, |x| x.1);
        preds.push(
            Prediction::new(
                format!("{name}/coupled/threshold"),
                "the reconcile rate the hold asks with its failing resources at their cap: below R (and its windows below the bucket), the ramp A(t) holds",
                demand,
                "/s",
            )
            .formula("Σ n_i/(P_i + L̄) + Σ n_f/d_max; binds when it reaches R or its scan tolerance passes ⌊B + R·W⌋ (W = 1, 10, 60 s)")
            .input("R", p.r)
            .input("B", p.b)
            .meaning(Meaning::Expected)
            .source("[A] §9.7")
            .phase(Some(name)),
        );
    }
    preds.push(
        Prediction::new(
            format!("{name}/coupled/calls-rate"),
            "cloud calls per second in the hold, simulated",
            out.calls,
            "/s",
        )
        .formula("the simulation of §9.7 (global bucket, RequeueAfter resets, per-item backoff, quotas, workers)")
        .input("reconciles/s", out.reconciles)
        .input("delayed passes/s", out.delayed)
        .input("429/s", out.rejected)
        .input("span", out.span)
        .meaning(Meaning::Expected)
        .source("[S] §9.7")
        .phase(Some(name)),
    );
    for (class, c) in classes.iter().zip(&out.classes) {
        preds.push(
            Prediction::new(
                format!("{name}/coupled/{}/calls-per-hour", c.label),
                format!("cloud calls per resource-hour of {}, simulated", c.label),
                c.calls * 3600.0,
                "calls",
            )
            .formula("the simulation of §9.7")
            .input("n", c.n as f64)
            .input("reconciles/h", c.reconciles * 3600.0)
            .input("429/h", c.rejected * 3600.0)
            .input("delayed/h", c.delayed * 3600.0)
            .meaning(Meaning::Expected)
            .source("[S] §9.7")
            .phase(Some(name)),
        );
        let fails = can_fail(s, class);
        for (i, &w) in windows.iter().enumerate() {
            let hard = hard_per_resource(p, class, fails, w);
            let sim = ((1.0 + TOLERANCE) * c.busiest_calls[i]).ceil();
            preds.push(
                Prediction::new(
                    format!("{name}/coupled/{}/per-resource/{w}s", c.label),
                    format!("most calls of one resource of {} in {w}s", c.label),
                    sim.min(hard),
                    "calls",
                )
                .formula("min(⌈(1 + τ)·simulated busiest⌉, c·(⌊W/(g + L_min)⌋ + 1)), g = b for a resource that can fail, else P − j")
                .input("simulated busiest", c.busiest_calls[i])
                .input("τ", TOLERANCE)
                .input("hard", hard)
                .input("W", w)
                .meaning(Meaning::Tolerance)
                .source("[S] §9.7 ([P] for the hard part)")
                .phase(Some(name)),
            );
        }
    }
    steady_max(p, (name, t, alpha), &classes, &windows, out, preds);
    error_paths(s, p, name, &classes, out, preds);
}

/// The hold's windowed maximum of cloud calls (`steadyRate`) in the coupled regime.
fn steady_max(
    p: &Params,
    (name, t, alpha): (&str, f64, f64),
    classes: &[Class],
    windows: &[f64],
    out: &Outcome,
    preds: &mut [Prediction],
) {
    for (i, &w) in windows.iter().enumerate() {
        let id = format!("{name}/steady-max/{w}s");
        let Some(pred) = preds.iter_mut().find(|x| x.id == id) else {
            continue;
        };
        let tokens = bounds::bucket_window(p.b, p.r, w + p.l_max);
        let c_max = classes
            .iter()
            .map(|c| f64::from(c.behaviour.calls(c.reads)))
            .fold(1.0, f64::max);
        // Reconciles beyond their polls' c_poll calls: a drifting resource's Update, a
        // failing create; at most their simulated busiest reconciles, with τ.
        let extra: f64 = classes
            .iter()
            .zip(&out.classes)
            .map(|(c, o)| {
                let more = f64::from(c.behaviour.calls(c.reads)) - p.c_poll;
                if more > 0.0 {
                    c.n as f64 * more * ((1.0 + TOLERANCE) * o.busiest_reconciles[i]).ceil()
                } else {
                    0.0
                }
            })
            .sum();
        let bucket = (p.c_poll * tokens + extra).min(c_max * tokens);
        let naus = scan::naus_tolerance(out.calls, w, t.max(w), alpha) as f64;
        let sim = ((1.0 + TOLERANCE) * out.busiest_calls[i]).ceil();
        let value = if out.delayed > 0.0 {
            bucket
        } else {
            naus.max(sim).min(c_max * tokens)
        };
        *pred = Prediction::new(id, pred.what.clone(), value, "calls")
            .formula(if out.delayed > 0.0 {
                "min(c_poll·⌊B + R·(W + Δ)⌋ + Σ n_k·(c_k − c_poll)·⌈(1 + τ)·busiest reconciles_k⌉, c_max·⌊B + R·(W + Δ)⌋) (the bucket binds: every reconcile takes a token)"
            } else {
                "min(max(Naus tolerance of the simulated call rate, ⌈(1 + τ)·simulated busiest⌉), c_max·⌊B + R·(W + Δ)⌋)"
            })
            .input("B", p.b)
            .input("R", p.r)
            .input("W", w)
            .input("Δ", p.l_max)
            .input("c_poll", p.c_poll)
            .input("extra", extra)
            .input("λ_sim", out.calls)
            .input("simulated busiest", out.busiest_calls[i])
            .input("τ", TOLERANCE)
            .meaning(Meaning::Tolerance)
            .source("[D][S] §2.2, §9.7")
            .phase(Some(name))
            .note("the coupled regime (§9.7): the simulated hold, not the ramp A(t), sets the failing and throttled resources' calls");
    }
}

/// The error-path figures of §9.1–§9.2 that the coupled regime changes: each failing share's
/// calls per resource-hour, and the healthy resources' poll period.
fn error_paths(
    s: &Scenario,
    p: &Params,
    name: &str,
    classes: &[Class],
    out: &Outcome,
    preds: &mut Vec<Prediction>,
) {
    for pred in preds.iter_mut() {
        let Some(share) = pred
            .id
            .strip_prefix(&format!("{name}/error-paths/"))
            .and_then(|x| x.strip_suffix("/calls-per-hour"))
        else {
            continue;
        };
        if let Some(c) = out.class(share) {
            pred.value = c.calls * 3600.0;
            pred.formula = format!(
                "simulated (§9.7): the bucket binds and resets the backoff; {}",
                pred.formula
            );
            pred.source = "[S] §9.7".to_owned();
        }
    }
    // The healthy resources' period: their own interval, stretched by the simulated wait
    // between two successful polls.
    let (mut weight, mut stretch) = (0.0, 0.0);
    for (c, o) in classes.iter().zip(&out.classes) {
        if c.behaviour == Behaviour::Healthy && o.success_gap.is_finite() {
            weight += c.n as f64;
            stretch += c.n as f64 * (o.success_gap - c.interval - p.l).max(0.0);
        }
    }
    if weight == 0.0 {
        return;
    }
    let stretch = stretch / weight;
    let id = format!("{name}/error-paths/healthy-poll-period");
    preds.retain(|x| x.id != id);
    let poll = s.settings.poll_interval.as_secs_f64();
    preds.push(
        Prediction::new(
            id,
            "the healthy resources' effective poll period",
            poll + stretch,
            "s",
        )
        .formula("P + the simulated mean wait between two successful polls beyond P_i + L̄ (§9.7)")
        .input("P", poll)
        .input("stretch", stretch)
        .phase(Some(name))
        .source("[S] §9.7"),
    );
}
