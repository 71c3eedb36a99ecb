//! What the rooms of the driver share across phases: the scenario, the client the writes go
//! through, the run's clock, the [`Log`], the reconcile-request tokens asked for, the
//! faults in force, and the XR groups' part. A leaf of the driver.

use std::collections::BTreeMap;

use kube::api::{Api, DynamicObject};

use super::log::{Log, Record};
use crate::run::clock::RunClock;
use crate::run::core::xrs::XrDriver;
use crate::run::objects::group_kind_info;
use crate::run::source::watches::Key;
use crate::scenario::{FaultShare, GroupFault, Scenario};

/// The driver's state: what every action reads and writes.
pub struct State<'s> {
    /// The scenario.
    pub scenario: &'s Scenario,
    /// The harness's client: every write goes through it.
    pub client: kube::Client,
    /// The run's clock.
    pub clock: RunClock,
    /// What the driver did.
    pub log: Log,
    /// Reconcile-request tokens expected per resource (resync phases).
    pub requested: BTreeMap<Key, String>,
    /// The fault shares of each group in force in the current phase.
    pub in_force: Vec<Vec<FaultShare>>,
    /// How many of the seeded objects the clean-up has deleted (the last first).
    pub seeded_deleted: usize,
    /// The XR groups' part of each phase.
    pub xrs: XrDriver<'s>,
}

impl<'s> State<'s> {
    /// The state before the first phase.
    #[must_use]
    pub fn new(scenario: &'s Scenario, client: kube::Client, clock: RunClock) -> Self {
        State {
            scenario,
            xrs: XrDriver::new(scenario, client.clone()),
            client,
            clock,
            log: Log::default(),
            requested: BTreeMap::new(),
            in_force: scenario.groups.iter().map(|g| g.faults.clone()).collect(),
            seeded_deleted: 0,
        }
    }

    /// Now on the run's clock, µs.
    #[must_use]
    pub fn now_us(&self) -> u64 {
        self.clock.now().0
    }

    /// The API of group `g`'s kind.
    #[must_use]
    pub fn api(&self, g: usize) -> Api<DynamicObject> {
        group_kind_info(self.scenario, &self.scenario.groups[g]).api(&self.client)
    }

    /// The resources of `groups` (all groups when `None`), as (group, index).
    #[must_use]
    pub fn targets(&self, groups: Option<&[usize]>) -> Vec<(usize, u32)> {
        let all: Vec<usize> = (0..self.scenario.groups.len()).collect();
        let groups = groups.unwrap_or(&all);
        groups
            .iter()
            .flat_map(|&g| (0..self.scenario.groups[g].count).map(move |i| (g, i)))
            .collect()
    }

    /// Whether resource `k` has a lasting error in force now.
    #[must_use]
    pub fn fails_for_good(&self, (g, i): (usize, u32)) -> bool {
        self.in_force[g]
            .iter()
            .find(|s| (s.start..s.end).contains(&i))
            .is_some_and(|s| GroupFault::never_ready(&s.fault))
    }

    /// Whether resource `k` cannot become Ready with the faults in force now.
    #[must_use]
    pub fn never_ready(&self, k: (usize, u32)) -> bool {
        self.scenario.groups[k.0].observe_only() || self.fails_for_good(k)
    }

    /// Created (successfully) and not deleted.
    #[must_use]
    pub fn is_live(&self, k: &(usize, u32)) -> bool {
        self.log.records.get(k).is_some_and(Record::is_live)
    }

    /// The live ones of `targets`.
    #[must_use]
    pub fn live(&self, targets: &[(usize, u32)]) -> Vec<(usize, u32)> {
        targets
            .iter()
            .copied()
            .filter(|k| self.is_live(k))
            .collect()
    }

    /// Resource `i` of group `g` in the watches: (kind, name).
    #[must_use]
    pub fn key(&self, g: usize, i: u32) -> Key {
        let group = &self.scenario.groups[g];
        (
            group.kind.to_string(),
            group.resource_name(i, &self.scenario.name),
        )
    }
}
