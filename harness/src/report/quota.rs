//! The cloud quotas a run was under, as the report draws them: read back from the
//! predictions, whose `/quota/` entries carry each account's quota as inputs (`r_a`, `b_a`).

use std::collections::BTreeMap;

use crate::predict::Prediction;

/// One account's quota for one class of calls.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Quota {
    /// The account.
    pub account: String,
    /// The class of calls (`read`, `mutate`, `delete`).
    pub class: String,
    /// The refill rate (calls per second).
    pub per_second: f64,
    /// The bucket's size, when a prediction names it.
    pub burst: Option<f64>,
}

fn input(p: &Prediction, name: &str) -> Option<f64> {
    p.inputs
        .iter()
        .find(|i| i.name == name)
        .map(|i| i.value)
        .filter(|v| v.is_finite())
}

/// Every (account, class) quota the predictions name, once each, in account then class
/// order. A class's burst comes from whichever of its predictions names `b_a`.
pub(super) fn quotas(predictions: &[Prediction]) -> Vec<Quota> {
    let mut found: BTreeMap<(String, String), Quota> = BTreeMap::new();
    for p in predictions {
        let Some(account) = p.account.as_deref() else {
            continue;
        };
        let Some(rest) = p.id.split_once("/quota/").map(|(_, rest)| rest) else {
            continue;
        };
        let Some(per_second) = input(p, "r_a") else {
            continue;
        };
        // `PHASE/quota/ACCOUNT/CLASS`, or `PHASE/quota/ACCOUNT/read-steady`.
        let Some(class) = rest
            .strip_prefix(account)
            .and_then(|c| c.strip_prefix('/'))
            .map(|c| c.strip_suffix("-steady").unwrap_or(c))
        else {
            continue;
        };
        let q = found
            .entry((account.to_owned(), class.to_owned()))
            .or_insert_with(|| Quota {
                account: account.to_owned(),
                class: class.to_owned(),
                per_second,
                burst: None,
            });
        q.burst = q.burst.or(input(p, "b_a"));
    }
    found.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::plan;
    use crate::scenario::parse;

    #[test]
    fn each_accounts_quota_is_read_once_per_class_from_the_predictions() {
        let s = parse(
            "apiVersion: harness/v1\nname: q\nprovider: {maxReconcileRate: 100, pollInterval: 1m}\ncloud:\n  accounts:\n    - name: tight\n  quotas:\n    read: {burst: 100, perSecond: 20}\n    mutate: {burst: 50, perSecond: 5}\nresources:\n  - {name: b, kind: Bucket, count: 200, account: tight}\nphases:\n  - {name: create, action: create}\n  - {name: hold, action: hold, duration: 5m}\n",
            "q.yaml",
        )
        .expect("valid");
        let all: Vec<Prediction> = plan(&s).all().cloned().collect();
        let got = quotas(&all);
        assert_eq!(
            got,
            [
                Quota {
                    account: "tight".into(),
                    class: "mutate".into(),
                    per_second: 5.0,
                    burst: Some(50.0),
                },
                Quota {
                    account: "tight".into(),
                    class: "read".into(),
                    per_second: 20.0,
                    burst: Some(100.0),
                },
            ]
        );
    }
}
