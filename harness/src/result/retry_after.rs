//! `retryAfterHonoured`: whether the provider waited out the retry hints the cloud gave.
//!
//! # Semantics
//! An error answer that carries `Retry-After` (or AWS's `x-amz-retry-after`) asks the client
//! to make no request for that resource before the hint has passed, counted from when the
//! answer was sent (the call's arrival plus its latency in the journal). A call for the
//! same resource (account and cloud name) that arrives earlier is early. Calls without a
//! resource name (lists, creates refused before their body was read) are left out: their
//! hint names no resource. The latest hint of a resource applies until a later answer
//! gives another.

use std::collections::HashMap;

use super::model::Verdict;
use super::observe::Observations;
use crate::predict::fmt_num;
use crate::scenario::Assertion;

/// A resource that called before its hint had passed.
#[derive(Clone, Debug, PartialEq)]
pub struct Early {
    /// The resource's cloud name.
    pub name: String,
    /// Its early calls.
    pub calls: u64,
    /// The most time left on the hint at one of them (s).
    pub worst_s: f64,
}

/// The early calls among the calls in `range` (µs, inclusive), per resource, most first;
/// and how many answers in the range carried a hint.
#[must_use]
pub fn early_calls(
    obs: &Observations,
    range: (u64, u64),
    account: Option<&str>,
) -> (Vec<Early>, u64) {
    let mut calls: Vec<_> = obs
        .cloud_calls
        .iter()
        .filter(|c| !c.name.is_empty() && account.is_none_or(|a| c.account == a))
        .collect();
    calls.sort_by_key(|c| c.at_us);
    let mut not_before: HashMap<(&str, &str), u64> = HashMap::new();
    let mut early: HashMap<&str, Early> = HashMap::new();
    let mut hints = 0;
    for c in calls {
        let key = (c.account.as_str(), c.name.as_str());
        let in_range = c.at_us >= range.0 && c.at_us <= range.1;
        if in_range
            && let Some(&until) = not_before.get(&key)
            && c.at_us < until
        {
            let e = early.entry(c.name.as_str()).or_insert_with(|| Early {
                name: c.name.clone(),
                calls: 0,
                worst_s: 0.0,
            });
            e.calls += 1;
            e.worst_s = e.worst_s.max((until - c.at_us) as f64 / 1e6);
        }
        if let Some(until) = c.retry_not_before_us {
            hints += u64::from(in_range);
            not_before.insert(key, until);
        }
    }
    let mut out: Vec<Early> = early.into_values().collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
    (out, hints)
}

/// The verdict: early calls ≤ `max`, naming the resources.
#[must_use]
pub fn verdict(obs: &Observations, a: &Assertion, range: (u64, u64), max: u64) -> Verdict {
    let (early, hints) = early_calls(obs, range, a.account.as_deref());
    let observed = early.iter().map(|e| e.calls).sum::<u64>() as f64;
    let limit = max as f64;
    let note = if hints == 0 {
        "no answer carried a retry hint".to_owned()
    } else if early.is_empty() {
        format!("{hints} answers carried a retry hint; every one was waited out")
    } else {
        let named: Vec<String> = early
            .iter()
            .take(10)
            .map(|e| {
                format!(
                    "{} ({} early, up to {} s early)",
                    e.name,
                    e.calls,
                    fmt_num(e.worst_s)
                )
            })
            .collect();
        let more = early.len().saturating_sub(10);
        format!(
            "{hints} answers carried a retry hint; early: {}{}",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    Verdict {
        formula: "calls for a resource before the answer's time + its Retry-After ≤ max".into(),
        inputs: format!(
            "answers with a hint={hints}, resources early={}",
            early.len()
        ),
        predicted: 0.0,
        note: Some(note),
        ..Verdict::at_most(&a.name, "retryAfterHonoured", limit, observed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{CallAction, CloudCall};

    fn call(at_s: f64, name: &str, hint_s: Option<f64>) -> CloudCall {
        let at_us = (at_s * 1e6) as u64;
        CloudCall {
            at_us,
            account: "default".into(),
            action: CallAction::Get,
            op: "generic:get".into(),
            name: name.into(),
            status: if hint_s.is_some() { 403 } else { 200 },
            throttled: false,
            retry_not_before_us: hint_s.map(|h| at_us + (h * 1e6) as u64),
        }
    }

    fn observations(calls: Vec<CloudCall>) -> Observations {
        Observations {
            cloud_calls: calls,
            ..Observations::default()
        }
    }

    #[test]
    fn a_call_before_the_hint_has_passed_is_early_and_one_after_it_is_not() {
        // a: hinted 30 s at 0, retried on the backoff at 1 s (hinted again) and 3 s, both
        // early, then at 40 s. b: hinted 30 s at 0, waited it out.
        let obs = observations(vec![
            call(0.0, "a", Some(30.0)),
            call(0.0, "b", Some(30.0)),
            call(1.0, "a", Some(30.0)),
            call(3.0, "a", None),
            call(30.0, "b", None),
            call(40.0, "a", None),
        ]);
        let (early, hints) = early_calls(&obs, (0, u64::MAX), None);
        assert_eq!(hints, 3);
        // The hint given at 1 s runs to 31 s, so the call at 3 s is 28 s early.
        assert_eq!(
            early,
            [Early {
                name: "a".into(),
                calls: 2,
                worst_s: 29.0
            }]
        );
    }

    #[test]
    fn without_hints_nothing_is_early_and_the_note_says_so() {
        let obs = observations(vec![call(0.0, "a", None), call(0.1, "a", None)]);
        let a = Assertion {
            name: "retryAfterHonoured".into(),
            check: crate::scenario::Check::RetryAfterHonoured { max: 0 },
            phase: None,
            account: None,
            pos: crate::scenario::Pos::default(),
        };
        let v = verdict(&obs, &a, (0, u64::MAX), 0);
        assert!(v.pass);
        assert_eq!(v.note.as_deref(), Some("no answer carried a retry hint"));
    }
}
