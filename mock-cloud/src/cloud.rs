//! [`MockCloud`]: the state of one cloud, shared by every clone, and its in-process API.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;

use crate::admin::CallsPage;
use crate::aws::state::AwsState;
use crate::clock::TokioClock;
use crate::config::{Config, ConfigError, Faults, validate_faults};
use crate::faults::{FaultDecision, FaultState};
use crate::journal::{Call, Journal, JournalStats, Record};
use crate::model::{Class, Collection};
use crate::quota::{Layer, QuotaEngine};
use crate::store::{Resource, Store};
use crate::summary::{Aggregates, Summary};

/// A mock cloud: accounts, resources, quotas, faults and the journal of every call.
///
/// Cheap to clone; clones share one state. It is a tower `Service` (see
/// [`MockCloud::handle`]) and can be served on a socket with [`crate::serve()`]. Time is
/// tokio's: under `tokio::time::pause` quotas refill, databases provision and outages
/// open only as the test advances the clock.
#[derive(Clone)]
pub struct MockCloud {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub config: Config,
    pub clock: TokioClock,
    /// The wall-clock time read when `clock` started.
    pub epoch: Timestamp,
    /// Bearer token → account name (shared with the journal's outcomes: no copy a request).
    pub tokens: crate::FastMap<String, Arc<str>>,
    /// Account name → count quotas.
    pub counts: HashMap<String, BTreeMap<Collection, u32>>,
    pub quotas: RwLock<QuotaEngine>,
    pub store: Mutex<Store>,
    pub recorder: Mutex<Recorder>,
    pub faults: Mutex<FaultState>,
    pub faults_active: AtomicBool,
    /// Credentials, S3's buckets and the AWS request counter.
    pub aws: AwsState,
}

/// The journal and the aggregates, updated together under one lock.
pub(crate) struct Recorder {
    pub journal: Journal,
    pub aggregates: Aggregates,
}

impl std::fmt::Debug for MockCloud {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockCloud")
            .field("accounts", &self.inner.config.accounts.len())
            .field("elapsed", &self.elapsed())
            .finish_non_exhaustive()
    }
}

impl MockCloud {
    /// A cloud with `config`, its clock starting now (tokio time); [`MockCloud::epoch`] is
    /// the wall-clock time read at the same moment.
    pub fn new(config: Config) -> Result<MockCloud, ConfigError> {
        config.validate()?;
        let clock = TokioClock::new(Instant::now());
        let epoch = Timestamp::now();
        let tokens = config
            .accounts
            .iter()
            .flat_map(|a| {
                let name: Arc<str> = Arc::from(a.name.as_str());
                a.tokens.iter().map(move |t| (t.clone(), name.clone()))
            })
            .collect();
        let counts = config
            .accounts
            .iter()
            .map(|a| (a.name.clone(), a.quotas.counts.clone()))
            .collect();
        let names = config.accounts.iter().map(|a| a.name.as_str());
        let store = Store::new(names, config.database_create, config.database_delete);
        let inner = Inner {
            quotas: RwLock::new(QuotaEngine::new(&config.accounts, clock)),
            store: Mutex::new(store),
            recorder: Mutex::new(Recorder {
                journal: Journal::new(config.journal_cap.get()),
                aggregates: Aggregates::default(),
            }),
            faults_active: AtomicBool::new(!config.faults.is_empty()),
            faults: Mutex::new(FaultState::new(config.faults.clone())),
            aws: AwsState::new(&config),
            clock,
            epoch,
            tokens,
            counts,
            config,
        };
        tracing::debug!(accounts = inner.config.accounts.len(), "mock cloud created");
        Ok(MockCloud {
            inner: Arc::new(inner),
        })
    }

    /// The config the cloud was built with (faults may have changed since; see
    /// [`MockCloud::faults`]).
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// When the cloud's clock read zero (tokio time): every [`Call::at_us`] counts from
    /// here, so a caller in the same process maps journal times onto its own clock exactly.
    pub fn started_at(&self) -> Instant {
        self.inner.clock.epoch()
    }

    /// Time since the cloud started: the time base of the journal and of outage windows.
    pub fn elapsed(&self) -> Duration {
        self.inner.clock.since_epoch(Instant::now())
    }

    /// The wall-clock time at which the cloud's clock read zero: the time base of
    /// [`Call::at_us`], [`Resource::created_at_us`], the summary's timeline and outage
    /// windows. Read once, when the cloud is built, right after its clock starts; a
    /// [`reset`](MockCloud::reset) keeps it. Served in the summary (`epoch`) and in the
    /// `x-epoch` header of `GET /admin/v1/calls`.
    ///
    /// Under paused tokio time the cloud's clock moves only as the test advances it, so
    /// `epoch + at_us` is then not a wall-clock time.
    pub fn epoch(&self) -> Timestamp {
        self.inner.epoch
    }

    /// Journal entries with `seq >= since`, oldest first.
    pub fn calls_since(&self, since: u64) -> Vec<Call> {
        self.inner.recorder.lock().journal.since(since, usize::MAX)
    }

    /// Up to `limit` journal entries with `seq >= since`, oldest first, with where the next
    /// page starts, the dropped count and the epoch: what one `GET /admin/v1/calls` serves.
    pub fn calls_page(&self, since: u64, limit: usize) -> CallsPage {
        let recorder = self.inner.recorder.lock();
        let calls = recorder.journal.since(since, limit);
        let stats = recorder.journal.stats();
        drop(recorder);
        let next_seq = calls
            .last()
            .map_or(stats.next_seq.max(since), |c| c.seq + 1);
        CallsPage {
            calls,
            next_seq,
            dropped: stats.dropped,
            epoch: self.inner.epoch,
        }
    }

    /// Every journal entry held.
    pub fn calls(&self) -> Vec<Call> {
        self.calls_since(0)
    }

    /// The journal's counters: next `seq`, entries held, cap, dropped, bytes per entry.
    pub fn journal_stats(&self) -> JournalStats {
        self.inner.recorder.lock().journal.stats()
    }

    /// Counts per account/action/status, the per-second timeline and quota violations.
    pub fn summary(&self) -> Summary {
        let recorder = self.inner.recorder.lock();
        let journal = &recorder.journal;
        recorder
            .aggregates
            .summary(self.inner.epoch, journal.stats(), |id| {
                journal.resolve(id).to_owned()
            })
    }

    /// Every live resource (including ones creating or deleting), by account, collection
    /// and name.
    pub fn inventory(&self) -> Vec<Resource> {
        let now = self.elapsed();
        self.inner.store.lock().inventory(now)
    }

    /// How many resources [`MockCloud::inventory`] would list, without copying them.
    pub fn resource_count(&self) -> usize {
        let now = self.elapsed();
        self.inner
            .store
            .lock()
            .counts(now)
            .iter()
            .map(|(_, _, n)| n)
            .sum()
    }

    /// The faults in force.
    pub fn faults(&self) -> Faults {
        self.inner.faults.lock().faults().clone()
    }

    /// Replaces the faults in force; the random draws restart from the new seed.
    pub fn set_faults(&self, faults: Faults) -> Result<(), ConfigError> {
        validate_faults(&faults).map_err(|problem| ConfigError::Invalid { problem })?;
        let active = !faults.is_empty();
        *self.inner.faults.lock() = FaultState::new(faults);
        self.inner.faults_active.store(active, Ordering::Release);
        tracing::info!(active, "faults changed");
        Ok(())
    }

    /// Clears resources (S3's buckets included), idempotency keys, issued temporary
    /// credentials, the journal (its `seq` keeps counting), the aggregates and the quota
    /// buckets (full again). Faults and the clock stay.
    pub fn reset(&self) {
        let inner = &self.inner;
        *inner.quotas.write() = QuotaEngine::new(&inner.config.accounts, inner.clock);
        inner.store.lock().clear();
        inner.aws.reset();
        let mut recorder = inner.recorder.lock();
        recorder.journal.clear();
        recorder.aggregates = Aggregates::default();
        tracing::info!("mock cloud reset");
    }

    pub(crate) fn record(&self, record: &Record<'_>, layer: Option<Layer>) -> u64 {
        let mut recorder = self.inner.recorder.lock();
        let (seq, account) = recorder.journal.push(record);
        recorder.aggregates.add(record, account, layer);
        seq
    }

    pub(crate) fn decide_faults(&self, class: Class, at: Duration) -> FaultDecision {
        if !self.inner.faults_active.load(Ordering::Acquire) {
            return FaultDecision::default();
        }
        let mut faults = self.inner.faults.lock();
        if faults.is_empty() {
            return FaultDecision::default();
        }
        faults.decide(class, at)
    }

    /// The per-resource rules in force and their seed, if there are any.
    pub(crate) fn resource_rules(&self) -> Option<(Arc<[crate::config::ResourceFault]>, u64)> {
        if !self.inner.faults_active.load(Ordering::Acquire) {
            return None;
        }
        let (rules, seed) = self.inner.faults.lock().resource_rules();
        (!rules.is_empty()).then_some((rules, seed))
    }

    pub(crate) fn decide_operation_faults(
        &self,
        op: crate::service::Operation,
        at: Duration,
    ) -> FaultDecision {
        if !self.inner.faults_active.load(Ordering::Acquire) {
            return FaultDecision::default();
        }
        let mut faults = self.inner.faults.lock();
        if faults.is_empty() {
            return FaultDecision::default();
        }
        faults.decide_operation(op, at)
    }
}
