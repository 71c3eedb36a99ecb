//! Cloud calls per reconcile of one kind: the figures by path (a scenario's `calls`, or a
//! profile's calibration), by operation, and as a calibration measured them. A leaf, so
//! the model and the profile both use it.

use std::collections::BTreeMap;

/// Cloud calls per reconcile of one kind, by path (docs/budget.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Calls {
    /// Observe of an existing resource.
    pub observe: u32,
    /// Create.
    pub create: u32,
    /// Update.
    pub update: u32,
    /// Delete.
    pub delete: u32,
    /// Connect, before every Observe.
    pub connect: u32,
}

impl Calls {
    /// The sample provider's kinds: one Get per Observe, one call per Create, Update or
    /// Delete (c_max = 2).
    pub const SAMPLE: Calls = Calls {
        observe: 1,
        create: 1,
        update: 1,
        delete: 1,
        connect: 0,
    };

    /// c_max: the most calls one reconcile makes, Connect + Observe + the largest of Create,
    /// Update and Delete.
    #[must_use]
    pub fn max(&self) -> u32 {
        self.connect + self.observe + self.create.max(self.update).max(self.delete)
    }

    /// c_poll: the calls of a poll of an up-to-date resource, Connect + Observe.
    #[must_use]
    pub fn poll(&self) -> u32 {
        self.connect + self.observe
    }
}

/// The path names of a `calls` entry's `operations` and `measured`: Connect's calls, then
/// the reconcile paths of `harness::measure::per_reconcile::Path`.
pub const CALL_PATHS: [&str; 7] = [
    "connect",
    "create",
    "firstObserve",
    "observe",
    "update",
    "delete",
    "deleting",
];

/// One kind's calls beyond the figures of [`Calls`]: by operation, and as measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallDetail {
    /// Per path of [`CALL_PATHS`]: the most calls of each `service:Operation` one reconcile
    /// of the path makes.
    pub operations: BTreeMap<String, BTreeMap<String, f64>>,
    /// Per path of [`CALL_PATHS`]: the sample a calibration measured.
    pub measured: BTreeMap<String, Measured>,
    /// Where the figures come from: `calls` of the scenario, or the calibration file.
    pub source: String,
}

impl CallDetail {
    /// The most calls of `op` (`service:Operation`, or `service:` for every operation of a
    /// service) one reconcile makes: Connect's plus the largest of any path's.
    #[must_use]
    pub fn per_reconcile_max(&self, op: &str) -> f64 {
        let of = |path: &str| {
            self.operations.get(path).map_or(0.0, |ops| {
                ops.iter()
                    .filter(|(o, _)| op_matches(op, o))
                    .map(|(_, v)| *v)
                    .sum::<f64>()
            })
        };
        of("connect") + CALL_PATHS[1..].iter().map(|p| of(p)).fold(0.0, f64::max)
    }

    /// Every operation named in `operations`, sorted.
    #[must_use]
    pub fn operation_names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self
            .operations
            .values()
            .flat_map(|ops| ops.keys().map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Whether `op` (`service:Operation`) is `selector`: the same operation, or an operation of
/// the service `selector` names as `service:` or `service`.
#[must_use]
pub fn op_matches(selector: &str, op: &str) -> bool {
    match selector.split_once(':') {
        Some((service, "")) => op.split_once(':').is_some_and(|(s, _)| s == service),
        Some(_) => selector == op,
        None => op.split_once(':').is_some_and(|(s, _)| s == selector),
    }
}

/// Calls per reconcile of one path as a calibration measured them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    /// Reconciles in the sample.
    pub reconciles: u64,
    /// Mean calls per reconcile.
    pub mean: f64,
    /// Fewest.
    pub min: u64,
    /// Most.
    pub max: u64,
    /// Standard deviation.
    pub sd: f64,
}
