//! `timeToReady`: a quantile of the phase's time to Ready against its prediction or a fixed limit.

use limiter::go::GoDuration;

use crate::predict::{Plan, Prediction, backlog};
use crate::result::model::{LimitKind, Outcome, RunResult, Verdict};
use crate::scenario::{Assertion, Scenario, TtrLimit};

pub(super) fn ttr_verdict(
    s: &Scenario,
    plan: &Plan,
    res: &RunResult,
    a: &Assertion,
    q: f64,
    limit: TtrLimit,
) -> Verdict {
    let phase = a
        .phase
        .map(|i| s.phases[i].name.as_str())
        .unwrap_or_default();
    let pred = plan
        .find(&format!("{phase}/ttr-p{}", q * 100.0))
        .cloned()
        .or_else(|| {
            let pp = plan.phases.iter().find(|p| p.name == phase)?;
            let b = pp.backlog.as_ref()?;
            let base = plan.find(&format!("{phase}/ttr-p50"))?;
            let tau = crate::predict::unloaded_ttr(s, &pp.params, &s.phases[a.phase?], q)?;
            let mut p = base.clone();
            p.value = backlog::ttr_quantile(&pp.params, b, q, tau);
            p.id = format!("{phase}/ttr-p{}", q * 100.0);
            for input in &mut p.inputs {
                match input.name.as_str() {
                    "τ_unloaded" => input.value = tau,
                    "q" => input.value = q,
                    _ => {}
                }
            }
            Some(p)
        });
    let observed = res
        .phases
        .iter()
        .find(|p| p.name == phase)
        .and_then(|p| p.ttr.as_ref())
        .and_then(|t| t.quantile(q))
        .unwrap_or(f64::NAN);
    let predicted = pred.as_ref().map_or(f64::NAN, |p| p.value);
    let (lim, how) = match limit {
        TtrLimit::Fixed(d) => (
            d.as_secs_f64(),
            format!("maxDuration {}", GoDuration::from_std(d)),
        ),
        TtrLimit::Predicted { tolerance_percent } => (
            predicted * (1.0 + tolerance_percent / 100.0),
            format!("prediction + {tolerance_percent}%"),
        ),
    };
    Verdict {
        name: a.name.clone(),
        check: "timeToReady".into(),
        phase: None,
        formula: pred
            .as_ref()
            .map_or_else(String::new, |p| p.formula.clone()),
        inputs: pred
            .as_ref()
            .map(Prediction::inputs_text)
            .unwrap_or_default(),
        predicted,
        limit: lim,
        observed,
        upper: true,
        margin: lim - observed,
        pass: observed <= lim,
        outcome: Outcome::default(),
        note: Some(match pred.as_ref().and_then(|p| p.note.as_deref()) {
            Some(why) => format!("limit: {how}; {why}"),
            None => format!("limit: {how}"),
        }),
        calls_window_s: None,
        kind: match (&pred, limit) {
            (Some(p), TtrLimit::Predicted { .. }) => LimitKind::of_prediction(p),
            _ => LimitKind::Given,
        },
    }
}
