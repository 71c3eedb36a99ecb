//! The XR's `Synced` and `Ready` conditions and the events about composed resources, from
//! the end of crossplane/crossplane's `composite/reconciler.go` `Reconcile`.

/// A composed resource as the pipeline left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComposedState {
    /// Its name in the pipeline (`crossplane.io/composition-resource-name`); empty for
    /// none, when its index is used.
    pub name: String,
    /// Whether its apply succeeded and it is valid.
    pub synced: bool,
    /// Whether the functions marked it ready.
    pub ready: bool,
}

/// A condition to set on the XR: type, status, reason and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XrCondition {
    /// `Synced` or `Ready`.
    pub type_: &'static str,
    /// `True` or `False`.
    pub status: &'static str,
    /// The reason.
    pub reason: &'static str,
    /// The message, if any.
    pub message: Option<String>,
}

/// What the reconcile reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `Synced`, then `Ready`.
    pub conditions: [XrCondition; 2],
    /// Normal `ComposeResources` events, one per unsynced and per unready resource.
    pub events: Vec<String>,
    /// How many resources are unsynced or unready (what decides a backoff requeue).
    pub waiting: usize,
}

/// Conditions and events from the composed resources and the pipeline's own readiness
/// verdict for the XR (`res.Ready`, from a function's desired composite).
///
/// # Semantics
/// Ready is `Available` when every composed resource is ready, else `Creating` with
/// `Unready resources: …` (sorted, three named and a count); a verdict from the functions
/// supersedes that (without a message). Synced is `ReconcileSuccess`, or `ReconcileError`
/// with `Unsynced resources: …`.
#[must_use]
pub fn outcome(composed: &[ComposedState], verdict: Option<bool>) -> Outcome {
    let mut unsynced = Vec::new();
    let mut unready = Vec::new();
    let mut events = Vec::new();
    for (i, c) in composed.iter().enumerate() {
        let id = if c.name.is_empty() {
            i.to_string()
        } else {
            c.name.clone()
        };
        if !c.synced {
            events.push(format!("Composed resource {id:?} is not yet valid"));
            unsynced.push(id.clone());
        }
        if !c.ready {
            events.push(format!("Composed resource {id:?} is not yet ready"));
            unready.push(id);
        }
    }
    let synced = if unsynced.is_empty() {
        condition("Synced", "True", "ReconcileSuccess", None)
    } else {
        condition(
            "Synced",
            "False",
            "ReconcileError",
            Some(format!(
                "Unsynced resources: {}",
                stable_n_and_some_more(3, &unsynced)
            )),
        )
    };
    let mut ready = if unready.is_empty() {
        condition("Ready", "True", "Available", None)
    } else {
        condition(
            "Ready",
            "False",
            "Creating",
            Some(format!(
                "Unready resources: {}",
                stable_n_and_some_more(3, &unready)
            )),
        )
    };
    if let Some(verdict) = verdict {
        ready = if verdict {
            condition("Ready", "True", "Available", None)
        } else {
            condition("Ready", "False", "Creating", None)
        };
    }
    Outcome {
        conditions: [synced, ready],
        events,
        waiting: unsynced.len() + unready.len(),
    }
}

fn condition(
    type_: &'static str,
    status: &'static str,
    reason: &'static str,
    message: Option<String>,
) -> XrCondition {
    XrCondition {
        type_,
        status,
        reason,
        message,
    }
}

/// crossplane-runtime's `StableNAndSomeMore`: sorted, the first `n`, then `, and K more`
/// (or `, and X` when exactly `n`).
#[must_use]
pub fn stable_n_and_some_more(n: usize, names: &[String]) -> String {
    let mut sorted = names.to_vec();
    sorted.sort();
    if n == 0 {
        return sorted.len().to_string();
    }
    if sorted.len() > n {
        return format!("{}, and {} more", sorted[..n].join(", "), sorted.len() - n);
    }
    if sorted.len() == n {
        return format!("{}, and {}", sorted[..n - 1].join(", "), sorted[n - 1]);
    }
    sorted.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, synced: bool, ready: bool) -> ComposedState {
        ComposedState {
            name: name.to_owned(),
            synced,
            ready,
        }
    }

    #[test]
    fn an_xr_whose_resources_are_all_ready_is_available() {
        let o = outcome(&[state("a", true, true), state("b", true, true)], None);
        assert_eq!(o.conditions[0].reason, "ReconcileSuccess");
        assert_eq!(
            (o.conditions[1].status, o.conditions[1].reason),
            ("True", "Available")
        );
        assert!(o.events.is_empty());
        assert_eq!(o.waiting, 0);
    }

    #[test]
    fn unready_resources_are_named_sorted_three_and_a_count() {
        let composed: Vec<_> = ["e", "d", "c", "b", "a"]
            .iter()
            .map(|n| state(n, true, false))
            .collect();
        let o = outcome(&composed, None);
        assert_eq!(
            o.conditions[1].message.as_deref(),
            Some("Unready resources: a, b, c, and 2 more")
        );
        assert_eq!(o.events[0], r#"Composed resource "e" is not yet ready"#);
        assert_eq!(o.waiting, 5);
    }

    #[test]
    fn an_unnamed_resource_is_known_by_its_index_and_unsynced_counts_as_waiting() {
        let o = outcome(&[state("", false, true)], None);
        assert_eq!(o.events, [r#"Composed resource "0" is not yet valid"#]);
        assert_eq!(
            o.conditions[0].message.as_deref(),
            Some("Unsynced resources: 0")
        );
        assert_eq!(o.waiting, 1);
    }

    #[test]
    fn the_functions_verdict_supersedes_composed_readiness() {
        let o = outcome(&[state("a", true, false)], Some(true));
        assert_eq!(o.conditions[1].reason, "Available");
        let o = outcome(&[state("a", true, true)], Some(false));
        assert_eq!(
            (o.conditions[1].reason, o.conditions[1].message.as_deref()),
            ("Creating", None)
        );
    }

    #[test]
    fn exactly_n_names_end_with_and() {
        let names: Vec<String> = ["c", "a", "b"].iter().map(|s| (*s).to_owned()).collect();
        assert_eq!(stable_n_and_some_more(3, &names), "a, b, and c");
        assert_eq!(stable_n_and_some_more(3, &names[..2]), "a, c");
    }
}
