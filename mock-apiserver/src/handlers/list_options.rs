//! ListOptions checks, as `ValidateListOptions` of
//! `k8s.io/apimachinery/pkg/apis/meta/internalversion/validation/validation.go` makes
//! them (422 on `ListOptions.meta.k8s.io`), and the storage's refusal of a
//! resourceVersion beside a continue token (400, `storage/etcd3/store.go`).

use crate::error::{ApiError, Cause, Details};
use crate::query::Query;

fn forbidden(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden",
        field: field.to_owned(),
        message: format!("Forbidden: {detail}"),
    }
}

fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported",
        field: field.to_owned(),
        message: format!(
            "Unsupported value: {value:?}: supported values: {}",
            supported.join(", ")
        ),
    }
}

/// Checks the options of a list (`watch == false`) or a watch.
pub fn validate(query: &Query, watch: bool) -> Result<(), ApiError> {
    let matching = query.get("resourceVersionMatch").unwrap_or_default();
    let version = query.get("resourceVersion").unwrap_or_default();
    let continued = query.get("continue").is_some_and(|c| !c.is_empty());
    let initial_events = query.get("sendInitialEvents").is_some();
    let field = "resourceVersionMatch";
    let mut causes = Vec::new();
    if watch {
        if initial_events && matching != "NotOlderThan" {
            causes.push(forbidden(
                field,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matching.is_empty() {
            if !initial_events {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matching != "NotOlderThan" {
                causes.push(not_supported(field, matching, &["NotOlderThan"]));
            }
            if continued {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !matching.is_empty() {
            if version.is_empty() {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if continued {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matching != "Exact" && matching != "NotOlderThan" {
                causes.push(not_supported(
                    field,
                    matching,
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if matching == "Exact" && version == "0" {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if initial_events {
            causes.push(forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if !causes.is_empty() {
        return Err(ApiError::Invalid {
            kind: "ListOptions.meta.k8s.io".into(),
            name: String::new(),
            causes,
            details: Box::new(Details::new("", "meta.k8s.io", "ListOptions")),
        });
    }
    if !watch && continued && !version.is_empty() && version != "0" {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(query: &str, watch: bool) -> Result<(), ApiError> {
        validate(&Query::parse(query), watch)
    }

    #[test]
    fn the_four_refusals_carry_the_apiservers_messages() {
        let err = check("watch=true&sendInitialEvents=true", true).unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(
            err.to_string(),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
        );
        let err = check("sendInitialEvents=true", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
        );
        let err = check("resourceVersionMatch=NotOlderThan", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        let err = check("continue=abc&resourceVersion=5", false).unwrap_err();
        assert_eq!(err.code(), 400);
        assert_eq!(
            err.to_string(),
            "specifying resource version is not allowed when using continue"
        );
    }

    #[test]
    fn what_kube_and_client_go_send_is_accepted() {
        check(
            "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true",
            true,
        )
        .unwrap();
        check("limit=500", false).unwrap();
        check("limit=500&continue=abc", false).unwrap();
        check("resourceVersion=0&resourceVersionMatch=NotOlderThan", false).unwrap();
        check(
            "watch=true&resourceVersion=12&allowWatchBookmarks=true",
            true,
        )
        .unwrap();
    }
}
