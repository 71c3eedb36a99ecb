//! The provider's own counters: read from its registry in this process, or scraped over
//! HTTP every [`SCRAPE_INTERVAL`] and summed so that a counter reset (a new pod) loses only
//! what the old pod counted after its last scrape.

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::provider_readings::{Readings, Sum, parse, sum_of};
use super::report::{ProviderReport, SCRAPE_INTERVAL};
use crate::run::error::{FlagDiff, RunError, SettingsMismatch};
use crate::run::prometheus::{label_value, samples};
use crate::run::remote::Remote;

/// The provider's flags for `settings`, as (flag, value) pairs; the same names label the
/// provider's `provider_settings` metric (with `_` for `-`).
#[must_use]
pub fn provider_flags(settings: &limiter::crossplane::Settings) -> Vec<(&'static str, String)> {
    crate::scenario::flags::write(crate::scenario::flags::Dialect::Loadtest, settings)
}

/// Checks the provider's `provider_settings` metric against the scenario's settings.
/// `Ok(false)` when the provider does not report its settings.
///
/// # Errors
/// Every flag that differs.
pub fn check_settings(
    metrics: &str,
    settings: &limiter::crossplane::Settings,
) -> Result<bool, SettingsMismatch> {
    let Some((labels, _)) = samples(metrics, "provider_settings").next() else {
        return Ok(false);
    };
    let differ: Vec<FlagDiff> = provider_flags(settings)
        .into_iter()
        .filter_map(|(flag, want)| {
            let have = label_value(labels, &flag.replace('-', "_"))?;
            (have != want).then(|| FlagDiff {
                flag,
                deployed: have.to_owned(),
                scenario: want,
            })
        })
        .collect();
    if differ.is_empty() {
        Ok(true)
    } else {
        Err(SettingsMismatch { differ })
    }
}

/// What a series adds to a run's sum between two reads: a counter what it grew by (a fall
/// belongs to a new process, which counts from zero), a gauge nothing (its largest value is
/// kept instead).
fn growth(before: f64, now: f64) -> f64 {
    if now >= before { now - before } else { now }
}

/// Adds a read to the run's sums: each counter's growth since `last`, each gauge's largest
/// value; `last` becomes the read.
fn add(last: &mut Readings, total: &mut Readings, now: Readings) {
    for (key, &v) in &now.values {
        let sum = total.values.entry(key.clone()).or_default();
        match sum_of(key.0) {
            Sum::Growth => *sum += growth(last.values.get(key).copied().unwrap_or(0.0), v),
            Sum::Max => *sum = sum.max(v),
        }
    }
    total.exported.extend(now.exported.iter().copied());
    *last = now;
}

#[derive(Default)]
struct TallyState {
    last: Readings,
    total: Readings,
    failures: u64,
    /// The provider is gone for good: no more scrapes.
    closed: bool,
}

/// The provider's counters, summed over scrapes.
#[derive(Clone)]
pub struct Tally {
    remote: Remote,
    path: String,
    state: Arc<Mutex<TallyState>>,
}

impl Tally {
    /// Scrapes `url` once to take the baseline, and checks the provider runs with
    /// `settings` when given. Returns whether it checked them (it reports them in
    /// `provider_settings`).
    ///
    /// # Errors
    /// The URL is not usable, the provider's metrics cannot be read, or the provider runs
    /// with other settings.
    pub async fn connect(
        url: &str,
        settings: Option<&limiter::crossplane::Settings>,
    ) -> Result<(Tally, bool), RunError> {
        let (remote, path) = Remote::for_url(url).map_err(RunError::ProviderMetrics)?;
        let tally = Tally {
            remote,
            path,
            state: Arc::default(),
        };
        let text = tally
            .remote
            .get_text(&tally.path)
            .await
            .map_err(RunError::ProviderMetrics)?;
        let checked = match settings {
            Some(settings) => check_settings(&text, settings)?,
            None => false,
        };
        let mut s = tally.state.lock().unwrap_or_else(|e| e.into_inner());
        let baseline = parse(&text);
        // Counters count from their growth after the baseline, gauges from the next read.
        s.total.exported.clone_from(&baseline.exported);
        s.last = baseline;
        drop(s);
        Ok((tally, checked))
    }

    /// Scrapes once more and adds what grew.
    pub async fn scrape(&self) {
        if self.state.lock().unwrap_or_else(|e| e.into_inner()).closed {
            return;
        }
        let text = self.remote.get_text(&self.path).await;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(text) = text else {
            s.failures += 1;
            return;
        };
        let TallyState { last, total, .. } = &mut *s;
        add(last, total, parse(&text));
    }

    /// Scrapes a last time, before the provider stops for good (a process the run owns);
    /// later scrapes do nothing.
    pub async fn last_scrape(&self) {
        self.scrape().await;
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
    }

    fn report(&self) -> ProviderReport {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let notes = if s.failures > 0 {
            vec![format!(
                "{} scrapes of the provider's metrics failed",
                s.failures
            )]
        } else {
            Vec::new()
        };
        ProviderReport {
            metrics: Some(s.total.metrics()),
            notes,
        }
    }
}

/// Whether the in-process provider's registry starts `name` from zero with each start of
/// the provider: its runtime metrics (controllers, work queues, limiter) do; the others
/// live across restarts.
fn restarts_from_zero(name: &str) -> bool {
    ["controller_runtime_", "workqueue_", "limiter_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The in-process provider's registry, read at the end of the run. What a provider counted
/// in metrics that start from zero with each start is carried when the next one starts
/// (its counters add, its gauges keep their largest value).
#[derive(Clone)]
pub struct InProcessMetrics {
    metrics: Arc<provider::metrics::ProviderMetrics>,
    carried: Arc<Mutex<Readings>>,
}

impl InProcessMetrics {
    /// Reads `metrics`, the registry every start of the provider counts into.
    #[must_use]
    pub fn new(metrics: Arc<provider::metrics::ProviderMetrics>) -> Self {
        InProcessMetrics {
            metrics,
            carried: Arc::default(),
        }
    }

    fn read(&self) -> Readings {
        self.metrics
            .encode()
            .map(|text| parse(&text))
            .unwrap_or_default()
    }

    /// Before a provider starts again: carries what the last one counted.
    pub fn carry(&self) {
        let now = self.read();
        let mut carried = self.carried.lock().unwrap_or_else(|e| e.into_inner());
        for (key, v) in now.values {
            if restarts_from_zero(key.0) {
                let c = carried.values.entry(key.clone()).or_default();
                match sum_of(key.0) {
                    Sum::Growth => *c += v,
                    Sum::Max => *c = c.max(v),
                }
            }
        }
        carried.exported.extend(now.exported);
    }

    /// The metrics over the run: the registry now plus what was carried.
    #[must_use]
    pub fn metrics(&self) -> crate::result::ProviderMetrics {
        let mut total = self.read();
        let carried = self.carried.lock().unwrap_or_else(|e| e.into_inner());
        for (key, &v) in &carried.values {
            let t = total.values.entry(key.clone()).or_default();
            match sum_of(key.0) {
                Sum::Growth => *t += v,
                Sum::Max => *t = t.max(v),
            }
        }
        total.exported.extend(carried.exported.iter().copied());
        total.metrics()
    }
}

/// Where the provider's counters are read.
pub enum ProviderMetricsSource {
    /// The in-process provider's registry.
    InProcess(InProcessMetrics),
    /// A provider's `/metrics`, scraped in the background.
    Scraped {
        /// The running sum.
        tally: Box<Tally>,
        /// The background scraper.
        task: JoinHandle<()>,
    },
}

impl ProviderMetricsSource {
    /// Scrapes `tally` every [`SCRAPE_INTERVAL`] until finished.
    #[must_use]
    pub fn scraped(tally: Tally) -> ProviderMetricsSource {
        let background = tally.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(SCRAPE_INTERVAL).await;
                background.scrape().await;
            }
        });
        ProviderMetricsSource::Scraped {
            tally: Box::new(tally),
            task,
        }
    }

    /// The counters since the start of the run.
    pub async fn finish(self) -> ProviderReport {
        match self {
            ProviderMetricsSource::InProcess(metrics) => ProviderReport {
                metrics: Some(metrics.metrics()),
                notes: Vec::new(),
            },
            ProviderMetricsSource::Scraped { tally, task } => {
                task.abort();
                tally.scrape().await;
                tally.report()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sums(texts: &[&str]) -> crate::result::ProviderMetrics {
        let (mut last, mut total) = (parse(texts[0]), Readings::default());
        total.exported.clone_from(&last.exported);
        for t in &texts[1..] {
            add(&mut last, &mut total, parse(t));
        }
        total.metrics()
    }

    #[test]
    fn time_spent_reconciling_is_read_per_controller_and_summed_across_pods() {
        let text = "# TYPE workqueue_work_duration_seconds_sum gauge\n\
                    workqueue_work_duration_seconds_sum{name=\"buckets\"} 2.5\n\
                    workqueue_work_duration_seconds_sum{name=\"records\"} 1\n\
                    workqueue_work_duration_seconds_count{name=\"buckets\"} 7\n";
        // A new pod: its sum starts again from zero.
        let m = sums(&[text, &text.replace("2.5", "4"), &text.replace("2.5", "0.5")]);
        assert_eq!(m.busy_s["buckets"], 1.5 + 0.5);
        assert_eq!(m.busy_s["records"], 0.0);
    }

    #[test]
    fn counters_are_summed_per_label_set_across_a_restart_and_a_depth_keeps_its_largest_read() {
        let read = |success: u32, error: u32, depth: u32| {
            format!(
                "controller_runtime_reconcile_total{{controller=\"c\",result=\"success\"}} {success}\n\
                 controller_runtime_reconcile_total{{controller=\"c\",result=\"error\"}} {error}\n\
                 workqueue_depth{{name=\"c\",controller=\"c\"}} {depth}\n"
            )
        };
        let m = sums(&[
            &read(5, 1, 9),
            &read(8, 1, 4),
            &read(2, 0, 1),
            &read(3, 2, 0),
        ]);
        let c = &m.controllers[0];
        assert_eq!(
            c.reconciles["success"],
            3 + 2 + 1,
            "the restart counts from zero"
        );
        assert_eq!(
            c.reconciles["error"], 2,
            "1 and 1 before the restart, 0 then 2 after"
        );
        assert_eq!(
            c.queue_depth_max,
            Some(4.0),
            "the baseline's 9 was before the run"
        );
        assert_eq!(m.cloud_calls, None);
    }

    #[test]
    fn the_providers_settings_are_checked_flag_by_flag() {
        let settings = limiter::crossplane::Settings::default()
            .poll_interval(std::time::Duration::from_secs(10));
        let line = |poll: &str| {
            format!(
                "# TYPE provider_settings gauge\nprovider_settings{{max_reconcile_rate=\"10\",rate_limit_model=\"crossplane\",poll_interval=\"{poll}\",poll_jitter_percent=\"10\",min_poll_interval=\"1s\"}} 1\n"
            )
        };
        assert_eq!(check_settings(&line("10s"), &settings), Ok(true));
        let e = check_settings(&line("1m0s"), &settings)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "the deployed provider runs with --poll-interval=1m0s (the scenario says 10s)"
            ),
            "{e}"
        );
        assert_eq!(check_settings("other 1\n", &settings), Ok(false));
    }
}
