//! Fault phases: a cloud outage (failing reconciles, recovery) and added cloud latency
//! (saturated workers).

use limiter::crossplane::RateLimitModel;

use super::scope::phase_duration;
use crate::predict::backlog::{self, Backlog};
use crate::predict::bounds::Excess;
use crate::predict::formula::{Meaning, Prediction, fmt_num};
use crate::predict::params::Params;
use crate::scenario::Phase;

/// The predictions of a cloud outage of `outage` seconds over `population` resources.
pub(super) fn outage_predictions(
    p: &Params,
    name: &str,
    outage: f64,
    population: f64,
    preds: &mut Vec<Prediction>,
) {
    let (base, cap) = (fmt_num(p.backoff.0), fmt_num(p.backoff.1));
    let retry = (population / (p.backoff.1 + p.l)).min(backlog::effective_rate(p));
    preds.push(Prediction::new(format!("{name}/failing-rate"), format!("failed reconciles per second once backoff reaches {cap} s"), retry, "/s")
        .formula(format!("min(R_eff, N/({cap} s + L̄))")).input("N", population).input("R_eff", backlog::effective_rate(p))
        .meaning(Meaning::Expected).source("[A] §4.3, §6").phase(Some(name))
        .note(if p.model == RateLimitModel::Crossplane { format!("the middleware resets backoff on every throttled pass: under a backlog retries stay at {base} s") } else { format!("backoff {base} s·2^(k−1), capped at {cap} s") }));
    let recover = backlog::last_start(
        p,
        &Backlog {
            per_controller: vec![population],
            m: 1.0,
            a_first: f64::from(p.api.poll),
            a_next: 0.0,
            arrival_rate: None,
        },
    ) + p.backoff.1;
    preds.push(
        Prediction::new(
            format!("{name}/recovery"),
            "all resources reconciled again after the outage",
            recover,
            "s",
        )
        .formula(format!("{cap} s (longest backoff) + (N − B)/R"))
        .input("N", population)
        .input("outage", outage)
        .meaning(Meaning::Expected)
        .source("[A] §4.2, §4.3")
        .phase(Some(name)),
    );
}

/// The excess of a cloud-latency phase: none unless the added latency saturates the workers
/// (R·L̄ > w), when delayed copies bunch for the whole phase.
pub(super) fn latency_excess(p: &Params, phase: &Phase) -> Option<Excess> {
    (p.r * p.l > p.w).then(|| Excess {
        q: phase_duration(phase),
        mechanism: format!(
            "workers saturated (R·L̄ = {:.1} > w = {}): delayed copies bunch for the whole phase (§2.2 M2, §8 row 4)",
            p.r * p.l,
            p.w
        ),
        ..Excess::default()
    })
}
