//! Second stage: the validated scenario. Only this reaches `predict` and the runner.

use std::collections::BTreeMap;
use std::time::Duration;

use limiter::crossplane::Settings;

use super::error::{Pos, Problem};
use super::faults::{FaultShare, GroupFault};
use super::kinds::{ApiKind, GroupKind};
use super::raw::{AwsRetryModeName, CredentialCacheName, Target, TimeMode, Until};
use super::template::{Template, Vars, render_json};

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file it came from, as given.
    pub file: String,
    /// The `--set`s applied to it, in order.
    pub sets: Vec<super::set::Set>,
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed of random draws.
    pub seed: u64,
    /// Where it runs.
    pub target: Target,
    /// How time passes.
    pub time: TimeMode,
    /// The provider's settings: the same type the provider runs with.
    pub settings: Settings,
    /// Prediction inputs the settings do not give.
    pub prediction: PredictionInputs,
    /// The provider profile, for a provider the harness does not control.
    pub profile: Option<super::profile::Profile>,
    /// The mock cloud.
    pub cloud: Cloud,
    /// The AWS flavour's client settings (embedded runs).
    pub aws: AwsSettings,
    /// Objects created before the resources and deleted after them, in file order.
    pub objects: Vec<SceneObject>,
    /// Cloud calls per reconcile of each kind in the groups, by path.
    pub calls: BTreeMap<GroupKind, Calls>,
    /// What the `calls` entries (or the profile's calibration) say beyond the figures: calls
    /// by operation and the measured samples, per kind that has them.
    pub call_detail: BTreeMap<GroupKind, CallDetail>,
    /// Resource groups, in file order.
    pub groups: Vec<ResourceGroup>,
    /// The composite layer: core's settings, XRDs, Compositions, Functions and XR groups
    /// (empty without `composites`).
    pub composites: super::composite::Composites,
    /// Phases, in order.
    pub phases: Vec<Phase>,
    /// Assertions, in file order.
    pub assertions: Vec<Assertion>,
    /// Things that are allowed but probably not meant (an invalid poll-interval annotation
    /// that falls back to the default, a clamped one).
    pub warnings: Vec<Problem>,
}

impl Scenario {
    /// Whether the cloud may answer a call with a throttle or a server error, which an SDK
    /// retries: an account has a quota, the cloud injects errors, or a phase is an outage.
    #[must_use]
    pub fn retries_possible(&self) -> bool {
        let classes =
            |c: &Classes<ErrorFault>| ActionClass::ALL.iter().any(|&a| c.get(a).is_some());
        classes(&self.cloud.errors)
            || self.cloud.accounts.iter().any(|a| {
                ActionClass::ALL
                    .iter()
                    .any(|&class| a.quotas.get(class).is_some())
            })
            || self
                .phases
                .iter()
                .any(|p| matches!(p.action, Action::CloudOutage { .. }))
    }

    /// Whether the scenario runs the provider's AWS flavour: its kinds, its ProviderConfigs
    /// or its client settings.
    #[must_use]
    pub fn uses_aws(&self) -> bool {
        self.aws.set
            || self.groups.iter().any(|g| g.kind.aws())
            || self.objects.iter().any(|o| o.kind.aws)
    }

    /// Whether the scenario has the AWS flavour's VPC kind (in a group or an object), whose
    /// EC2 client is behind the harness's feature `aws-vpc`.
    #[must_use]
    pub fn uses_aws_vpc(&self) -> bool {
        self.groups.iter().any(|g| g.kind.aws_vpc())
            || self.objects.iter().any(|o| o.kind.aws_vpc())
    }
}

/// The provider's AWS flavour's client flags (`--aws-retry-mode`, `--credential-cache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AwsSettings {
    /// The SDK's retry mode.
    pub retry_mode: AwsRetryModeName,
    /// What survives between Connects.
    pub credential_cache: CredentialCacheName,
    /// Whether the scenario set either.
    pub set: bool,
}

/// A scenario-level object (a ProviderConfig, a Secret): rendered, checked against its
/// kind's schema, with its namespace set when namespaced.
#[derive(Clone, Debug)]
pub struct SceneObject {
    /// Its kind.
    pub kind: ApiKind,
    /// The whole object.
    pub body: serde_json::Value,
    /// Where it is in the scenario (a problem found at run time names it).
    pub pos: Pos,
}

pub use super::calls::{CALL_PATHS, CallDetail, Calls, Measured, op_matches};

/// The CPU time of one reconcile of the sample provider on the embedded stack, measured in
/// real time (scenarios/README.md, "Virtual time").
pub const DEFAULT_RECONCILE_CPU: Duration = Duration::from_micros(300);

/// Prediction inputs (docs/budget.md §0).
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionInputs {
    /// Mean reconcile duration L̄.
    pub reconcile: Duration,
    /// Shortest reconcile L_min.
    pub min_reconcile: Duration,
    /// Longest reconcile L_max (also the call spread Δ).
    pub max_reconcile: Duration,
    /// CPU time of one reconcile, slept by the provider in virtual time.
    pub reconcile_cpu: Duration,
    /// e_create = 1.
    pub self_event: bool,
    /// Level of the statistical tolerances.
    pub alpha: f64,
    /// API requests per reconcile type.
    pub api: ApiCosts,
    /// The API client's QPS and burst, when a profile gives them (default 5R and 10R).
    pub client: Option<super::flags::ClientLimits>,
    /// a: attempts the cloud SDK makes of one call when the cloud throttles or fails it.
    pub sdk_attempts: u32,
}

impl Default for PredictionInputs {
    fn default() -> Self {
        PredictionInputs {
            reconcile: Duration::from_millis(50),
            min_reconcile: Duration::from_millis(50),
            max_reconcile: Duration::from_millis(50),
            reconcile_cpu: DEFAULT_RECONCILE_CPU,
            self_event: true,
            alpha: 0.001,
            api: ApiCosts::default(),
            client: None,
            sdk_attempts: 1,
        }
    }
}

/// API requests per reconcile type (a_r, budget.md §0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ApiCosts {
    pub poll: u32,
    pub resync: u32,
    pub create: u32,
    pub observe: u32,
    pub update: u32,
    pub delete: u32,
    pub error: u32,
    pub before_create: u32,
}

impl Default for ApiCosts {
    /// crossplane-runtime v2.4.0's write sequences.
    fn default() -> Self {
        ApiCosts {
            poll: 1,
            resync: 2,
            create: 5,
            observe: 1,
            update: 2,
            delete: 2,
            error: 2,
            before_create: 2,
        }
    }
}

impl ApiCosts {
    /// The fewest requests any call-making reconcile waits for (a_min).
    #[must_use]
    pub fn min(&self) -> u32 {
        [
            self.poll,
            self.resync,
            self.create,
            self.observe,
            self.update,
            self.delete,
        ]
        .into_iter()
        .min()
        .unwrap_or(1)
        .max(1)
    }
}

/// Cloud action classes (quotas are per class).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum ActionClass {
    /// get
    Read,
    /// list
    List,
    /// create, update
    Mutate,
    /// delete
    Delete,
}

impl ActionClass {
    /// All classes.
    pub const ALL: [ActionClass; 4] = [
        ActionClass::Read,
        ActionClass::List,
        ActionClass::Mutate,
        ActionClass::Delete,
    ];

    /// Lowercase name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ActionClass::Read => "read",
            ActionClass::List => "list",
            ActionClass::Mutate => "mutate",
            ActionClass::Delete => "delete",
        }
    }
}

/// A value per action class.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub struct Classes<T> {
    pub read: Option<T>,
    pub list: Option<T>,
    pub mutate: Option<T>,
    pub delete: Option<T>,
}

impl<T> Default for Classes<T> {
    fn default() -> Self {
        Classes {
            read: None,
            list: None,
            mutate: None,
            delete: None,
        }
    }
}

impl<T> Classes<T> {
    /// The value of a class.
    #[must_use]
    pub fn get(&self, class: ActionClass) -> Option<&T> {
        match class {
            ActionClass::Read => self.read.as_ref(),
            ActionClass::List => self.list.as_ref(),
            ActionClass::Mutate => self.mutate.as_ref(),
            ActionClass::Delete => self.delete.as_ref(),
        }
    }
}

/// The mock cloud.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cloud {
    /// Accounts (at least one).
    pub accounts: Vec<Account>,
    /// Latency per class.
    pub latency: Classes<Latency>,
    /// Injected errors per class.
    pub errors: Classes<ErrorFault>,
    /// Provisioning times.
    pub provisioning: Provisioning,
}

impl Cloud {
    /// An account by name.
    #[must_use]
    pub fn account(&self, name: &str) -> Option<&Account> {
        self.accounts.iter().find(|a| a.name == name)
    }
}

/// A cloud account and its effective quotas.
#[derive(Clone, Debug, PartialEq)]
pub struct Account {
    /// Name.
    pub name: String,
    /// Quotas per class (cloud-wide ones with this account's overrides).
    pub quotas: Classes<Quota>,
}

/// A token-bucket quota.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quota {
    /// Bucket size b.
    pub burst: f64,
    /// Refill r per second.
    pub per_second: f64,
}

/// A latency distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    /// Always this.
    Fixed(Duration),
    /// Uniform on [min, max].
    Uniform {
        /// Shortest.
        min: Duration,
        /// Longest.
        max: Duration,
    },
    /// Log-normal.
    Lognormal {
        /// Median.
        median: Duration,
        /// Shape.
        sigma: f64,
    },
}

impl Latency {
    /// The mean.
    #[must_use]
    pub fn mean(&self) -> Duration {
        match *self {
            Latency::Fixed(d) => d,
            Latency::Uniform { min, max } => (min + max) / 2,
            Latency::Lognormal { median, sigma } => median.mul_f64((sigma * sigma / 2.0).exp()),
        }
    }
}

/// Injected errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorFault {
    /// Share of calls failed.
    pub rate: f64,
    /// Status (500 or 503).
    pub status: u16,
}

/// Provisioning times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Provisioning {
    /// A new Database is `creating` this long.
    pub database_create: Duration,
    /// A deleted Database is `deleting` this long.
    pub database_delete: Duration,
}

impl Default for Provisioning {
    fn default() -> Self {
        Provisioning {
            database_create: Duration::from_secs(5),
            database_delete: Duration::from_secs(3),
        }
    }
}

/// A group of resources.
#[derive(Clone, Debug)]
pub struct ResourceGroup {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: GroupKind,
    /// Namespace of its objects when it differs from the run's (namespaced kinds only).
    pub namespace: Option<String>,
    /// The object beyond `spec.forProvider`: `metadata.labels`, `metadata.annotations` and
    /// `spec` fields (placeholders allowed); `Null` when none.
    pub template: serde_json::Value,
    /// The conditions (type, status) a Ready resource has.
    pub ready: Vec<(String, String)>,
    /// How many.
    pub count: u32,
    /// Cloud account.
    pub account: String,
    /// Name of each resource.
    pub name_pattern: Template,
    /// `spec.forProvider` template.
    pub spec: serde_json::Value,
    /// Annotation shares, as disjoint index ranges.
    pub annotations: Vec<AnnotationShare>,
    /// Per-resource cloud faults, as disjoint index ranges from the top index down.
    pub faults: Vec<FaultShare>,
    /// `spec.managementPolicies` of every resource, if set.
    pub management_policies: Option<Vec<String>>,
    /// Where its `kind` is in the scenario (a problem found at run time names it).
    pub pos: Pos,
}

/// Annotations for the resources with index in `start..end`.
#[derive(Clone, Debug)]
pub struct AnnotationShare {
    /// First index.
    pub start: u32,
    /// One past the last index.
    pub end: u32,
    /// Annotations.
    pub values: BTreeMap<String, Template>,
}

impl ResourceGroup {
    fn vars<'a>(&'a self, index: u32, scenario: &'a str) -> Vars<'a> {
        Vars {
            index,
            group: &self.name,
            scenario,
        }
    }

    /// The name of resource `index`.
    #[must_use]
    pub fn resource_name(&self, index: u32, scenario: &str) -> String {
        self.name_pattern.render(self.vars(index, scenario))
    }

    /// The spec of resource `index`.
    #[must_use]
    pub fn resource_spec(&self, index: u32, scenario: &str) -> serde_json::Value {
        render_json(&self.spec, self.vars(index, scenario))
    }

    /// The template of resource `index`, rendered (`Null` when the group has none).
    #[must_use]
    pub fn resource_template(&self, index: u32, scenario: &str) -> serde_json::Value {
        render_json(&self.template, self.vars(index, scenario))
    }

    /// The cloud fault of resource `index`, if any.
    #[must_use]
    pub fn fault(&self, index: u32) -> Option<&GroupFault> {
        self.faults
            .iter()
            .find(|s| (s.start..s.end).contains(&index))
            .map(|s| &s.fault)
    }

    /// Whether the group only observes (`managementPolicies: [Observe]`).
    #[must_use]
    pub fn observe_only(&self) -> bool {
        super::faults::observe_only(self.management_policies.as_deref())
    }

    /// Whether resource `index` can never become Ready: a lasting error, or observe-only
    /// (the harness creates nothing in the cloud for it).
    #[must_use]
    pub fn never_ready(&self, index: u32) -> bool {
        self.observe_only() || self.fault(index).is_some_and(GroupFault::never_ready)
    }

    /// The annotations of resource `index`.
    #[must_use]
    pub fn resource_annotations(&self, index: u32, scenario: &str) -> BTreeMap<String, String> {
        self.annotations
            .iter()
            .filter(|s| (s.start..s.end).contains(&index))
            .flat_map(|s| {
                s.values
                    .iter()
                    .map(move |(k, v)| (k.clone(), v.render(self.vars(index, scenario))))
            })
            .collect()
    }

    /// How many resources poll at each effective interval (after the annotation, the clamp
    /// and the fallback), in ascending interval order.
    #[must_use]
    pub fn poll_intervals(&self, settings: &Settings, scenario: &str) -> Vec<(Duration, u32)> {
        if self.annotations.is_empty() {
            return vec![(settings.poll_interval, self.count)];
        }
        let mut by: BTreeMap<Duration, u32> = BTreeMap::new();
        for i in 0..self.count {
            *by.entry(self.poll_interval_of(i, settings, scenario))
                .or_default() += 1;
        }
        by.into_iter().collect()
    }

    /// Resource `index`'s own poll interval: its `crossplane.io/poll-interval` annotation,
    /// clamped to the floor, or the provider's P.
    #[must_use]
    pub fn poll_interval_of(&self, index: u32, settings: &Settings, scenario: &str) -> Duration {
        self.annotations
            .iter()
            .filter(|s| (s.start..s.end).contains(&index))
            .find_map(|s| s.values.get(limiter::crossplane::POLL_INTERVAL_ANNOTATION))
            .map_or(settings.poll_interval, |t| {
                let v = t.render(self.vars(index, scenario));
                settings.effective_poll(Some(&v)).interval
            })
    }
}

/// A phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Name.
    pub name: String,
    /// What it does.
    pub action: Action,
    /// When it is over.
    pub until: Until,
    /// The longest it may take.
    pub timeout: Duration,
    /// The XR groups a create, resync, update or delete phase acts on (indexes into
    /// [`Scenario::composites`]' groups), beside its resource groups.
    pub composites: Vec<usize>,
}

/// What a phase does. Group lists are indexes into [`Scenario::groups`].
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Create resources at a rate (None: all at once).
    Create {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
    },
    /// The steady state.
    Hold {
        /// How long.
        duration: Duration,
    },
    /// Forced re-sync by annotation.
    Resync {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
        /// How long after the first reconcile of a requested resource the phase waits for a
        /// recorded token before it stops with a verdict (None: until its timeout).
        handled_grace: Option<Duration>,
    },
    /// Spec update.
    Update {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
        /// Merged into each spec.
        spec: serde_json::Value,
    },
    /// Every cloud call fails.
    CloudOutage {
        /// How long.
        duration: Duration,
        /// Status.
        status: u16,
    },
    /// The cloud's latency changes.
    CloudLatency {
        /// New latency per class (classes left out keep theirs).
        latency: Classes<Latency>,
        /// How long (None: the rest of the run).
        duration: Option<Duration>,
    },
    /// The per-resource faults of some groups change.
    CloudFault {
        /// Per group acted on: its index and the fault shares it gets instead of those in
        /// force.
        faults: Vec<(usize, Vec<FaultShare>)>,
        /// How long (None: the rest of the run, or until another cloudFault).
        duration: Option<Duration>,
    },
    /// Provider restart.
    Restart,
    /// The provider killed (no graceful shutdown) during another phase's work.
    Kill {
        /// Index of the phase whose work the kills interrupt.
        during: usize,
        /// How many kills.
        count: u32,
        /// The window, from the start of `during`, the kills fall in.
        window: Duration,
    },
    /// Delete resources.
    Delete {
        /// Resources per second.
        rate: Option<f64>,
        /// Groups.
        groups: Vec<usize>,
    },
    /// A Composition edited: a new CompositionRevision, which the XR groups of the phase
    /// (those the Composition composes) move to.
    CompositionUpdate(Box<super::composite::CompositionEdit>),
    /// A built-in function's answers faulted.
    FunctionFault {
        /// The Function.
        function: String,
        /// What changes.
        fault: super::composite::FunctionFault,
        /// How long (None: the rest of the run).
        duration: Option<Duration>,
    },
}

impl Action {
    /// The action's name as written in scenarios.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Action::Create { .. } => "create",
            Action::Hold { .. } => "hold",
            Action::Resync { .. } => "resync",
            Action::Update { .. } => "update",
            Action::CloudOutage { .. } => "cloudOutage",
            Action::CloudLatency { .. } => "cloudLatency",
            Action::CloudFault { .. } => "cloudFault",
            Action::Restart => "restart",
            Action::Kill { .. } => "kill",
            Action::Delete { .. } => "delete",
            Action::CompositionUpdate(_) => "compositionUpdate",
            Action::FunctionFault { .. } => "functionFault",
        }
    }

    /// The groups acted on, for actions that have them.
    #[must_use]
    pub fn groups(&self) -> Option<&[usize]> {
        match self {
            Action::Create { groups, .. }
            | Action::Resync { groups, .. }
            | Action::Update { groups, .. }
            | Action::Delete { groups, .. } => Some(groups),
            _ => None,
        }
    }

    /// The harness's write rate, for actions that have one.
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        match self {
            Action::Create { rate, .. }
            | Action::Resync { rate, .. }
            | Action::Update { rate, .. }
            | Action::Delete { rate, .. } => *rate,
            _ => None,
        }
    }
}

/// An assertion.
#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    /// Name in reports.
    pub name: String,
    /// What is checked.
    pub check: Check,
    /// Index of the phase it is restricted to.
    pub phase: Option<usize>,
    /// Account it is restricted to.
    pub account: Option<String>,
    /// Where it is written.
    pub pos: Pos,
}

/// What an assertion checks.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// A check of Crossplane core's composite layer.
    Core(super::composite::CoreCheck),
    /// Windowed maximum of cloud calls ≤ the hard bound (or `max`).
    CloudCalls {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Windowed maximum of API requests ≤ the API bound (or `max`).
    ApiRequests {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Windowed maximum of cloud calls in a hold ≤ the statistical tolerance (or `max`).
    SteadyRate {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Throttled calls ≤ max.
    Throttles {
        /// Limit.
        max: u64,
    },
    /// A time-to-Ready quantile.
    TimeToReady {
        /// q in (0, 1].
        quantile: f64,
        /// The limit.
        limit: TtrLimit,
    },
    /// Orphans ≤ max.
    Orphans {
        /// Limit.
        max: u64,
    },
    /// Duplicates ≤ max.
    Duplicates {
        /// Limit.
        max: u64,
    },
    /// Efficiency ≥ min.
    DrainEfficiency {
        /// Lowest acceptable efficiency.
        min: f64,
    },
    /// Resources with an incomplete create at a phase's end ≤ max.
    Stuck {
        /// Limit.
        max: u64,
        /// Resources whose create a kill interrupted do not count.
        allow_interrupted: bool,
    },
    /// Ready resources whose cloud object vanished, at a phase's end ≤ max.
    Lost {
        /// Limit.
        max: u64,
    },
    /// Growth of each sampled memory measure from the end of the warm-up to the end ≤ max %.
    MemoryGrowth {
        /// Limit, percent.
        max_percent: f64,
    },
    /// The most calls of one resource in a window ≤ the prediction (or `max`).
    PerResourceCalls {
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Resources looping hot in a window ≤ max.
    HotLoops {
        /// W.
        window: Duration,
        /// Calls above this many times what the interval allows count as hot.
        factor: f64,
        /// Resources allowed to loop hot.
        max: u64,
    },
    /// Calls for a resource before the retry hint (`Retry-After`) of an earlier answer for
    /// it had passed ≤ max.
    RetryAfterHonoured {
        /// Limit.
        max: u64,
    },
    /// The healthy resources' realised poll period within tolerance of the prediction.
    PollPeriod {
        /// Percent.
        tolerance_percent: f64,
    },
    /// Windowed maximum of one operation's (or service's) calls ≤ its bound (or `max`).
    OperationCalls {
        /// `service:Operation`, or a service.
        operation: String,
        /// W.
        window: Duration,
        /// Explicit limit.
        max: Option<f64>,
    },
    /// Mean calls per reconcile per kind and path ≤ the calibration's most, plus `extra`.
    CallsPerReconcile {
        /// Only this kind (as reports name it).
        kind: Option<String>,
        /// Only this path.
        path: Option<String>,
        /// Calls allowed above the calibration.
        extra: f64,
    },
}

/// The limit of a time-to-Ready assertion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TtrLimit {
    /// The prediction plus this many percent.
    Predicted {
        /// Percent.
        tolerance_percent: f64,
    },
    /// A fixed duration.
    Fixed(Duration),
}

impl Scenario {
    /// The CPU time the provider sleeps in each reconcile: `prediction.reconcileCpu` in
    /// virtual time (where work takes no time), zero in real time (where it takes its own).
    #[must_use]
    pub fn simulated_reconcile_cpu(&self) -> Duration {
        match self.time {
            TimeMode::Real => Duration::ZERO,
            TimeMode::Virtual => self.prediction.reconcile_cpu,
        }
    }

    /// Total resources.
    #[must_use]
    pub fn total_resources(&self) -> u64 {
        self.groups.iter().map(|g| u64::from(g.count)).sum()
    }

    /// Where `pos` is, for a reader: `FILE:LINE:COLUMN` or `--set PATH`.
    #[must_use]
    pub fn place(&self, pos: Pos) -> String {
        pos.place(&self.file, &self.sets)
    }

    /// The kills during phase `index`: (kill phase index, count, window).
    #[must_use]
    pub fn kills_during(&self, index: usize) -> Vec<(usize, u32, Duration)> {
        self.phases
            .iter()
            .enumerate()
            .filter_map(|(k, p)| match p.action {
                Action::Kill {
                    during,
                    count,
                    window,
                } if during == index => Some((k, count, window)),
                _ => None,
            })
            .collect()
    }

    /// Kills in the whole scenario.
    #[must_use]
    pub fn total_kills(&self) -> u32 {
        self.phases
            .iter()
            .map(|p| match p.action {
                Action::Kill { count, .. } => count,
                _ => 0,
            })
            .sum()
    }

    /// A phase's index by name.
    #[must_use]
    pub fn phase_index(&self, name: &str) -> Option<usize> {
        self.phases.iter().position(|p| p.name == name)
    }

    /// The fault shares of every group in force during phase `index`: the groups' own, as
    /// the `cloudFault` phases up to and including it replaced them (one with a duration
    /// only for its own phase).
    #[must_use]
    pub fn faults_during(&self, index: usize) -> Vec<Vec<FaultShare>> {
        let mut now: Vec<Vec<FaultShare>> = self.groups.iter().map(|g| g.faults.clone()).collect();
        for (i, phase) in self.phases.iter().enumerate().take(index + 1) {
            if let Action::CloudFault { faults, duration } = &phase.action
                && (duration.is_none() || i == index)
            {
                for (g, shares) in faults {
                    now[*g].clone_from(shares);
                }
            }
        }
        now
    }

    /// The scenario as phase `index` sees it: each group's `faults` are those in force
    /// then ([`Scenario::faults_during`]).
    #[must_use]
    pub fn during(&self, index: usize) -> Scenario {
        let mut s = self.clone();
        for (g, shares) in s.groups.iter_mut().zip(self.faults_during(index)) {
            g.faults = shares;
        }
        s
    }

    /// Whether any phase changes the per-resource faults.
    #[must_use]
    pub fn changes_faults(&self) -> bool {
        self.phases
            .iter()
            .any(|p| matches!(p.action, Action::CloudFault { .. }))
    }
}
