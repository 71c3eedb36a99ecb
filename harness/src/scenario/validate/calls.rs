//! The `calls` section: cloud calls per reconcile of each kind, by path (the budget's c).

use std::collections::BTreeMap;

use super::checker::Checker;
use super::pos;
use crate::scenario::kinds::{Catalogue, GroupKind};
use crate::scenario::model::{Calls, ResourceGroup};
use crate::scenario::raw::{RawCalls, RawGroup};

/// Every group's kind's calls: its `calls` entry, the sample figures for a short kind
/// without one; a kind with `apiVersion` must have one.
pub(super) fn calls(
    c: &mut Checker,
    raw: &[RawCalls],
    raw_groups: &[RawGroup],
    groups: &[ResourceGroup],
    catalogue: &Catalogue,
) -> BTreeMap<GroupKind, Calls> {
    let mut out = BTreeMap::new();
    for e in raw {
        let Some((kind, _)) =
            super::kinds::group_kind(c, catalogue, e.api_version.as_ref(), &e.kind)
        else {
            continue;
        };
        let calls = Calls {
            observe: e.observe.value,
            create: e.create.value,
            update: e.update.value,
            delete: e.delete.value,
            connect: e.connect.as_ref().map_or(0, |v| v.value),
        };
        if out.insert(kind.clone(), calls).is_some() {
            c.err(
                pos(&e.kind),
                format!("calls of {kind} are given twice, expected one entry per kind"),
            );
        }
    }
    for g in groups {
        if out.contains_key(&g.kind) {
            continue;
        }
        match &g.kind {
            GroupKind::Short(_) => {
                out.insert(g.kind.clone(), Calls::SAMPLE);
            }
            GroupKind::Api(_) => {
                if let Some(r) = raw_groups.iter().find(|r| r.name.value == g.name) {
                    c.err(
                        pos(&r.kind),
                        format!(
                            "no cloud calls per reconcile for {}, expected a `calls` entry {{apiVersion, kind, observe, create, update, delete, connect}} (provider/README.md tables the AWS flavour's)",
                            g.kind
                        ),
                    );
                }
            }
        }
    }
    out
}
