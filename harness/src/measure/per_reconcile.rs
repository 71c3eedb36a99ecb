//! Cloud calls per reconcile, by kind, path and operation: the calibration of a provider the
//! harness did not write.
//!
//! # Semantics
//! A managed reconciler (crossplane-runtime's, and so every upjet provider's) ends each
//! reconcile by writing the resource's status, also when nothing changed; the API server's
//! journal dates those writes. A resource's reconcile `k` holds the calls made after its
//! status write `k − 1` and up to its status write `k`; a resource that is gone ends its last
//! reconcile when it went (its finalizer's removal writes no status).
//!
//! - A call is **named** when the journal names the resource's cloud name (a bucket, a
//!   table, a VPC ID): it goes to that resource's reconcile that contains it.
//! - Any other call (STS's Connect, made before the Observe) goes to the **next reconcile to
//!   start** after it: the one whose first named call (or, without one, its end) comes next.
//!   This is exact when reconciles do not overlap in time (a calibration's small sample,
//!   created slowly); reconciles that overlap others are counted, so a reader knows. A
//!   reconcile given the same unnamed operation twice (two reconciles side by side both
//!   connected before the first named its resource) counts as overlapping, and so does the
//!   reconcile that starts after it.
//! - Calls after a resource's last status write belong to a reconcile that had not ended
//!   when the run stopped: they are not counted.
//!
//! Each reconcile's calls split into **connect** (the services that authenticate, STS by
//! default; measured over the reconciles that overlap no other, since those calls name no
//! resource) and the rest, which make its **path**, decided in the resource's order:
//!
//! | path | reconcile |
//! |---|---|
//! | `create` | the first with a write (any operation that is not a read), before deletion |
//! | `update` | a later one with a write, before deletion |
//! | `firstObserve` | the first without a write |
//! | `observe` | a later one without a write, before deletion |
//! | `delete` | one with a write that ended after the harness deleted the resource |
//! | `deleting` | one without a write that ended after the harness deleted the resource |
//!
//! Once a resource is deleted, the caller also ends its reconciles at the provider's writes
//! of the object (finalizer removals), but a reconcile that finds it gone and requeues
//! writes nothing: a `deleting` span may hold several reconciles. Its Connect calls are
//! left out of connect's figures and of [`PerReconcile::reconciles`].
//!
//! A call the cloud answered 429 (a quota's throttle) is kept apart: it is not the path's
//! cost, and it does not make its reconcile one that writes. A create the quota throttled
//! is retried by a later reconcile, whose path is then `create`; counting the throttled
//! attempt too would charge a calibrated path for the cloud's throttling (docs/budget.md
//! §10.4). Each path counts the 429s of its reconciles apart ([`CallStats::throttled`]).
//!
//! A read is an operation named `Get…`, `Head…`, `Describe…` or `List…` (the generic API's
//! `get` and `list`); every other operation writes. A reconcile without a single call is
//! counted apart (`empty`): it made no call whatever its path.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

/// A cloud call as attribution needs it.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    /// Arrival, µs.
    pub at_us: u64,
    /// The resource's cloud name as the journal gives it (may be empty).
    pub name: &'a str,
    /// `service:Operation`.
    pub op: &'a str,
    /// Answered 429 by a quota: kept apart from the path's cost.
    pub throttled: bool,
}

/// A resource whose reconciles are counted.
#[derive(Clone, Debug)]
pub struct Resource<'a> {
    /// Its kind, as reports name it.
    pub kind: &'a str,
    /// Its cloud name, when known.
    pub cloud_name: Option<&'a str>,
    /// The ends of its reconciles, µs: its status writes, and when it was gone.
    pub ends: Vec<u64>,
    /// When the harness deleted it, µs.
    pub deleted_us: Option<u64>,
}

/// A reconcile path (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Path {
    /// The first reconcile that writes.
    Create,
    /// The first reconcile that does not write.
    FirstObserve,
    /// A later reconcile that does not write.
    Observe,
    /// A later reconcile that writes.
    Update,
    /// A reconcile that writes after the deletion request.
    Delete,
    /// A reconcile that does not write after the deletion request.
    Deleting,
}

impl Path {
    /// Every path, in report order.
    pub const ALL: [Path; 6] = [
        Path::Create,
        Path::FirstObserve,
        Path::Observe,
        Path::Update,
        Path::Delete,
        Path::Deleting,
    ];

    /// Its name in files (`firstObserve`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Path::Create => "create",
            Path::FirstObserve => "firstObserve",
            Path::Observe => "observe",
            Path::Update => "update",
            Path::Delete => "delete",
            Path::Deleting => "deleting",
        }
    }

    /// Its name in prose (`first observe`).
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            Path::Create => "create",
            Path::FirstObserve => "first observe",
            Path::Observe => "steady observe",
            Path::Update => "update",
            Path::Delete => "delete",
            Path::Deleting => "observe while deleting",
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Calls per reconcile over a set of reconciles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallStats {
    /// Reconciles counted (the sample size).
    pub reconciles: u64,
    /// Mean calls per reconcile.
    #[serde(with = "crate::float")]
    pub mean: f64,
    /// Fewest.
    pub min: u64,
    /// Most.
    pub max: u64,
    /// Standard deviation (population).
    #[serde(with = "crate::float")]
    pub sd: f64,
    /// The most writes (operations that are not reads) of one reconcile.
    pub writes_max: u64,
    /// Mean calls per reconcile by operation (`service:Operation`).
    pub operations: BTreeMap<String, f64>,
    /// The most calls of each operation in one reconcile.
    #[serde(default)]
    pub operations_max: BTreeMap<String, u64>,
    /// Calls answered 429 per reconcile, apart from the others (not in `mean`).
    #[serde(default, with = "crate::float")]
    pub throttled: f64,
}

impl CallStats {
    fn of(reconciles: &[Vec<&str>], is_write: impl Fn(&str) -> bool) -> CallStats {
        let n = reconciles.len() as u64;
        if n == 0 {
            return CallStats::default();
        }
        let counts: Vec<u64> = reconciles.iter().map(|r| r.len() as u64).collect();
        let mean = counts.iter().sum::<u64>() as f64 / n as f64;
        let var = counts
            .iter()
            .map(|&c| (c as f64 - mean).powi(2))
            .sum::<f64>()
            / n as f64;
        let mut operations: BTreeMap<String, f64> = BTreeMap::new();
        let mut operations_max: BTreeMap<String, u64> = BTreeMap::new();
        for r in reconciles {
            let mut here: BTreeMap<&str, u64> = BTreeMap::new();
            for op in r {
                *here.entry(op).or_default() += 1;
            }
            for (op, count) in here {
                *operations.entry(op.to_owned()).or_default() += count as f64;
                let most = operations_max.entry(op.to_owned()).or_default();
                *most = (*most).max(count);
            }
        }
        operations.values_mut().for_each(|v| *v /= n as f64);
        CallStats {
            reconciles: n,
            mean,
            min: counts.iter().copied().min().unwrap_or(0),
            max: counts.iter().copied().max().unwrap_or(0),
            sd: var.sqrt(),
            writes_max: reconciles
                .iter()
                .map(|r| r.iter().filter(|op| is_write(op)).count() as u64)
                .max()
                .unwrap_or(0),
            operations,
            operations_max,
            throttled: 0.0,
        }
    }

    /// `13 calls: s3:GetBucketAcl 1, …` (or `13.4 calls (12–15)` when they vary).
    #[must_use]
    pub fn describe(&self) -> String {
        let n = |v: f64| {
            if (v - v.round()).abs() < 0.005 {
                format!("{}", v.round())
            } else {
                format!("{v:.2}")
            }
        };
        let count = if self.min == self.max {
            format!("{} call{}", self.max, if self.max == 1 { "" } else { "s" })
        } else {
            format!("{} calls ({}–{})", n(self.mean), self.min, self.max)
        };
        if self.operations.is_empty() {
            return count;
        }
        let ops: Vec<String> = self
            .operations
            .iter()
            .map(|(op, v)| {
                format!(
                    "{} {}",
                    op.split_once(':').map_or(op.as_str(), |o| o.1),
                    n(*v)
                )
            })
            .collect();
        format!("{count}: {}", ops.join(", "))
    }
}

/// One kind's calls per reconcile.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KindCalls {
    /// The kind.
    pub kind: String,
    /// Resources of the kind whose reconciles were counted.
    pub resources: u64,
    /// Per path, the calls that are not connect's.
    pub paths: BTreeMap<Path, CallStats>,
    /// Connect's calls, over the reconciles of the kind that overlapped no other (all of
    /// them when every one did): Connect's calls name no resource, so only a reconcile
    /// alone in time says whose they are.
    pub connect: CallStats,
    /// Reconciles without a call.
    pub empty: u64,
    /// Reconciles whose span (first call to end) overlapped another reconcile's: their
    /// unnamed calls may be someone else's.
    pub overlapped: u64,
}

impl KindCalls {
    /// The stats of `path`, if any reconcile took it.
    #[must_use]
    pub fn path(&self, path: Path) -> Option<&CallStats> {
        self.paths.get(&path).filter(|s| s.reconciles > 0)
    }
}

/// Calls per reconcile of a run, by kind.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerReconcile {
    /// Per kind, in the order of their first resource.
    pub kinds: Vec<KindCalls>,
    /// Reconciles with at least one call, every kind, but those of the `deleting` path
    /// (a span of it may hold several reconciles).
    #[serde(default)]
    pub reconciles: u64,
    /// Connect's calls among them: Connect's calls per reconcile over the whole provider
    /// are `connect_calls / reconciles`, exact however reconciles overlap.
    #[serde(default)]
    pub connect_calls: u64,
    /// Calls counted in a reconcile.
    pub attributed: u64,
    /// Calls after their reconcile's last status write (it had not ended).
    pub open: u64,
    /// Calls no reconcile took: made after every reconcile had ended, or naming a resource
    /// the run did not count.
    pub unattributed: u64,
    /// Calls answered 429 among the attributed ones: kept apart from every path's cost.
    #[serde(default)]
    pub throttled: u64,
}

/// One kind's reconciles while they are gathered: each a list of operations.
#[derive(Default)]
struct Grouped<'a> {
    paths: BTreeMap<Path, Vec<Vec<&'a str>>>,
    throttled: BTreeMap<Path, u64>,
    connect: Vec<Vec<&'a str>>,
    connect_overlapped: Vec<Vec<&'a str>>,
    resources: u64,
    empty: u64,
    overlapped: u64,
}

/// Whether `op` (`service:Operation`) reads (see the module's rule).
#[must_use]
pub fn is_read(op: &str) -> bool {
    let operation = op.split_once(':').map_or(op, |(_, o)| o);
    ["Get", "Head", "Describe", "List", "get", "list"]
        .iter()
        .any(|p| operation.starts_with(p))
}

/// Attributes `calls` to the reconciles of `resources`; `connect` names the services whose
/// calls are Connect's (`sts`).
#[must_use]
pub fn per_reconcile(
    calls: &[Call<'_>],
    resources: &[Resource<'_>],
    connect: &[&str],
) -> PerReconcile {
    let by_name: HashMap<&str, usize> = resources
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((r.cloud_name.filter(|n| !n.is_empty())?, i)))
        .collect();
    let ends: Vec<Vec<u64>> = resources
        .iter()
        .map(|r| {
            let mut e = r.ends.clone();
            e.sort_unstable();
            e.dedup();
            e
        })
        .collect();
    // The reconcile of resource r that contains t: the first end at or after t.
    let slot = |r: usize, t: u64| ends[r].partition_point(|&e| e < t);
    // Where a reconcile starts, for unnamed calls: its first named call, or its end when it
    // has none.
    let mut starts: Vec<Vec<Option<u64>>> = ends.iter().map(|e| vec![None; e.len()]).collect();
    for c in calls {
        if let Some(&r) = by_name.get(c.name) {
            let k = slot(r, c.at_us);
            if let Some(first) = starts[r].get_mut(k) {
                *first = Some(first.map_or(c.at_us, |f| f.min(c.at_us)));
            }
        }
    }
    let mut events: Vec<(u64, usize, usize)> = Vec::new();
    for (r, e) in ends.iter().enumerate() {
        events.extend(
            e.iter()
                .enumerate()
                .map(|(k, &end)| (starts[r][k].unwrap_or(end), r, k)),
        );
    }
    events.sort_unstable();
    let mut held: Vec<Vec<Vec<&str>>> = ends.iter().map(|e| vec![Vec::new(); e.len()]).collect();
    let mut rejected: Vec<Vec<u64>> = ends.iter().map(|e| vec![0; e.len()]).collect();
    let mut throttled = 0u64;
    let mut first_call: Vec<Vec<Option<u64>>> = ends.iter().map(|e| vec![None; e.len()]).collect();
    // The unnamed operations each reconcile took before it started, and whether one came
    // twice: two reconciles running side by side can both make their Connect before the
    // first of them makes its first named call, and both Connects then go to that one.
    let mut unnamed: Vec<Vec<Vec<&str>>> = ends.iter().map(|e| vec![Vec::new(); e.len()]).collect();
    let mut doubled: Vec<Vec<bool>> = ends.iter().map(|e| vec![false; e.len()]).collect();
    let (mut attributed, mut open, mut unattributed) = (0u64, 0u64, 0u64);
    for c in calls {
        let (r, k) = match by_name.get(c.name) {
            Some(&r) => (r, slot(r, c.at_us)),
            None => {
                let next = events.partition_point(|e| e.0 < c.at_us);
                match events.get(next) {
                    Some(&(_, r, k)) => {
                        if k < ends[r].len() {
                            doubled[r][k] |= unnamed[r][k].contains(&c.op);
                            unnamed[r][k].push(c.op);
                        }
                        (r, k)
                    }
                    None => {
                        unattributed += 1;
                        continue;
                    }
                }
            }
        };
        if k >= ends[r].len() {
            open += 1;
            continue;
        }
        if c.throttled {
            rejected[r][k] += 1;
            throttled += 1;
        } else {
            held[r][k].push(c.op);
        }
        let first = &mut first_call[r][k];
        *first = Some(first.map_or(c.at_us, |f| f.min(c.at_us)));
        attributed += 1;
    }
    let mut overlapped = overlaps(&ends, &first_call);
    // A reconcile given an unnamed call twice, and the reconcile that starts next (whose
    // call it may hold), overlapped.
    for (i, &(_, r, k)) in events.iter().enumerate() {
        if doubled[r][k] {
            overlapped[r][k] = true;
            if let Some(&(_, nr, nk)) = events.get(i + 1) {
                overlapped[nr][nk] = true;
            }
        }
    }
    let mut kinds: Vec<KindCalls> = Vec::new();
    let mut connect_calls = 0u64;
    let mut grouped: Vec<Grouped<'_>> = Vec::new();
    let is_connect = |op: &str| {
        connect
            .iter()
            .any(|s| op.split_once(':').is_some_and(|(svc, _)| svc == *s))
    };
    for (r, res) in resources.iter().enumerate() {
        let at = match kinds.iter().position(|k| k.kind == res.kind) {
            Some(i) => i,
            None => {
                kinds.push(KindCalls {
                    kind: res.kind.to_owned(),
                    ..KindCalls::default()
                });
                grouped.push(Default::default());
                kinds.len() - 1
            }
        };
        let g = &mut grouped[at];
        g.resources += 1;
        let (mut wrote, mut observed) = (false, false);
        for (k, ops) in held[r].iter().enumerate() {
            if ops.is_empty() {
                g.empty += 1;
                continue;
            }
            g.overlapped += u64::from(overlapped[r][k]);
            let (conn, rest): (Vec<&str>, Vec<&str>) = ops.iter().partition(|op| is_connect(op));
            let writes = rest.iter().any(|op| !is_read(op));
            let deleting = res.deleted_us.is_some_and(|d| ends[r][k] > d);
            let path = match (deleting, writes) {
                (true, true) => Path::Delete,
                (true, false) => Path::Deleting,
                (false, true) if !wrote => Path::Create,
                (false, true) => Path::Update,
                (false, false) if !observed => Path::FirstObserve,
                (false, false) => Path::Observe,
            };
            wrote |= writes;
            observed |= !writes;
            // A `deleting` span may hold several reconciles (those that requeue write
            // nothing), each with its Connect: Connect is measured on the other paths.
            if path != Path::Deleting {
                connect_calls += conn.len() as u64;
                if overlapped[r][k] {
                    g.connect_overlapped.push(conn);
                } else {
                    g.connect.push(conn);
                }
            }
            g.paths.entry(path).or_default().push(rest);
            *g.throttled.entry(path).or_default() += rejected[r][k];
        }
    }
    let is_write = |op: &str| !is_read(op);
    for (kind, g) in kinds.iter_mut().zip(grouped) {
        kind.resources = g.resources;
        kind.empty = g.empty;
        kind.overlapped = g.overlapped;
        // Connect's calls name no resource: only reconciles alone in time say whose they
        // are, so they alone measure it (all of them when none was alone).
        let connect = if g.connect.is_empty() {
            &g.connect_overlapped
        } else {
            &g.connect
        };
        kind.connect = CallStats::of(connect, is_write);
        let rejected = g.throttled;
        kind.paths = g
            .paths
            .into_iter()
            .map(|(p, rs)| {
                let mut st = CallStats::of(&rs, is_write);
                st.throttled = rejected.get(&p).copied().unwrap_or(0) as f64 / rs.len() as f64;
                (p, st)
            })
            .collect();
    }
    let reconciles = kinds
        .iter()
        .flat_map(|k| k.paths.iter())
        .filter(|(p, _)| **p != Path::Deleting)
        .map(|(_, s)| s.reconciles)
        .sum();
    PerReconcile {
        kinds,
        reconciles,
        connect_calls,
        attributed,
        open,
        unattributed,
        throttled,
    }
}

/// For each reconcile, whether its span (first call to end) overlaps another's.
fn overlaps(ends: &[Vec<u64>], first: &[Vec<Option<u64>>]) -> Vec<Vec<bool>> {
    let mut spans: Vec<(u64, u64, usize, usize)> = Vec::new();
    for (r, e) in ends.iter().enumerate() {
        for (k, &end) in e.iter().enumerate() {
            if let Some(start) = first[r][k] {
                spans.push((start, end, r, k));
            }
        }
    }
    spans.sort_unstable();
    let mut out: Vec<Vec<bool>> = ends.iter().map(|e| vec![false; e.len()]).collect();
    // The span that reaches furthest among those started so far.
    let mut reach: Option<(u64, usize, usize)> = None;
    for &(start, end, r, k) in &spans {
        if let Some((far, fr, fk)) = reach
            && start < far
        {
            out[r][k] = true;
            out[fr][fk] = true;
        }
        if reach.is_none_or(|(far, _, _)| end > far) {
            reach = Some((end, r, k));
        }
    }
    out
}

#[cfg(test)]
mod tests;
