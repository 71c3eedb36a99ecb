//! §12.8 for core's own phases: each XR group's share of a compositionUpdate's fan-out or a
//! functionFault's calls, and the bounds the checks restricted to a phase take.

use super::{CoreGroupPlan, DEFAULTS, request_windows, steady_function_calls, steady_requests};
use crate::predict::core as model;
use crate::predict::formula::{Meaning, Prediction};
use crate::scenario::{Action, Scenario};

fn in_phase(mut p: Prediction, phase: &str, group: &str) -> Prediction {
    p.id = format!(
        "core/phase/{phase}/{group}/{}",
        p.id.strip_prefix("core/").unwrap_or(&p.id)
    );
    p.what = format!("{phase}, {group}: {}", p.what);
    p.phase(Some(phase))
}

/// §12.8 for core's own phases: each XR group's share of a compositionUpdate's fan-out or a
/// functionFault's calls (ids `core/phase/<phase>/<group>/…`), and the bounds the checks
/// restricted to the phase take (`core/phase/<phase>/api-requests/<W>s`,
/// `core/phase/<phase>/function-calls`).
pub(super) fn predictions(s: &Scenario, groups: &[CoreGroupPlan]) -> Vec<Prediction> {
    let mut out = Vec::new();
    for (i, phase) in s.phases.iter().enumerate() {
        let name = phase.name.as_str();
        let timeout = phase.timeout.as_secs_f64();
        // The other groups poll as in steady state meanwhile.
        let acted = |g: &CoreGroupPlan| {
            phase
                .composites
                .iter()
                .any(|&x| s.composites.groups[x].name == g.group)
        };
        match &phase.action {
            Action::CompositionUpdate(edit) => {
                let (Some((changed, created)), Some(after)) =
                    (edit.changed_per_xr, edit.shape.resources_per_xr())
                else {
                    continue;
                };
                let e = model::phases::Edit::new(
                    f64::from(changed),
                    f64::from(created),
                    f64::from(after),
                );
                let (mut requests, mut calls) = (0.0, 0.0);
                for g in groups {
                    if acted(g) {
                        let p = model::phases::revision_edit(&g.shape, &e);
                        requests += p.requests.value;
                        calls += p.function_calls.iter().map(|c| c.value).sum::<f64>();
                        out.extend(p.all().map(|x| in_phase(x.clone(), name, &g.group)));
                    }
                }
                for w in request_windows(s, Some(i)) {
                    let steady = steady_requests(groups, w);
                    out.push(
                        Prediction::new(
                            format!("core/phase/{name}/api-requests/{w}s"),
                            format!("core's API requests in any {w}s window of {name}"),
                            requests + steady,
                            "requests",
                        )
                        .formula(
                            "Σ_groups X·R_rev·(2·N_x′ + 4 + S) + the steady bound in W (§12.1)",
                        )
                        .input("fan-out", requests)
                        .input("steady", steady)
                        .input("W", w)
                        .meaning(Meaning::UpperBound)
                        .source("[D] §12.1, §12.8")
                        .checks(&["coreApiRequests"])
                        .phase(Some(name))
                        .note(format!("the whole fan-out in one window; {DEFAULTS}")),
                    );
                }
                let steady = steady_function_calls(groups, timeout);
                out.push(
                    function_calls(
                        name,
                        calls + steady,
                        "Σ_groups X·R_rev·Σk_f + the steady bound over the phase's timeout (§12.2)",
                        "[D] §12.2, §12.8",
                    )
                    .input("fan-out", calls)
                    .input("steady", steady)
                    .input("T", timeout)
                    .note(DEFAULTS),
                );
            }
            Action::FunctionFault {
                function,
                fault,
                duration: Some(d),
            } => {
                let f = model::phases::Fault {
                    function: function.clone(),
                    delay: fault.delay.as_secs_f64(),
                    errors: fault.error_percent / 100.0,
                    down: fault.down,
                    ttl: fault.ttl.map(|t| t.as_secs_f64()),
                    duration: d.as_secs_f64(),
                };
                let mut bound = 0.0;
                for g in groups {
                    if acted(g) {
                        let p = model::phases::function_fault(&g.shape, &f);
                        // Every call of a reconcile the fault slows or fails: the faulted
                        // function's bound times the pipeline's calls per its own.
                        let k_f = g.shape.calls_of(function);
                        let per = if k_f > 0.0 {
                            g.shape.calls_per_reconcile() / k_f
                        } else {
                            0.0
                        };
                        bound += p.calls_bound.value * per.max(1.0);
                        out.extend(p.all().map(|x| in_phase(x.clone(), name, &g.group)));
                    } else {
                        bound += steady_function_calls([g], f.duration);
                    }
                }
                out.push(
                    function_calls(
                        name,
                        bound,
                        "Σ_groups calling it: the fault's bound·Σk_i/k_f; the others' steady bound over D",
                        "[D] §12.8",
                    )
                    .input("D", f.duration)
                    .note(DEFAULTS),
                );
            }
            Action::Hold { duration } => {
                let d = duration.as_secs_f64();
                let steady = steady_function_calls(groups, d);
                out.push(
                    function_calls(
                        name,
                        steady,
                        "Σ_groups Σ_f X·k_f·(⌊D/(0.9·TTL + L)⌋ + 1 + 2·i·(⌊D/(0.9·S_sync)⌋ + 1))",
                        "[D] §12.2",
                    )
                    .input("D", d)
                    .note(format!(
                        "the steady state: nothing changes in the hold; {DEFAULTS}"
                    )),
                );
            }
            _ => {}
        }
    }
    out
}

/// `core/phase/<phase>/function-calls`: calls of every function in the phase, at most.
fn function_calls(phase: &str, value: f64, formula: &str, source: &str) -> Prediction {
    Prediction::new(
        format!("core/phase/{phase}/function-calls"),
        format!("calls of every function in {phase}"),
        value,
        "calls",
    )
    .formula(formula)
    .meaning(Meaning::UpperBound)
    .source(source)
    .checks(&["functionCalls"])
    .phase(Some(phase))
}
