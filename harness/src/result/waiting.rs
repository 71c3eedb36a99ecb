//! What a phase that timed out was still waiting for: the resources that had not met its
//! `until` and where each stood, by its last Ready and Synced conditions as the harness's
//! watches saw them. A kind that never becomes Ready (a CRD the provider does not serve, a
//! ProviderConfig it refuses) is named here with the provider's own words.

use serde::{Deserialize, Serialize};

/// How many resources a result lists; the others are counted.
pub const LISTED: usize = 10;

/// The most characters of a condition's message a report line shows (the result keeps it
/// whole): an SDK error's text can run to kilobytes.
pub const MESSAGE_CHARS: usize = 240;

/// `text` cut to [`MESSAGE_CHARS`] characters, with `…` where it was cut.
fn clipped(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
}

/// One condition of a resource, as its last watch event had it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Condition {
    /// `Ready`, `Synced`, or a type the group's readiness names.
    #[serde(rename = "type")]
    pub kind: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Its reason (`ReconcileError`, `Creating`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Its message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// A resource a phase was still waiting for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Its kind, as reports name kinds (`Bucket`, `Bucket.s3.aws.upbound.io`).
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its last conditions; empty: it had none (no provider, or for an XR no Crossplane
    /// core, acted on it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// It is a composite resource (an XR), whose status Crossplane core writes, not a
    /// provider.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub composite: bool,
}

impl Pending {
    /// `Bucket b-3: Synced False (ReconcileError: cannot connect …); Ready False (Creating)`,
    /// or `… no conditions yet` with who writes them; each message cut to [`MESSAGE_CHARS`].
    #[must_use]
    pub fn line(&self) -> String {
        if self.conditions.is_empty() {
            let writer = if self.composite {
                "Crossplane core has not written its status"
            } else {
                "no provider has written its status"
            };
            return format!("{} {}: no conditions yet ({writer})", self.kind, self.name);
        }
        let each: Vec<String> = self
            .conditions
            .iter()
            .map(|c| {
                let message = clipped(&c.message);
                let why = match (c.reason.is_empty(), c.message.is_empty()) {
                    (true, true) => String::new(),
                    (false, true) => format!(" ({})", c.reason),
                    (true, false) => format!(" ({message})"),
                    (false, false) => format!(" ({}: {message})", c.reason),
                };
                format!("{} {}{why}", c.kind, c.status)
            })
            .collect();
        format!("{} {}: {}", self.kind, self.name, each.join("; "))
    }
}

/// What a phase that timed out was still waiting for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// What it waited for: `Ready`, `handled` (its reconcile request), `gone`.
    pub until: String,
    /// The resources it waited for.
    pub of: u64,
    /// Those that had not met `until` when it timed out.
    pub pending: u64,
    /// The first [`LISTED`] of them, in the order the run created them.
    pub first: Vec<Pending>,
}

impl Waiting {
    /// The lines reports print: a headline, one line a listed resource, and how many more.
    #[must_use]
    pub fn lines(&self, phase: &str) -> Vec<String> {
        let mut out = vec![format!(
            "phase {phase} timed out with {} of {} resources not {} yet:",
            self.pending, self.of, self.until
        )];
        out.extend(self.first.iter().map(Pending::line));
        let more = self.pending.saturating_sub(self.first.len() as u64);
        if more > 0 {
            out.push(format!("{more} more"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(i: usize, conditions: Vec<Condition>) -> Pending {
        Pending {
            kind: "Bucket.s3.aws.upbound.io".to_owned(),
            name: format!("b-{i}"),
            conditions,
            composite: false,
        }
    }

    #[test]
    fn a_timed_out_phase_lists_the_first_resources_with_their_conditions_and_counts_the_rest() {
        let synced = Condition {
            kind: "Synced".to_owned(),
            status: "False".to_owned(),
            reason: "ReconcileError".to_owned(),
            message: "connect failed: cannot get ProviderConfig".to_owned(),
        };
        let ready = Condition {
            kind: "Ready".to_owned(),
            status: "False".to_owned(),
            reason: "Creating".to_owned(),
            message: String::new(),
        };
        let w = Waiting {
            until: "Ready".to_owned(),
            of: 20,
            pending: 12,
            first: (0..LISTED)
                .map(|i| pending(i, vec![synced.clone(), ready.clone()]))
                .collect(),
        };
        let lines = w.lines("create");
        assert_eq!(
            lines[0],
            "phase create timed out with 12 of 20 resources not Ready yet:"
        );
        assert_eq!(
            lines[1],
            "Bucket.s3.aws.upbound.io b-0: Synced False (ReconcileError: connect failed: cannot get ProviderConfig); Ready False (Creating)"
        );
        assert_eq!(lines.len(), 1 + LISTED + 1);
        assert_eq!(lines[LISTED + 1], "2 more");
        let long = Condition {
            message: "x".repeat(MESSAGE_CHARS + 1),
            ..synced.clone()
        };
        let line = pending(1, vec![long]).line();
        assert!(
            line.ends_with(&format!("{}…)", "x".repeat(MESSAGE_CHARS))),
            "{line}"
        );
        assert_eq!(
            pending(3, Vec::new()).line(),
            "Bucket.s3.aws.upbound.io b-3: no conditions yet (no provider has written its status)"
        );
        let xr = Pending {
            kind: "XNetwork.example.org".to_owned(),
            name: "n-1".to_owned(),
            conditions: Vec::new(),
            composite: true,
        };
        assert_eq!(
            xr.line(),
            "XNetwork.example.org n-1: no conditions yet (Crossplane core has not written its status)"
        );
    }
}
