//! Aggregate counts that stay complete even when the journal drops entries: requests per
//! account, operation and status; calls, throttles and errors per service and operation; a
//! per-second timeline; quota violations per bucket.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::FastMap;
use crate::journal::{FAULT, JournalStats, QUOTA_EXCEEDED, Record, SHADOW_THROTTLED, THROTTLED};
use crate::model::Action;
use crate::quota::Layer;
use crate::service::{Operation, Service};

/// Requests of one account and operation that got one status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusCount {
    /// The authenticated account (empty if authentication failed).
    pub account: String,
    /// The generic API's action (empty for AWS calls and requests that matched no route).
    pub action: String,
    /// The service (`generic`, `s3`, …; empty for requests that matched none).
    #[serde(default)]
    pub service: String,
    /// The operation as named on the wire (the generic API's are its actions).
    #[serde(default)]
    pub operation: String,
    /// The response status.
    pub status: u16,
    /// How many.
    pub count: u64,
}

/// Calls of one operation of one service, all accounts together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationCount {
    /// The service.
    pub service: String,
    /// The operation.
    pub operation: String,
    /// Every call.
    pub requests: u64,
    /// Calls refused by a rate quota.
    pub throttled: u64,
    /// Calls shadow mode let through over a rate quota.
    pub shadow_throttled: u64,
    /// Calls answered with a 4xx or 5xx status other than a throttle (including
    /// injected faults).
    pub errors: u64,
    /// Calls failed by an injected fault.
    pub faults: u64,
}

/// One second of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Second {
    /// Seconds since start.
    pub second: u64,
    /// Requests that arrived in this second.
    pub requests: u64,
    /// Requests refused by a rate quota.
    pub throttled: u64,
    /// Requests that shadow mode let through over a rate quota.
    pub shadow_throttled: u64,
}

/// Rate-quota violations of one bucket of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violations {
    /// The account.
    pub account: String,
    /// The bucket: `account`, `class:<class>` or `action:<action>`.
    pub layer: String,
    /// Requests refused.
    pub throttled: u64,
    /// Requests that would have been refused, let through by shadow mode.
    pub shadow_throttled: u64,
}

/// What `GET /admin/v1/summary` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The wall-clock time at which the cloud's clock read zero (see
    /// [`crate::MockCloud::epoch`]), as RFC 3339.
    pub epoch: Timestamp,
    /// Every API request since start or the last reset.
    pub requests: u64,
    /// Requests refused by a rate quota.
    pub throttled: u64,
    /// Requests shadow mode let through over a rate quota.
    pub shadow_throttled: u64,
    /// Requests refused by a count quota.
    pub quota_exceeded: u64,
    /// The journal's own counters (including dropped entries).
    pub journal: JournalStats,
    /// Requests per account, operation and status.
    pub counts: Vec<StatusCount>,
    /// Calls, throttles and errors per service and operation.
    #[serde(default)]
    pub operations: Vec<OperationCount>,
    /// Requests per second since start, in order: only the seconds that had a request (a
    /// second with none is absent, so a long idle stretch costs nothing).
    pub timeline: Vec<Second>,
    /// Rate-quota violations per account and bucket.
    pub violations: Vec<Violations>,
}

/// The running aggregates.
#[derive(Debug, Default)]
pub(crate) struct Aggregates {
    requests: u64,
    throttled: u64,
    shadow_throttled: u64,
    quota_exceeded: u64,
    counts: FastMap<(u32, Option<Operation>, u16), u64>,
    operations: FastMap<Option<Operation>, [u64; 5]>,
    timeline: Vec<Second>,
    violations: FastMap<(u32, Layer), (u64, u64)>,
}

impl Aggregates {
    /// Counts one request; `account` is its interned account name.
    pub fn add(&mut self, record: &Record<'_>, account: u32, layer: Option<Layer>) {
        self.requests += 1;
        let throttled = record.flags & THROTTLED != 0;
        let shadow = record.flags & SHADOW_THROTTLED != 0;
        self.throttled += u64::from(throttled);
        self.shadow_throttled += u64::from(shadow);
        self.quota_exceeded += u64::from(record.flags & QUOTA_EXCEEDED != 0);
        *self
            .counts
            .entry((account, record.operation, record.status))
            .or_default() += 1;
        let op = self.operations.entry(record.operation).or_default();
        op[0] += 1;
        op[1] += u64::from(throttled);
        op[2] += u64::from(shadow);
        op[3] += u64::from(record.status >= 400 && !throttled);
        op[4] += u64::from(record.flags & FAULT != 0);
        let second = record.at.as_secs();
        let slot = self.second_mut(second);
        slot.requests += 1;
        slot.throttled += u64::from(throttled);
        slot.shadow_throttled += u64::from(shadow);
        if let Some(layer) = layer {
            let v = self.violations.entry((account, layer)).or_default();
            v.0 += u64::from(throttled);
            v.1 += u64::from(shadow);
        }
    }

    /// The timeline's slot for `second`, added where it belongs if the second had no
    /// request yet. Requests come in time order almost always (a push or the last slot);
    /// a late one is placed by binary search.
    fn second_mut(&mut self, second: u64) -> &mut Second {
        let at = match self.timeline.last() {
            Some(last) if last.second == second => self.timeline.len() - 1,
            Some(last) if last.second > second => {
                match self.timeline.binary_search_by_key(&second, |s| s.second) {
                    Ok(at) => at,
                    Err(at) => {
                        self.timeline.insert(
                            at,
                            Second {
                                second,
                                ..Second::default()
                            },
                        );
                        at
                    }
                }
            }
            _ => {
                self.timeline.push(Second {
                    second,
                    ..Second::default()
                });
                self.timeline.len() - 1
            }
        };
        &mut self.timeline[at]
    }

    /// The summary, with account names resolved by `name`.
    pub fn summary(
        &self,
        epoch: Timestamp,
        journal: JournalStats,
        name: impl Fn(u32) -> String,
    ) -> Summary {
        let mut counts: Vec<StatusCount> = self
            .counts
            .iter()
            .map(|((account, operation, status), &count)| StatusCount {
                account: name(*account),
                action: generic_action(*operation)
                    .map_or("", Action::as_str)
                    .to_owned(),
                service: operation.map_or("", |o| o.service().as_str()).to_owned(),
                operation: operation.map_or("", Operation::name).to_owned(),
                status: *status,
                count,
            })
            .collect();
        counts.sort_by(|a, b| {
            (&a.account, &a.service, &a.operation, a.status).cmp(&(
                &b.account,
                &b.service,
                &b.operation,
                b.status,
            ))
        });
        let mut operations: Vec<OperationCount> = self
            .operations
            .iter()
            .map(|(operation, c)| OperationCount {
                service: operation.map_or("", |o| o.service().as_str()).to_owned(),
                operation: operation.map_or("", Operation::name).to_owned(),
                requests: c[0],
                throttled: c[1],
                shadow_throttled: c[2],
                errors: c[3],
                faults: c[4],
            })
            .collect();
        operations.sort_by(|a, b| (&a.service, &a.operation).cmp(&(&b.service, &b.operation)));
        let violations: BTreeMap<(String, String), (u64, u64)> = self
            .violations
            .iter()
            .map(|((account, layer), &v)| ((name(*account), layer.name()), v))
            .collect();
        Summary {
            epoch,
            requests: self.requests,
            throttled: self.throttled,
            shadow_throttled: self.shadow_throttled,
            quota_exceeded: self.quota_exceeded,
            journal,
            counts,
            operations,
            timeline: self.timeline.clone(),
            violations: violations
                .into_iter()
                .map(
                    |((account, layer), (throttled, shadow_throttled))| Violations {
                        account,
                        layer,
                        throttled,
                        shadow_throttled,
                    },
                )
                .collect(),
        }
    }
}

/// The generic API's action of an operation.
fn generic_action(operation: Option<Operation>) -> Option<Action> {
    let operation = operation?;
    (operation.service() == Service::Generic)
        .then(|| Action::ALL.get(usize::from(operation.index())).copied())
        .flatten()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn record(at: Duration) -> Record<'static> {
        Record {
            at,
            latency: Duration::ZERO,
            account: "acme",
            action: None,
            collection: None,
            operation: None,
            name: "a",
            status: 200,
            flags: 0,
            retry_after_ms: 0,
        }
    }

    #[test]
    fn the_timeline_keeps_only_seconds_with_requests_in_order_even_a_late_one() {
        let mut aggregates = Aggregates::default();
        let week = 7 * 24 * 3600;
        for at in [0, 0, 5, week, 3, week, 5] {
            aggregates.add(&record(Duration::from_millis(at * 1000 + 250)), 0, None);
        }
        let seconds: Vec<(u64, u64)> = aggregates
            .timeline
            .iter()
            .map(|s| (s.second, s.requests))
            .collect();
        assert_eq!(seconds, [(0, 2), (3, 1), (5, 2), (week, 2)]);
    }
}
