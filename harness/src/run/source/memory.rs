//! Memory of the run's components, sampled in the background on the run's clock.
//!
//! Embedded, the provider, the mocks and the harness share this process: its memory is
//! its live heap outside the journals (the bytes the global allocator holds for the
//! program, where the binary counts them (see [`count_live_heap`]), less the bytes the two
//! journals report holding) and its resident set (`VmRSS` of
//! `/proc/self/status`), beside cheap per-component measures (the cloud's objects and
//! journal bytes, the API server's managed objects and journal entries). The resident set
//! also holds the pages the allocator keeps after a free, which depend on the timing of
//! frees across threads: in a virtual week that takes a second of wall time it moved by
//! +2.6 % to +25 % between runs of one seed, so the live heap is the figure to judge when
//! there is one. In a cluster, the provider's
//! `process_resident_memory_bytes` at `--provider-metrics-url` (the mocks export no memory
//! metric).

use std::sync::OnceLock;
use std::time::Duration;

use mock_apiserver::ApiServer;
use mock_cloud::MockCloud;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::super::clock::RunClock;
use super::super::prometheus;
use super::super::remote::Remote;
use crate::measure::{HEAP_LIVE, MemorySample, PROCESS_RSS};

/// The first sampling period; it doubles each time the samples reach [`MAX_SAMPLES`], so
/// a week-long run keeps between half and all of that many.
const FIRST_PERIOD: Duration = Duration::from_secs(1);

/// Samples kept at most.
const MAX_SAMPLES: usize = 1024;

/// What can be sampled, and how.
pub enum MemoryProbe {
    /// This process, with the in-process mocks.
    InProcess {
        /// The cloud.
        cloud: MockCloud,
        /// The API server.
        apiserver: ApiServer,
        /// The managed kinds (group, version, plural).
        kinds: Vec<(String, String, String)>,
    },
    /// A provider's `/metrics`.
    Scraped {
        /// Where.
        remote: Box<Remote>,
        /// Its path.
        path: String,
    },
    /// Nothing to sample.
    None,
}

/// How the program counts its live heap, when it does.
static LIVE_HEAP: OnceLock<fn() -> usize> = OnceLock::new();

/// Tells the sampler how to read this process's live heap in bytes: the `harness` binary
/// passes its counting global allocator's figure. Only the first call counts.
pub fn count_live_heap(bytes: fn() -> usize) {
    let _ = LIVE_HEAP.set(bytes);
}

/// This process's live heap in bytes, when the program counts it.
#[must_use]
pub fn live_heap_bytes() -> Option<f64> {
    LIVE_HEAP.get().map(|bytes| bytes() as f64)
}

/// The resident set of this process in bytes (`VmRSS`), where `/proc` has it.
#[must_use]
pub fn resident_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

impl MemoryProbe {
    async fn sample(&self) -> Vec<(String, f64)> {
        match self {
            MemoryProbe::InProcess {
                cloud,
                apiserver,
                kinds,
            } => {
                let cloud_journal = cloud.journal_stats().memory_bytes as f64;
                let api_journal = apiserver.journal().heap_bytes() as f64;
                let mut v = Vec::new();
                if let Some(heap) = live_heap_bytes() {
                    // The journals keep every request by design; judged apart.
                    v.push((HEAP_LIVE.to_owned(), heap - cloud_journal - api_journal));
                }
                if let Some(rss) = resident_bytes() {
                    v.push((PROCESS_RSS.to_owned(), rss));
                }
                v.push(("cloud_objects".to_owned(), cloud.resource_count() as f64));
                v.push(("cloud_journal_bytes".to_owned(), cloud_journal));
                let managed: usize = kinds
                    .iter()
                    .map(|(g, ver, p)| apiserver.object_count(g, ver, p))
                    .sum();
                v.push(("api_managed_objects".to_owned(), managed as f64));
                v.push(("api_journal_bytes".to_owned(), api_journal));
                let held = apiserver
                    .journal()
                    .last_seq()
                    .min(apiserver.config().journal_capacity as u64);
                v.push(("api_journal_entries".to_owned(), held as f64));
                v
            }
            MemoryProbe::Scraped { remote, path } => match remote.get_text(path).await {
                Ok(text) => prometheus::samples(&text, "process_resident_memory_bytes")
                    .next()
                    .map(|(_, b)| vec![("provider_rss_bytes".to_owned(), b)])
                    .unwrap_or_default(),
                Err(e) => {
                    tracing::debug!(error = %e, "cannot scrape the provider's memory");
                    Vec::new()
                }
            },
            MemoryProbe::None => Vec::new(),
        }
    }
}

/// The running sampler.
pub struct MemorySampler {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Vec<MemorySample>>,
}

impl MemorySampler {
    /// Starts sampling `probe` now and every period after.
    #[must_use]
    pub fn start(probe: MemoryProbe, clock: RunClock) -> MemorySampler {
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut samples: Vec<MemorySample> = Vec::new();
            let mut period = FIRST_PERIOD;
            loop {
                let values = probe.sample().await;
                if !values.is_empty() {
                    samples.push(MemorySample {
                        at_us: clock.now().0,
                        values,
                    });
                }
                if samples.len() >= MAX_SAMPLES {
                    // Keep every other sample (the first included) and sample half as often.
                    samples = samples.into_iter().step_by(2).collect();
                    period *= 2;
                }
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(period) => {}
                }
            }
            let values = probe.sample().await;
            if !values.is_empty() {
                samples.push(MemorySample {
                    at_us: clock.now().0,
                    values,
                });
            }
            samples
        });
        MemorySampler { stop, task }
    }

    /// Takes a last sample and returns them all.
    pub async fn finish(self) -> Vec<MemorySample> {
        let _ = self.stop.send(());
        self.task.await.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_resident_set_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(resident_bytes().is_some_and(|b| b > 1_000_000.0));
        }
    }
}
