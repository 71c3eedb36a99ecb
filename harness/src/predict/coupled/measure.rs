//! What a simulated hold did, per class and in all, from the events it recorded.

use super::sim::Sim;
use super::{Class, ClassOutcome, Outcome};

/// Per window, the most events of one item in some closed window, per class; and of all.
fn busiest(events: &[(f64, u32)], class_of: &[u32], classes: usize, w: f64) -> (Vec<f64>, f64) {
    let mut per_item: Vec<Vec<f64>> = vec![Vec::new(); class_of.len()];
    for &(t, i) in events {
        per_item[i as usize].push(t);
    }
    let mut out = vec![0.0f64; classes];
    for (i, times) in per_item.iter().enumerate() {
        let most = most_in_window(times, w);
        let k = class_of[i] as usize;
        out[k] = out[k].max(most as f64);
    }
    let all: Vec<f64> = events.iter().map(|e| e.0).collect();
    (out, most_in_window(&all, w) as f64)
}

/// The most of the sorted `times` in some closed window of `w`.
fn most_in_window(times: &[f64], w: f64) -> usize {
    let (mut lo, mut most) = (0, 0);
    for hi in 0..times.len() {
        while times[hi] - times[lo] > w + 1e-9 {
            lo += 1;
        }
        most = most.max(hi + 1 - lo);
    }
    most
}

pub(super) fn measure(
    sim: &Sim<'_>,
    classes: &[Class],
    span: f64,
    truncated_at: Option<f64>,
) -> Outcome {
    let per = |count: u64, n: usize| {
        if span > 0.0 && n > 0 {
            count as f64 / n as f64 / span
        } else {
            0.0
        }
    };
    let mut calls = vec![0u64; classes.len()];
    for &(_, i) in &sim.calls {
        calls[sim.class_of[i as usize] as usize] += 1;
    }
    let mut runs = vec![0u64; classes.len()];
    for &(_, i) in &sim.runs {
        runs[sim.class_of[i as usize] as usize] += 1;
    }
    let mut busiest_calls = vec![Vec::new(); classes.len()];
    let mut busiest_runs = vec![Vec::new(); classes.len()];
    let mut total = Vec::new();
    for &w in &sim.cfg.windows {
        let (c, all) = busiest(&sim.calls, &sim.class_of, classes.len(), w);
        let (r, _) = busiest(&sim.runs, &sim.class_of, classes.len(), w);
        // A window longer than the span simulated: the fluid continuation.
        let stretch = if w > span && span > 0.0 {
            w / span
        } else {
            1.0
        };
        for k in 0..classes.len() {
            busiest_calls[k].push((c[k] * stretch).ceil());
            busiest_runs[k].push((r[k] * stretch).ceil());
        }
        total.push((all * stretch).ceil());
    }
    let sum = |v: &[u64]| v.iter().sum::<u64>();
    let total_rate = |count: u64| if span > 0.0 { count as f64 / span } else { 0.0 };
    Outcome {
        classes: classes
            .iter()
            .enumerate()
            .map(|(k, c)| ClassOutcome {
                label: c.label.clone(),
                n: c.n,
                reconciles: per(runs[k], c.n),
                calls: per(calls[k], c.n),
                rejected: per(sim.rejected[k], c.n),
                delayed: per(sim.delayed[k], c.n),
                busiest_calls: busiest_calls[k].clone(),
                busiest_reconciles: busiest_runs[k].clone(),
                success_gap: if sim.success_gaps[k].1 > 0 {
                    sim.success_gaps[k].0 / sim.success_gaps[k].1 as f64
                } else {
                    f64::NAN
                },
            })
            .collect(),
        calls: total_rate(sum(&calls)),
        reconciles: total_rate(sum(&runs)),
        delayed: total_rate(sum(&sim.delayed)),
        rejected: total_rate(sum(&sim.rejected)),
        busiest_calls: total,
        span,
        truncated_at,
    }
}
