//! Kinds named by `apiVersion` and `kind` (resource groups, `calls` entries, scenario
//! objects), resolved against the [`Catalogue`], and rendered objects checked against
//! their kind's schema as the API server checks them.

use mock_apiserver::Structural;
use serde_saphyr::Spanned;

use super::checker::Checker;
use super::pos;
use crate::error::Pos;
use crate::kinds::{Catalogue, GroupKind, Served};
use crate::raw::Kind;

const SHORT: [(&str, Kind); 3] = [
    ("Bucket", Kind::Bucket),
    ("Database", Kind::Database),
    ("Record", Kind::Record),
];

/// The kind of a group or `calls` entry: a short kind without `apiVersion`, else the
/// served kind (the sample provider's own kinds come back as short kinds).
pub(super) fn group_kind(
    c: &mut Checker,
    catalogue: &Catalogue,
    api_version: Option<&Spanned<String>>,
    kind: &Spanned<String>,
) -> Option<(GroupKind, Option<Served>)> {
    let Some(av) = api_version else {
        return match SHORT.iter().find(|(n, _)| *n == kind.value) {
            Some((_, k)) => Some((GroupKind::Short(*k), None)),
            None => {
                c.err(
                    pos(kind),
                    format!(
                        "unknown kind {:?}, expected one of Bucket, Database, Record, or an `apiVersion` with a kind the target serves",
                        kind.value
                    ),
                );
                None
            }
        };
    };
    let served = served(c, catalogue, av, kind)?;
    let short = SHORT.iter().find(|(n, _)| {
        served.kind.group == provider::crd::GROUP
            && served.kind.version == provider::crd::VERSION
            && *n == served.kind.kind
    });
    Some(match short {
        Some((_, k)) => (GroupKind::Short(*k), Some(served)),
        None => (GroupKind::Api(served.kind.clone()), Some(served)),
    })
}

/// The served kind of `apiVersion` and `kind`, or a problem at `kind` saying what is
/// served.
pub(super) fn served(
    c: &mut Checker,
    catalogue: &Catalogue,
    api_version: &Spanned<String>,
    kind: &Spanned<String>,
) -> Option<Served> {
    match catalogue.resolve(&api_version.value, &kind.value) {
        Ok(s) => Some(s.clone()),
        Err(_) => {
            c.err(
                pos(kind),
                format!(
                    "unknown kind {} {}, expected one the target serves: {}",
                    api_version.value,
                    kind.value,
                    catalogue.names().join(", ")
                ),
            );
            None
        }
    }
}

/// Checks a rendered object against its kind's schema as the API server would on create
/// with `fieldValidation=Strict`: fields the schema does not declare, then every validation
/// failure, each a problem at `at` naming `what`. Returns the problems' texts after `what`.
pub(super) fn check_object(served: &Served, object: &serde_json::Value) -> Vec<String> {
    let Some(schema) = &served.schema else {
        return Vec::new();
    };
    let structural = match Structural::compile(schema) {
        Ok(s) => s,
        Err(e) => return vec![format!(": the kind's schema does not compile ({e})")],
    };
    let kind = &served.kind.kind;
    let mut pruned = object.clone();
    let mut out: Vec<String> = structural
        .prune(&mut pruned)
        .into_iter()
        .map(|field| {
            format!(" renders an unknown field {field}, expected only fields the schema of {kind} declares")
        })
        .collect();
    out.extend(structural.validate(object, None).into_iter().map(|cause| {
        format!(
            " renders an invalid object: {}, expected an object the schema of {kind} accepts",
            cause.text()
        )
    }));
    out
}

/// [`check_object`]'s problems, each at `at` after `what`.
pub(super) fn report(c: &mut Checker, at: Pos, what: &str, problems: &[String]) {
    for p in problems {
        c.err(at, format!("{what}{p}"));
    }
}
