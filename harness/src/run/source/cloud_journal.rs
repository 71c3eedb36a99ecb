//! Cloud calls from mock-cloud's journal: the ground truth of every budget. Read once, at
//! the end, through the target's cloud control, and placed on the run's clock by the
//! cloud's epoch.

use super::intern::Interner;
use crate::result::{CallAction, CloudCall};
use crate::run::target::CloudControl;

use super::report::CloudReport;

fn call_action(a: mock_cloud::Action) -> CallAction {
    match a {
        mock_cloud::Action::Create => CallAction::Create,
        mock_cloud::Action::Get => CallAction::Get,
        mock_cloud::Action::Update => CallAction::Update,
        mock_cloud::Action::Delete => CallAction::Delete,
        mock_cloud::Action::List => CallAction::List,
    }
}

/// An AWS operation's action (mock-cloud journals AWS calls with an operation and no
/// action): reads (`Head*`, `Get*`, `Describe*`, STS's `AssumeRole*`) are gets, `List*`
/// lists, `Create*` creates, `Delete*` deletes, every other write (`Put*`, `TagResource`,
/// `CreateTags` is a create) an update.
fn aws_action(operation: &str) -> CallAction {
    let starts = |p: &[&str]| p.iter().any(|p| operation.starts_with(p));
    if starts(&["Head", "Get", "Describe", "Assume"]) {
        CallAction::Get
    } else if starts(&["List"]) {
        CallAction::List
    } else if starts(&["Create"]) {
        CallAction::Create
    } else if starts(&["Delete"]) {
        CallAction::Delete
    } else {
        CallAction::Update
    }
}

/// A journalled call's action: the generic API's own, or its AWS operation's; `None` for a
/// call that matched neither.
pub(crate) fn action_of(call: &mock_cloud::Call) -> Option<CallAction> {
    match (call.action, call.operation.as_str()) {
        (Some(a), _) => Some(call_action(a)),
        (None, "") => None,
        (None, op) => Some(aws_action(op)),
    }
}

/// The cloud's journal from the start of the run.
pub struct CloudJournal {
    from: u64,
}

impl CloudJournal {
    /// Counts calls from now on (the cloud starts afresh with the run: from `seq` 0).
    #[must_use]
    pub fn start() -> CloudJournal {
        CloudJournal { from: 0 }
    }

    /// Every call since the start; calls that matched neither an API action nor an AWS
    /// operation are left out.
    pub async fn finish(self, cloud: &impl CloudControl) -> CloudReport {
        let page = match cloud.calls_since(self.from).await {
            Ok(page) => page,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the cloud's journal");
                return CloudReport {
                    failed: true,
                    ..CloudReport::default()
                };
            }
        };
        let epoch = cloud.epoch();
        let mut ops = Interner::default();
        let calls = page
            .calls
            .into_iter()
            .filter_map(|c| {
                let action = action_of(&c)?;
                // Before the run's start only by the epoch's error: keep it, at 0.
                let at_us = epoch.to_run(c.at_us).map_or(0, |t| t.0);
                let retry_not_before_us = (c.retry_after_ms > 0)
                    .then(|| at_us + u64::from(c.latency_us) + u64::from(c.retry_after_ms) * 1000);
                Some(CloudCall {
                    at_us,
                    account: c.account,
                    action,
                    op: ops.get(format_args!("{}:{}", c.service, c.operation)),
                    name: c.name,
                    status: c.status,
                    throttled: c.throttled,
                    retry_not_before_us,
                })
            })
            .collect();
        CloudReport {
            calls,
            dropped: page.dropped,
            failed: false,
            epoch_uncertainty: epoch.uncertainty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_operations_are_classed_by_their_verb() {
        assert_eq!(aws_action("HeadBucket"), CallAction::Get);
        assert_eq!(aws_action("GetBucketTagging"), CallAction::Get);
        assert_eq!(aws_action("DescribeVpcs"), CallAction::Get);
        assert_eq!(aws_action("AssumeRole"), CallAction::Get);
        assert_eq!(aws_action("ListTagsOfResource"), CallAction::List);
        assert_eq!(aws_action("CreateBucket"), CallAction::Create);
        assert_eq!(aws_action("PutBucketVersioning"), CallAction::Update);
        assert_eq!(aws_action("DeleteTable"), CallAction::Delete);
    }
}
