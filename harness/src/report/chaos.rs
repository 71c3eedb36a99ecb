//! The kills and the memory of a run, as lines that the text and HTML reports both show.

use std::collections::BTreeSet;

use crate::predict::fmt_num;
use crate::result::RunResult;

/// Names listed per kill before "and N more".
const NAMED: usize = 20;

/// One line per kill, then what crossplane-runtime would make of the interrupted creates;
/// empty when the run killed nothing.
#[must_use]
pub fn kill_lines(r: &RunResult) -> Vec<String> {
    if r.kills.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "kills: {} (the provider aborted with no graceful shutdown, then a new one started)",
        r.kills.len()
    )];
    let mut all = BTreeSet::new();
    for k in &r.kills {
        let mut line = format!(
            "kill at {} s during {} ({}): ",
            fmt_num(k.at_us as f64 / 1e6),
            k.during,
            k.kill_phase
        );
        if k.interrupted_creates.is_empty() {
            line.push_str("no create interrupted");
        } else {
            line.push_str(&format!(
                "{} creates interrupted: {}",
                k.interrupted_creates.len(),
                k.interrupted_creates
                    .iter()
                    .take(NAMED)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            if k.interrupted_creates.len() > NAMED {
                line.push_str(&format!(
                    " and {} more",
                    k.interrupted_creates.len() - NAMED
                ));
            }
        }
        out.push(line);
        all.extend(k.interrupted_creates.iter().map(String::as_str));
    }
    if !all.is_empty() {
        out.push(format!(
            "crossplane-runtime v2.4 would leave these {} resources stuck: a kill came between external-create-pending and external-create-succeeded/failed, so its next reconcile cannot tell whether the Create happened and stops (path P5, Warning \"cannot determine creation result - remove the crossplane.io/external-create-pending annotation if it is safe to proceed\", no requeue) until a human acts. This is its documented behaviour; this provider's Creates are idempotent, so it carries on.",
            all.len()
        ));
    }
    out
}

/// The first and last memory sample and the peak of each component; empty without samples.
#[must_use]
pub fn memory_lines(r: &RunResult) -> Vec<String> {
    let (Some(first), Some(last)) = (r.memory.first(), r.memory.last()) else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "memory: {} samples from {} s to {} s",
        r.memory.len(),
        fmt_num(first.at_us as f64 / 1e6),
        fmt_num(last.at_us as f64 / 1e6)
    )];
    for (name, v0) in &first.values {
        let value = |s: &crate::measure::MemorySample| {
            s.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
        };
        let peak = r
            .memory
            .iter()
            .filter_map(value)
            .fold(f64::NEG_INFINITY, f64::max);
        let (scale, unit) = if name.ends_with("_bytes") {
            (1.0 / 1_048_576.0, " MiB")
        } else {
            (1.0, "")
        };
        out.push(format!(
            "{name}: {}{unit} → {}{unit}, peak {}{unit}",
            fmt_num(v0 * scale),
            fmt_num(value(last).unwrap_or(f64::NAN) * scale),
            fmt_num(peak * scale)
        ));
    }
    out
}
