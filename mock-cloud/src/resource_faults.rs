//! Deciding the per-resource faults of one request: which rules select the resource, and
//! what they do to it.
//!
//! # Semantics
//! A rule selects a resource when every part of its selector holds: collection (a generic
//! collection or an AWS front end's kind), name pattern, tag (`spec.tags.<key>`; an AWS
//! resource's tags are read as `{"tags": {…}}`), and share. The share is decided by a hash of the
//! fault seed and the resource's name alone, so a resource is in or out for the whole run
//! and the same resources are chosen for a seed. When several rules of one effect select
//! the resource, the first one in the list applies. Effects of different kinds combine
//! (a resource may drift and be slow to create).

use std::time::Duration;

use serde_json::Value;

use crate::config::{LastingError, ResourceEffect, ResourceFault, ResourceKind, ResourceSelector};
use crate::faults::share_unit;
use crate::model::Action;

/// What the per-resource rules decided for one request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ResourceVerdict {
    /// A lasting error to answer with: status and code.
    pub error: Option<(u16, String)>,
    /// The same error as its rule gave it: which error, and the rule's code if it names one
    /// (the AWS front ends answer with their own codes).
    pub lasting: Option<(LastingError, Option<String>)>,
    /// Reads answer 404 until this long after the create.
    pub not_found_after_create: Option<Duration>,
    /// Reads report this spec field drifted (`Some(None)`: the extra field `drift`).
    pub drift: Option<Option<String>>,
    /// A create stays `creating` this long.
    pub slow_create: Option<Duration>,
    /// A lasting error's answer carries this retry hint.
    pub retry_after: Option<Duration>,
}

impl ResourceVerdict {
    pub fn is_empty(&self) -> bool {
        *self == ResourceVerdict::default()
    }
}

/// The request as the rules see it.
pub(crate) struct Subject<'a> {
    /// The generic API's collection, or the AWS front end's kind.
    pub kind: ResourceKind,
    pub name: &'a str,
    pub action: Action,
}

/// Whether any rule needs the resource's spec (a tag selector).
pub(crate) fn needs_spec(rules: &[ResourceFault]) -> bool {
    rules.iter().any(|r| r.select.tag.is_some())
}

/// The verdict of `rules` for `subject`; `spec` is the resource's spec when
/// [`needs_spec`] said so (the create body's for a create).
pub(crate) fn decide(
    rules: &[ResourceFault],
    seed: u64,
    subject: &Subject<'_>,
    spec: Option<&Value>,
) -> ResourceVerdict {
    let mut verdict = ResourceVerdict::default();
    for rule in rules {
        if !selects(&rule.select, seed, subject, spec) {
            continue;
        }
        match &rule.effect {
            ResourceEffect::Error {
                error,
                code,
                actions,
            } => {
                let fails = actions
                    .as_deref()
                    .unwrap_or(error.default_actions())
                    .contains(&subject.action);
                if fails && verdict.error.is_none() {
                    verdict.error = Some(error_of(*error, code.as_deref()));
                    verdict.lasting = Some((*error, code.clone()));
                }
            }
            ResourceEffect::NotFoundAfterCreate { duration } => {
                verdict.not_found_after_create.get_or_insert(*duration);
            }
            ResourceEffect::Drift { field } => {
                verdict.drift.get_or_insert_with(|| field.clone());
            }
            ResourceEffect::SlowCreate { duration } => {
                verdict.slow_create.get_or_insert(*duration);
            }
            ResourceEffect::RetryAfter { after } => {
                verdict.retry_after.get_or_insert(*after);
            }
        }
    }
    verdict
}

fn error_of(error: LastingError, code: Option<&str>) -> (u16, String) {
    (
        error.status(),
        code.unwrap_or(error.default_code()).to_owned(),
    )
}

fn selects(
    select: &ResourceSelector,
    seed: u64,
    subject: &Subject<'_>,
    spec: Option<&Value>,
) -> bool {
    if select.collection.is_some_and(|c| c != subject.kind) {
        return false;
    }
    if !select.name_matches(subject.name) {
        return false;
    }
    if let Some((key, value)) = &select.tag {
        let tagged = spec
            .and_then(|s| s.get("tags"))
            .and_then(|t| t.get(key))
            .and_then(Value::as_str)
            == Some(value.as_str());
        if !tagged {
            return false;
        }
    }
    select
        .percent
        .is_none_or(|p| share_unit(seed, subject.name) * 100.0 < p)
}

/// Rewrites `spec` as a drifted read reports it: `field` set to a value other than the
/// written one (a boolean negated, a number plus one, a string with `-drifted` appended,
/// anything else or absent replaced by the string `drifted`).
pub(crate) fn drift(spec: &mut Value, field: Option<&str>) {
    let Value::Object(map) = spec else {
        return;
    };
    let field = field.unwrap_or("drift");
    let drifted = match map.get(field) {
        Some(Value::Bool(b)) => Value::Bool(!b),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i.wrapping_add(1)),
            (None, Some(f)) => Value::from(f + 1.0),
            _ => Value::from("drifted"),
        },
        Some(Value::String(s)) => Value::from(format!("{s}-drifted")),
        _ => Value::from("drifted"),
    };
    map.insert(field.to_owned(), drifted);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(select: ResourceSelector, effect: ResourceEffect) -> ResourceFault {
        ResourceFault { select, effect }
    }

    fn get(name: &str) -> Subject<'_> {
        Subject {
            kind: ResourceKind::Collection(crate::model::Collection::Buckets),
            name,
            action: Action::Get,
        }
    }

    #[test]
    fn a_share_selects_about_that_many_names_and_the_same_ones_for_a_seed() {
        let rules = [rule(
            ResourceSelector {
                percent: Some(5.0),
                ..ResourceSelector::default()
            },
            ResourceEffect::Error {
                error: LastingError::AccessDenied,
                code: None,
                actions: None,
            },
        )];
        let chosen = |seed| {
            (0..10_000)
                .map(|i| format!("bucket-{i}"))
                .filter(|n| decide(&rules, seed, &get(n), None).error.is_some())
                .collect::<Vec<_>>()
        };
        let first = chosen(7);
        assert!((400..600).contains(&first.len()), "{}", first.len());
        assert_eq!(first, chosen(7));
        assert_ne!(first, chosen(8));
    }

    #[test]
    fn a_lasting_error_fails_only_its_actions_and_the_first_rule_wins() {
        let conflict = ResourceEffect::Error {
            error: LastingError::Conflict,
            code: Some("BucketAlreadyExists".into()),
            actions: None,
        };
        let denied = ResourceEffect::Error {
            error: LastingError::AccessDenied,
            code: None,
            actions: None,
        };
        let rules = [
            rule(ResourceSelector::default(), conflict),
            rule(ResourceSelector::default(), denied),
        ];
        let create = Subject {
            action: Action::Create,
            ..get("b")
        };
        assert_eq!(
            decide(&rules, 0, &create, None).error,
            Some((409, "BucketAlreadyExists".into()))
        );
        assert_eq!(
            decide(&rules, 0, &get("b"), None).error,
            Some((403, "AccessDenied".into()))
        );
    }

    #[test]
    fn a_tag_and_a_name_pattern_must_both_hold() {
        let rules = [rule(
            ResourceSelector {
                name: Some("db-*".into()),
                tag: Some(("team".into(), "red".into())),
                ..ResourceSelector::default()
            },
            ResourceEffect::Drift { field: None },
        )];
        assert!(needs_spec(&rules));
        let red = json!({"tags": {"team": "red"}});
        let blue = json!({"tags": {"team": "blue"}});
        assert_eq!(
            decide(&rules, 0, &get("db-1"), Some(&red)).drift,
            Some(None)
        );
        assert!(decide(&rules, 0, &get("db-1"), Some(&blue)).is_empty());
        assert!(decide(&rules, 0, &get("x-1"), Some(&red)).is_empty());
    }

    #[test]
    fn a_retry_hint_rides_on_the_error_of_another_rule() {
        let rules = [
            rule(
                ResourceSelector::default(),
                ResourceEffect::Error {
                    error: LastingError::AccessDenied,
                    code: None,
                    actions: None,
                },
            ),
            rule(
                ResourceSelector {
                    name: Some("b-*".into()),
                    ..ResourceSelector::default()
                },
                ResourceEffect::RetryAfter {
                    after: Duration::from_secs(30),
                },
            ),
        ];
        let hinted = decide(&rules, 0, &get("b-1"), None);
        assert_eq!(hinted.error, Some((403, "AccessDenied".into())));
        assert_eq!(hinted.retry_after, Some(Duration::from_secs(30)));
        assert_eq!(decide(&rules, 0, &get("c-1"), None).retry_after, None);
    }

    #[test]
    fn a_drifted_field_always_differs_from_what_was_written() {
        let mut spec = json!({"versioning": true, "size": 3, "region": "eu"});
        for field in ["versioning", "size", "region", "absent"] {
            let before = spec.clone();
            drift(&mut spec, Some(field));
            assert_ne!(spec.get(field), before.get(field), "{field}");
        }
        let mut plain = json!({});
        drift(&mut plain, None);
        assert_eq!(plain, json!({"drift": "drifted"}));
    }
}
