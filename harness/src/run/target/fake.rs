//! A fake target for unit tests of the driver on paused time: an in-process mock-apiserver
//! with the provider's CRDs and no provider, and a cloud that only records what it is
//! told.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mock_apiserver::ApiServer;
use mock_cloud::Faults;
use tokio::time::Instant;

use super::{CallsPage, CloudControl, CloudError, Target, TargetInfo, TargetSources};
use crate::run::clock::{Epoch, RunClock};
use crate::run::error::RunError;
use crate::run::own::ProviderAgent;
use crate::run::source::api::ApiRequests;
use crate::run::source::api_journal::InProcess;
use crate::scenario::Scenario;

/// A cloud that records the faults it is given, on its own clock (the run's).
pub struct FakeCloud {
    clock: RunClock,
    faults: Mutex<Faults>,
    /// Every `set_faults`, with the run time it came at.
    pub changes: Mutex<Vec<(Duration, Faults)>>,
    /// Calls to hand out from `calls_since`.
    pub calls: Arc<Mutex<Vec<mock_cloud::Call>>>,
}

impl FakeCloud {
    /// A cloud with no faults and no calls, on `clock`.
    pub fn new(clock: RunClock) -> FakeCloud {
        FakeCloud {
            clock,
            faults: Mutex::new(Faults::none()),
            changes: Mutex::default(),
            calls: Arc::default(),
        }
    }
}

impl CloudControl for FakeCloud {
    fn epoch(&self) -> Epoch {
        Epoch::RUN
    }

    fn elapsed(&self) -> Duration {
        self.clock.now().as_duration()
    }

    fn faults(&self) -> Faults {
        self.faults.lock().unwrap().clone()
    }

    async fn set_faults(&self, faults: Faults) -> Result<(), CloudError> {
        self.changes
            .lock()
            .unwrap()
            .push((self.elapsed(), faults.clone()));
        *self.faults.lock().unwrap() = faults;
        Ok(())
    }

    async fn next_seq(&self) -> Result<u64, CloudError> {
        Ok(self.calls.lock().unwrap().len() as u64)
    }

    async fn calls_since(&self, since: u64) -> Result<CallsPage, CloudError> {
        let calls = self.calls.lock().unwrap();
        Ok(CallsPage {
            calls: calls.iter().filter(|c| c.seq >= since).cloned().collect(),
            dropped: 0,
        })
    }

    async fn inventory(&self) -> Result<Vec<mock_cloud::Resource>, CloudError> {
        Ok(Vec::new())
    }
}

/// The fake target.
pub struct FakeTarget {
    clock: RunClock,
    /// The API server (tests write conditions into it to play the provider).
    pub apiserver: ApiServer,
    client: kube::Client,
    cloud: FakeCloud,
    /// The instants `restart_provider` was called at, and the deadlines it got.
    pub restarts: Vec<(Instant, Instant)>,
    /// The instants `kill_provider` was called at.
    pub kills: Mutex<Vec<Instant>>,
}

impl Target for FakeTarget {
    type Options = ();
    fn virtual_time(_: &Self::Options) -> bool {
        true
    }
    type Cloud = FakeCloud;

    async fn start(_: &Scenario, (): ()) -> Result<Self, RunError> {
        let clock = RunClock::start();
        let apiserver = ApiServer::new(mock_apiserver::Config::default());
        let crds = provider::crd::crds_yaml().map_err(RunError::CrdsRender)?;
        apiserver.load_crd_yaml(&crds).map_err(RunError::CrdsLoad)?;
        let client = kube::Client::new(apiserver.service(), "default");
        Ok(FakeTarget {
            clock,
            apiserver,
            client,
            cloud: FakeCloud::new(clock),
            restarts: Vec::new(),
            kills: Mutex::default(),
        })
    }

    fn clock(&self) -> RunClock {
        self.clock
    }

    fn client(&self) -> kube::Client {
        self.client.clone()
    }

    fn cloud(&self) -> &FakeCloud {
        &self.cloud
    }

    fn take_sources(&mut self) -> TargetSources {
        TargetSources {
            api: ApiRequests::InProcess(InProcess::start(
                self.apiserver.clone(),
                Epoch::RUN,
                ProviderAgent::NotHarness,
            )),
            provider: None,
            memory: crate::run::source::memory::MemoryProbe::None,
        }
    }

    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        self.restarts.push((Instant::now(), deadline));
        Ok(())
    }

    async fn kill_provider(&self, _deadline: Instant) -> Result<(), RunError> {
        self.kills
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Instant::now());
        Ok(())
    }

    async fn revive_provider(&self) -> Result<(), RunError> {
        Ok(())
    }

    async fn stop_provider(&mut self) {}

    fn info(&self) -> TargetInfo {
        TargetInfo::Embedded
    }

    fn provider_starts(&self) -> u32 {
        let kills = self.kills.lock().unwrap_or_else(|e| e.into_inner()).len();
        1 + (self.restarts.len() + kills) as u32
    }

    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A generic cloud Get of the bucket `name`, journal entry `seq`: what a provider's Observe
/// leaves in mock-cloud's journal.
pub fn cloud_get(seq: u64, name: &str) -> mock_cloud::Call {
    mock_cloud::Call {
        seq,
        at_us: 0,
        account: "default".to_owned(),
        action: Some(mock_cloud::Action::Get),
        collection: Some(mock_cloud::Collection::Buckets),
        service: "generic".to_owned(),
        operation: "get".to_owned(),
        name: name.to_owned(),
        status: 200,
        latency_us: 0,
        throttled: false,
        shadow_throttled: false,
        quota_exceeded: false,
        fault: false,
        retry_after_ms: 0,
    }
}
