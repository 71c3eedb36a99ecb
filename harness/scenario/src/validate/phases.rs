//! The `phases` section: which fields each action takes, and each phase's end condition and
//! timeout.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_saphyr::Spanned;

use super::checker::Checker;
use super::cloud::{latencies, status};
use super::pos;
use crate::composite::Composites;
use crate::error::Pos;
use crate::model::{Action, Phase, ResourceGroup};
use crate::raw::{ActionName, RawPhase, Until};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a resync phase waits for the first recorded token after the provider has
/// reconciled a resource it asked for, by default.
pub const DEFAULT_HANDLED_GRACE: Duration = Duration::from_secs(10);

/// The window a kill phase's kills fall in when it gives no `duration`.
pub const DEFAULT_KILL_WINDOW: Duration = Duration::from_secs(60);

/// Which optional phase fields an action takes.
fn allowed(action: ActionName) -> &'static [&'static str] {
    match action {
        ActionName::Create | ActionName::Delete => &["rate", "groups"],
        ActionName::Resync => &["rate", "groups", "handledGrace"],
        ActionName::Update => &["rate", "groups", "spec"],
        ActionName::Hold => &["duration"],
        ActionName::CloudOutage => &["duration", "status"],
        ActionName::CloudLatency => &["duration", "latency"],
        ActionName::CloudFault => &["groups", "duration", "faults", "drift"],
        ActionName::Restart => &[],
        ActionName::Kill => &["during", "count", "duration"],
        ActionName::CompositionUpdate => &["composition", "patch"],
        ActionName::FunctionFault => &[
            "function",
            "duration",
            "delay",
            "errorPercent",
            "down",
            "ttl",
        ],
    }
}

fn action_str(a: ActionName) -> &'static str {
    match a {
        ActionName::Create => "create",
        ActionName::Hold => "hold",
        ActionName::Resync => "resync",
        ActionName::Update => "update",
        ActionName::CloudOutage => "cloudOutage",
        ActionName::CloudLatency => "cloudLatency",
        ActionName::CloudFault => "cloudFault",
        ActionName::Restart => "restart",
        ActionName::Kill => "kill",
        ActionName::Delete => "delete",
        ActionName::CompositionUpdate => "compositionUpdate",
        ActionName::FunctionFault => "functionFault",
    }
}

/// A phase as listed: its name, which the rest of the scenario may name even when the
/// phase's body failed its checks (those problems are reported once, by the phase), and the
/// phase when it passed them.
pub(super) struct Declared {
    /// The phase's name.
    pub name: String,
    /// The phase, if its body passed its checks.
    pub phase: Option<Phase>,
}

/// Every phase of `raw`, in its order: a kill phase's `during` and an assertion's phase are
/// indices into this list.
pub(super) fn phases(
    c: &mut Checker,
    raw: &[RawPhase],
    (groups, xr_groups, composites): (&[ResourceGroup], &[String], &Composites),
    scenario: &Spanned<String>,
) -> Vec<Declared> {
    if raw.is_empty() {
        c.err(
            pos(scenario),
            "phases is empty, expected at least one phase",
        );
    }
    let mut names = BTreeSet::new();
    raw.iter()
        .enumerate()
        .map(|(i, p)| Declared {
            name: p.name.value.clone(),
            phase: phase(c, raw, i, p, (groups, xr_groups, composites), &mut names),
        })
        .collect()
}

fn phase(
    c: &mut Checker,
    all: &[RawPhase],
    index: usize,
    p: &RawPhase,
    (groups, xr_groups, composites): (&[ResourceGroup], &[String], &Composites),
    names: &mut BTreeSet<String>,
) -> Option<Phase> {
    c.name(&p.name, "phase name");
    c.unique(names, &p.name, "phase");
    let a = p.action.value;
    let ok = allowed(a);
    let present: [(&str, Option<Pos>); 18] = [
        ("rate", p.rate.as_ref().map(pos)),
        ("groups", p.groups.as_ref().and_then(|g| g.first()).map(pos)),
        ("duration", p.duration.as_ref().map(pos)),
        ("spec", p.spec.as_ref().map(pos)),
        ("latency", p.latency.as_ref().map(|_| pos(&p.action))),
        ("status", p.status.as_ref().map(pos)),
        ("during", p.during.as_ref().map(pos)),
        ("count", p.count.as_ref().map(pos)),
        ("faults", p.faults.as_ref().map(pos)),
        ("drift", p.drift.as_ref().map(|d| pos(&d.percent))),
        ("handledGrace", p.handled_grace.as_ref().map(pos)),
        ("composition", p.composition.as_ref().map(pos)),
        ("patch", p.patch.as_ref().map(pos)),
        ("function", p.function.as_ref().map(pos)),
        ("delay", p.delay.as_ref().map(pos)),
        ("errorPercent", p.error_percent.as_ref().map(pos)),
        ("down", p.down.as_ref().map(pos)),
        ("ttl", p.ttl.as_ref().map(pos)),
    ];
    for (field, at) in present {
        if let Some(at) = at
            && !ok.contains(&field)
        {
            let expected = if ok.is_empty() {
                "no other fields".to_owned()
            } else {
                ok.join(", ")
            };
            c.err(
                at,
                format!(
                    "`{field}` does not apply to a {} phase, expected only {expected}",
                    action_str(a)
                ),
            );
        }
    }
    let rate = p
        .rate
        .as_ref()
        .and_then(|r| c.range(r, "rate", 0.0, true, f64::INFINITY));
    // XR groups are named beside resource groups; a phase without `groups` acts on all.
    let acts_on_xrs = matches!(
        a,
        ActionName::Create | ActionName::Resync | ActionName::Update | ActionName::Delete
    );
    let (group_ids, mut xr_ids): (Vec<usize>, Vec<usize>) = match &p.groups {
        None if acts_on_xrs => ((0..groups.len()).collect(), (0..xr_groups.len()).collect()),
        None => ((0..groups.len()).collect(), Vec::new()),
        Some(gs) => {
            let (mut ids, mut xrs) = (Vec::new(), Vec::new());
            for g in gs {
                if let Some(i) = groups.iter().position(|x| x.name == g.value) {
                    ids.push(i);
                } else if let Some(i) = xr_groups.iter().position(|x| *x == g.value) {
                    if acts_on_xrs {
                        xrs.push(i);
                    } else {
                        c.err(
                            pos(g),
                            format!(
                                "{:?} is an XR group, and a {} phase acts on resource groups only, expected one of {}",
                                g.value,
                                action_str(a),
                                groups.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(", ")
                            ),
                        );
                    }
                } else {
                    let known = groups.iter().map(|x| x.name.as_str());
                    c.unknown(
                        g,
                        "group",
                        known.chain(xr_groups.iter().map(String::as_str)),
                    );
                }
            }
            (ids, xrs)
        }
    };
    let duration = p
        .duration
        .as_ref()
        .and_then(|d| c.positive_duration(d, "duration"));
    let needs = |c: &mut Checker, field: &str| {
        c.err(
            pos(&p.action),
            format!("a {} phase needs `{field}`", action_str(a)),
        )
    };
    let action = match a {
        ActionName::Create => Action::Create {
            rate,
            groups: group_ids,
        },
        ActionName::Resync => {
            // 0s turns the early verdict off.
            let grace = match &p.handled_grace {
                Some(g) => c
                    .duration(g, "handledGrace")
                    .unwrap_or(DEFAULT_HANDLED_GRACE),
                None => DEFAULT_HANDLED_GRACE,
            };
            Action::Resync {
                rate,
                groups: group_ids,
                handled_grace: (!grace.is_zero()).then_some(grace),
            }
        }
        ActionName::Delete => Action::Delete {
            rate,
            groups: group_ids,
        },
        ActionName::Update => {
            let spec = match &p.spec {
                Some(s) => c.spec(s),
                None => {
                    needs(c, "spec");
                    serde_json::Value::Null
                }
            };
            Action::Update {
                rate,
                groups: group_ids,
                spec,
            }
        }
        ActionName::Hold => match duration {
            Some(duration) => Action::Hold { duration },
            None => {
                if p.duration.is_none() {
                    needs(c, "duration");
                }
                return None;
            }
        },
        ActionName::CloudOutage => {
            let status = status(c, p.status.as_ref())?;
            match duration {
                Some(duration) => Action::CloudOutage { duration, status },
                None => {
                    if p.duration.is_none() {
                        needs(c, "duration");
                    }
                    return None;
                }
            }
        }
        ActionName::CloudLatency => match &p.latency {
            Some(l) => Action::CloudLatency {
                latency: latencies(c, l, pos(&p.action)),
                duration,
            },
            None => {
                needs(c, "latency");
                return None;
            }
        },
        ActionName::CloudFault => cloud_fault(c, p, groups, group_ids, duration)?,
        ActionName::Restart => Action::Restart,
        ActionName::Kill => kill(c, all, index, p, duration)?,
        // Their XR groups are those of the Composition, or those calling the function.
        ActionName::CompositionUpdate => {
            let (action, xrs) = super::core_phases::composition_update(c, p, composites)?;
            xr_ids = xrs;
            action
        }
        ActionName::FunctionFault => {
            let (action, xrs) = super::core_phases::function_fault(c, p, composites, duration)?;
            xr_ids = xrs;
            action
        }
    };
    let until = match &p.until {
        Some(u) if a == ActionName::Kill => {
            c.err(
                pos(u),
                "a kill phase has no `until`: the phase it interrupts waits for its own after the last kill",
            );
            u.value
        }
        Some(u) => {
            if u.value == Until::Elapsed
                && duration.is_none()
                && !matches!(a, ActionName::CloudFault | ActionName::FunctionFault)
            {
                c.err(
                    pos(u),
                    format!(
                        "`until: elapsed` needs a duration, and a {} phase has none",
                        action_str(a)
                    ),
                );
            }
            if u.value == Until::ComposedReady
                && !matches!(a, ActionName::Create | ActionName::Update)
            {
                c.err(
                    pos(u),
                    format!(
                        "`until: composedReady` waits for what a create or an update makes Ready, and a {} phase makes nothing Ready, expected `until` of {}",
                        action_str(a),
                        if a == ActionName::Hold { "elapsed" } else { "its own kind (or none)" }
                    ),
                );
            }
            if a == ActionName::Hold && u.value != Until::Elapsed {
                c.err(pos(u), "a hold phase ends when its duration has elapsed, expected `until: elapsed` or no `until`");
            }
            u.value
        }
        None => match a {
            ActionName::Hold
            | ActionName::Kill
            | ActionName::CloudFault
            | ActionName::FunctionFault => Until::Elapsed,
            ActionName::Resync => Until::AllHandled,
            ActionName::Delete => Until::AllGone,
            _ => Until::AllReady,
        },
    };
    let timeout = c.opt_duration(p.timeout.as_ref(), "timeout", DEFAULT_TIMEOUT);
    if let (Some(d), Some(t)) = (duration, &p.timeout)
        && a != ActionName::Kill
        && d > timeout
    {
        c.err(
            pos(t),
            "timeout is shorter than the phase's duration, expected timeout ≥ duration",
        );
    }
    Some(Phase {
        name: p.name.value.clone(),
        action,
        until,
        timeout,
        composites: xr_ids,
    })
}

/// A cloudFault phase: the shares of `faults` and `drift` for each group acted on, checked
/// as a group's own (their percents of that group, at most 100 % together); an
/// observe-only group has no cloud resources to fault.
fn cloud_fault(
    c: &mut Checker,
    p: &RawPhase,
    groups: &[ResourceGroup],
    group_ids: Vec<usize>,
    duration: Option<Duration>,
) -> Option<Action> {
    if p.faults.is_none() && p.drift.is_none() {
        c.err(
            pos(&p.action),
            "a cloudFault phase needs `faults` or `drift` (`faults: []` clears the faults of its groups)",
        );
        return None;
    }
    let shares = p.faults.as_ref().map_or(&[][..], |f| f.value.as_slice());
    let mut faults = Vec::with_capacity(group_ids.len());
    for g in group_ids {
        let group = &groups[g];
        if group.observe_only() && (!shares.is_empty() || p.drift.is_some()) {
            let at = p.faults.as_ref().map_or_else(|| pos(&p.action), pos);
            c.err(
                at,
                format!(
                    "group {:?} is observe-only and has no cloud resources to fault, expected `groups` without it",
                    group.name
                ),
            );
            continue;
        }
        // The shares' problems do not depend on the group: report them once.
        let mut scratch = Checker::default();
        let checker = if faults.is_empty() {
            &mut *c
        } else {
            &mut scratch
        };
        faults.push((
            g,
            super::faults::shares_of(checker, group.count, shares, p.drift.as_ref()),
        ));
    }
    Some(Action::CloudFault { faults, duration })
}

/// A kill phase: the phase it interrupts (listed before it, not a kill phase), how many
/// kills (≥ 1, default 1) and their window (default [`DEFAULT_KILL_WINDOW`]).
fn kill(
    c: &mut Checker,
    all: &[RawPhase],
    index: usize,
    p: &RawPhase,
    window: Option<Duration>,
) -> Option<Action> {
    let count = match &p.count {
        Some(n) if n.value == 0 => {
            c.err(pos(n), "count is 0, expected at least one kill");
            None
        }
        Some(n) => Some(n.value),
        None => Some(1),
    };
    let Some(during) = &p.during else {
        c.err(
            pos(&p.action),
            "a kill phase needs `during`: the phase whose work it interrupts",
        );
        return None;
    };
    let Some(target) = all.iter().position(|q| q.name.value == during.value) else {
        c.unknown(during, "phase", all.iter().map(|q| q.name.value.as_str()));
        return None;
    };
    if target >= index {
        c.err(
            pos(during),
            format!(
                "phase {:?} is not listed before this kill phase, expected an earlier phase",
                during.value
            ),
        );
        return None;
    }
    if all[target].action.value == ActionName::Kill {
        c.err(
            pos(during),
            format!(
                "phase {:?} is a kill phase, expected a phase that does work",
                during.value
            ),
        );
        return None;
    }
    Some(Action::Kill {
        during: target,
        // A count of 0 was reported; the phase is still checked.
        count: count.unwrap_or(1),
        window: window.unwrap_or(DEFAULT_KILL_WINDOW),
    })
}
