//! A target for tests that read what a run leaves behind: the embedded stack, handing part
//! of itself (its API server, its cloud) to the test when it starts.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use harness::run::target::embedded::LocalCloud;
use harness::run::target::{TargetInfo, TargetSources};
use harness::run::{Embedded, RunError, Target};
use harness::scenario::Scenario;
use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use tokio::time::Instant;

/// What a test keeps of the embedded stack.
pub trait Keep: Sized {
    /// Takes it from the stack as it starts.
    fn keep(stack: &Embedded) -> Self;
}

/// The cloud.
impl Keep for MockCloud {
    fn keep(stack: &Embedded) -> Self {
        stack.cloud().mock().clone()
    }
}

/// The API server and the cloud.
impl Keep for (ApiServer, MockCloud) {
    fn keep(stack: &Embedded) -> Self {
        (stack.apiserver().clone(), stack.cloud().mock().clone())
    }
}

/// Where the run leaves what the test keeps, for the test to read after it.
pub type Kept<K> = Arc<Mutex<Option<K>>>;

/// The embedded stack, keeping `K` of it for the test.
pub struct Keeping<K>(Embedded, PhantomData<K>);

impl<K: Keep> Target for Keeping<K> {
    type Options = Kept<K>;
    fn virtual_time(_: &Self::Options) -> bool {
        Embedded::virtual_time(&())
    }
    type Cloud = LocalCloud;

    async fn start(scenario: &Scenario, kept: Kept<K>) -> Result<Self, RunError> {
        let inner = Embedded::start(scenario, ()).await?;
        *kept.lock().unwrap() = Some(K::keep(&inner));
        Ok(Keeping(inner, PhantomData))
    }
    fn clock(&self) -> harness::run::clock::RunClock {
        self.0.clock()
    }
    fn client(&self) -> kube::Client {
        self.0.client()
    }
    fn cloud(&self) -> &LocalCloud {
        self.0.cloud()
    }
    fn secret_namespace(&self) -> Option<&str> {
        self.0.secret_namespace()
    }
    fn cleans_up(&self) -> bool {
        self.0.cleans_up()
    }
    fn take_sources(&mut self) -> TargetSources {
        self.0.take_sources()
    }
    async fn restart_provider(&mut self, deadline: Instant) -> Result<(), RunError> {
        self.0.restart_provider(deadline).await
    }
    async fn kill_provider(&self, deadline: Instant) -> Result<(), RunError> {
        self.0.kill_provider(deadline).await
    }
    async fn revive_provider(&self) -> Result<(), RunError> {
        self.0.revive_provider().await
    }
    async fn stop_provider(&mut self) {
        self.0.stop_provider().await;
    }
    fn info(&self) -> TargetInfo {
        self.0.info()
    }
    fn provider_starts(&self) -> u32 {
        self.0.provider_starts()
    }
    fn notes(&self) -> Vec<String> {
        self.0.notes()
    }
}
