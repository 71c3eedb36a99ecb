//! budget.md §3.6 (b) at evaluation time: for a hold the plan puts within the echo of a wave,
//! the tolerance of the windowed maximum conditioned on when each resource was last polled
//! ([`crate::predict::conditional`]), from the observed cloud calls.

use std::collections::HashMap;
use std::time::Duration;

use super::observe::{CallAction, Observations};
use crate::predict::conditional::{Hold, Renewal, conditional_bound};
use crate::predict::error_paths;
use crate::predict::{Meaning, Plan, Prediction, fmt_num};
use crate::scenario::Scenario;

const US: f64 = 1e6;

/// The source tag of the conditional prediction.
pub const SOURCE: &str = "[D] §3.6 (b)";

/// The id of the conditional prediction for `phase` and a window of `w` seconds.
#[must_use]
pub fn id(phase: &str, w: f64) -> String {
    format!("{phase}/steady-max-conditional/{w}s")
}

/// Whether the plan's tolerance for this hold is the unconditional echo of a wave (§3.6).
fn echo_prediction<'a>(plan: &'a Plan, phase: &str, w: f64) -> Option<&'a Prediction> {
    plan.find(&format!("{phase}/steady-max/{w}s"))
        .filter(|p| p.source.contains("§3.6"))
}

/// The conditional tolerance of the hold `phase` for windows of `w` seconds.
///
/// `None` when the plan does not predict an echo for this hold (the stationary or the
/// saturated tolerance applies); `Some(Err(reason))` when the renewal model cannot be used.
#[must_use]
pub fn conditional(
    s: &Scenario,
    plan: &Plan,
    obs: &Observations,
    phase: &str,
    w: f64,
) -> Option<Result<Prediction, String>> {
    let echo = echo_prediction(plan, phase, w)?;
    Some(build(s, plan, obs, phase, w, echo))
}

fn build(
    s: &Scenario,
    plan: &Plan,
    obs: &Observations,
    phase: &str,
    w: f64,
    echo: &Prediction,
) -> Result<Prediction, String> {
    let pp = plan
        .phases
        .iter()
        .find(|p| p.name == phase)
        .ok_or("the phase is not in the plan")?;
    if pp.steady.saturated {
        return Err(format!(
            "the phase is saturated (demand {}/s against the server's rate): resources wait for tokens or workers, and the renewal model holds only while nothing throttles",
            fmt_num(pp.steady.demand)
        ));
    }
    let span = obs
        .phases
        .iter()
        .find(|p| p.name == phase)
        .ok_or("the phase did not run")?;
    let start = span.start_us;
    // Each resource's last call at or before the start: (time, a successful poll?).
    let mut last: HashMap<&str, (u64, bool)> = HashMap::new();
    for c in obs.cloud_calls.iter().filter(|c| c.at_us <= start) {
        let poll = c.action == CallAction::Get && !c.throttled && c.status < 400;
        let e = last.entry(c.name.as_str()).or_insert((c.at_us, poll));
        if c.at_us >= e.0 {
            *e = (c.at_us, poll);
        }
    }
    let jitter = s.settings.jitter();
    // The faults in force in the hold: its resources on the failure backoff are not polled;
    // their calls are added apart (§9.6).
    let seen = match s.phases.iter().position(|p| p.name == phase) {
        Some(i) if s.changes_faults() => std::borrow::Cow::Owned(s.during(i)),
        _ => std::borrow::Cow::Borrowed(s),
    };
    let off_poll = error_paths::off_poll_names(&seen);
    let resources: Vec<Renewal> = obs
        .resources
        .iter()
        .filter(|r| r.created_us <= start && r.deleted_us.is_none_or(|d| d > start))
        .filter(|r| {
            r.external_name
                .as_deref()
                .is_none_or(|n| !off_poll.contains(n))
        })
        .map(|r| {
            let seen = r
                .external_name
                .as_deref()
                .and_then(|n| last.get(n).copied());
            let poll = r.expected_poll_s;
            Renewal {
                last: seen.map(|(t, _)| t as f64 / US),
                unsettled: seen.is_some_and(|(_, ok)| !ok),
                poll,
                jitter: jitter
                    .for_interval(Duration::try_from_secs_f64(poll).unwrap_or_default())
                    .as_secs_f64(),
            }
        })
        .collect();
    let p = &pp.params;
    let hold = Hold {
        start: start as f64 / US,
        duration: span.end_us.saturating_sub(start) as f64 / US,
        window: w,
        alpha: s.prediction.alpha,
        l_min: p.l_min,
        l: p.l,
        l_max: p.l_max,
    };
    let b = conditional_bound(&resources, &hold).map_err(|e| e.to_string())?;
    let all = vec![true; seen.groups.len()];
    let failing = error_paths::window_excess(&seen, p, &all, w);
    let mut note = format!(
        "conditioned on the observed last polls; the unconditional echo tolerance is {} ({})",
        fmt_num(echo.value),
        echo.formula
    );
    if b.overdue > 0 {
        note.push_str(&format!(
            "; {} resources were overdue or not settled at the start (last call not a successful poll, or its next poll already late) and are modelled as polled at the start, outside what the proof covers",
            b.overdue
        ));
    }
    let peak = b.busiest_mean / (w + b.delta);
    if p.has_bucket() && peak > p.r {
        note.push_str(&format!(
            "; the echo's peak ({}/s) is above R = {}: the bucket smooths it there, and the bound is not proven where it throttles",
            fmt_num(peak),
            fmt_num(p.r)
        ));
    }
    if !failing.terms.is_empty() {
        note.push_str(&format!(
            "; the faulted shares add {} calls: {} (§9.6)",
            fmt_num(failing.calls),
            failing.terms.join(" + ")
        ));
    }
    Ok(Prediction::new(
        id(phase, w),
        format!("windowed maximum of cloud calls per {w}s in the hold, conditioned on each resource's last poll"),
        (b.k as f64 + failing.calls).ceil(),
        "calls",
    )
    .formula("least k with Σ_g exp(−x_g²/(2(v_g + x_g/3))) ≤ α, x_g = k − m_g; m_g and v_g = Σ_i p_ig(1 − p_ig) over grid windows of W + δ, from each resource's next polls after its last call e_i: uniform on [e_i + L + P_i − j_i, e_i + L + P_i + j_i), then renewing (one Observe GET per poll)")
    .input("N", resources.len() as f64)
    .input("conditioned", b.conditioned as f64)
    .input("overdue", b.overdue as f64)
    .input("never polled", b.stationary as f64)
    .input("α", hold.alpha)
    .input("W", w)
    .input("δ", b.delta)
    .input("G", b.windows as f64)
    .input("T", hold.duration)
    .input("busiest m_g", b.busiest_mean)
    .input("its v_g", b.busiest_var)
    .input("busiest at", b.busiest_at)
    .input("cycles", b.cycles as f64)
    .input("unconditional echo", echo.value)
    .meaning(Meaning::Tolerance)
    .source(SOURCE)
    .phase(Some(phase))
    .note(note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::plan;
    use crate::result::evaluate;
    use crate::result::observe::{CloudCall, ResourceTimes};

    const YAML: &str = "apiVersion: harness/v1\nname: echo\nprovider: {maxReconcileRate: 100, pollInterval: 1m}\nresources:\n  - {name: b, kind: Bucket, count: 400}\nphases:\n  - {name: create, action: create, rate: 400}\n  - {name: hold, action: hold, duration: 2m}\nassertions:\n  - {check: steadyRate, phase: hold, window: 10s}\n";

    fn call(at_us: u64, action: CallAction, name: &str) -> CloudCall {
        CloudCall {
            at_us,
            account: "default".into(),
            action,
            op: "generic:get".into(),
            name: name.into(),
            status: if action == CallAction::Create {
                201
            } else {
                200
            },
            throttled: false,
            retry_not_before_us: None,
        }
    }

    /// 400 buckets created in the first second, Ready one second later, then polled once a
    /// minute with 10 % jitter: the hold that follows is inside the first echo.
    fn observations() -> Observations {
        let (create_end, hold_end) = (5_000_000u64, 125_000_000u64);
        let mut calls = Vec::new();
        let mut resources = Vec::new();
        let mut seed = 1u64;
        for i in 0..400u64 {
            let name = format!("b-{i}");
            let t = i * 2_500; // 400 creates over 1 s
            calls.push(call(t, CallAction::Get, &name));
            calls.push(call(t + 1_000, CallAction::Create, &name));
            let ready = t + 1_000_000;
            calls.push(call(ready, CallAction::Get, &name));
            // The next poll: 50 ms of reconcile, then 54 to 66 s.
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (seed >> 11) as f64 / (1u64 << 53) as f64;
            let next = ready + 50_000 + (54e6 + 12e6 * u) as u64;
            calls.push(call(next, CallAction::Get, &name));
            resources.push(ResourceTimes {
                name: name.clone(),
                group: "b".into(),
                created_in: "create".into(),
                created_us: t,
                ready_us: Some(ready),
                deleted_us: None,
                gone_us: None,
                external_name: Some(name),
                expected_poll_s: 60.0,
            });
        }
        Observations {
            resources,
            ..Observations::create_then_hold(calls, create_end, hold_end)
        }
    }

    #[test]
    fn evaluate_uses_the_conditional_bound_for_a_hold_right_after_a_create_wave() {
        let s = crate::scenario::parse(YAML, "echo.yaml").expect("valid");
        let plan = plan(&s);
        let echo = plan.find("hold/steady-max/10s").expect("planned").clone();
        assert!(echo.source.contains("§3.6"), "{echo:?}");
        let result = evaluate(&s, &plan, &observations());
        let v = &result.verdicts[0];
        assert_eq!(v.check, "steadyRate");
        let cond = result
            .predictions
            .iter()
            .find(|p| p.id == id("hold", 10.0))
            .expect("the conditional prediction is reported");
        assert_eq!(cond.source, SOURCE);
        assert_eq!(v.predicted, cond.value);
        assert_eq!(v.formula, cond.formula);
        eprintln!(
            "conditional {} (inputs {}), unconditional echo {}, observed {}",
            cond.value,
            cond.inputs_text(),
            echo.value,
            v.observed
        );
        // Tighter than the unconditional echo, which stays visible.
        assert!(cond.value < echo.value, "{} vs {}", cond.value, echo.value);
        assert!(result.predictions.iter().any(|p| p.id == echo.id));
        assert!(
            v.note
                .as_deref()
                .is_some_and(|n| n.contains("unconditional echo tolerance")),
            "{v:?}"
        );
        assert_eq!(cond.get("conditioned"), Some(400.0));
        assert_eq!(cond.get("overdue"), Some(0.0));
        // 400 polls in 1 s, then one each 54-66 s later: the busiest window holds most of
        // them, and the observed maximum is within the bound.
        assert!(v.observed > 250.0 && v.pass, "{v:?}");
    }

    #[test]
    fn a_saturated_hold_keeps_the_plans_tolerance() {
        let yaml = YAML.replace("maxReconcileRate: 100", "maxReconcileRate: 1");
        let s = crate::scenario::parse(&yaml, "echo.yaml").expect("valid");
        let plan = plan(&s);
        // Saturated under a bucket: the plan gives ⌊B + R·W⌋, not an echo.
        assert!(conditional(&s, &plan, &observations(), "hold", 10.0).is_none());
    }
}
