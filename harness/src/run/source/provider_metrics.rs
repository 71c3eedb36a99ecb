//! The provider's own counters: read from its registry in this process, or scraped over
//! HTTP every [`SCRAPE_INTERVAL`] and summed so that a counter reset (a new pod) loses only
//! what the old pod counted after its last scrape.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::report::{ProviderReport, SCRAPE_INTERVAL};
use crate::result::ProviderMetrics;
use crate::run::error::{FlagDiff, RunError, SettingsMismatch};
use crate::run::prometheus::{counter, counter_increase, label_value, samples};
use crate::run::remote::Remote;

const RESERVATIONS: &str = "limiter_reservations_total";
const EARLY_RUNS: &str = "limiter_early_runs_total";
const CLOUD_CALLS: &str = "provider_cloud_requests_total";
const RECONCILES: &str = "provider_reconcile_cpu_seconds_count";
const RECONCILE_CPU: &str = "provider_reconcile_cpu_seconds_sum";
/// Time spent reconciling, per controller (`name`), as client-go's workqueue metrics give it.
const WORK_DURATION: &str = "workqueue_work_duration_seconds_sum";
const COUNTERS: [&str; 5] = [
    RESERVATIONS,
    EARLY_RUNS,
    CLOUD_CALLS,
    RECONCILES,
    RECONCILE_CPU,
];

/// A counter of `text` as a whole number: the CPU time in µs, the others as they are.
fn read(text: &str, name: &str) -> u64 {
    if name == RECONCILE_CPU {
        (samples(text, name).map(|(_, v)| v).sum::<f64>() * 1e6) as u64
    } else {
        counter(text, name)
    }
}

fn totals(get: impl Fn(&str) -> u64, busy_s: BTreeMap<String, f64>) -> ProviderMetrics {
    ProviderMetrics {
        reservations: get(RESERVATIONS),
        early_runs: get(EARLY_RUNS),
        cloud_calls: get(CLOUD_CALLS),
        reconciles: get(RECONCILES),
        reconcile_cpu_us: get(RECONCILE_CPU),
        busy_s,
    }
}

/// Each controller's time spent reconciling in `text`, seconds.
fn busy(text: &str) -> BTreeMap<String, f64> {
    samples(text, WORK_DURATION)
        .filter_map(|(labels, v)| Some((label_value(labels, "name")?.to_owned(), v)))
        .collect()
}

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

/// Adds what each controller's time spent reconciling grew by since `last` to `total`; a
/// sum that went down belongs to a new pod, and counts from zero.
fn add_busy(
    last: &mut BTreeMap<String, f64>,
    total: &mut BTreeMap<String, f64>,
    scraped: BTreeMap<String, f64>,
) {
    for (controller, now) in scraped {
        let before = last.get(&controller).copied().unwrap_or(0.0);
        let grew = if now >= before { now - before } else { now };
        *total.entry(controller.clone()).or_default() += grew;
        last.insert(controller, now);
    }
}

#[derive(Default)]
struct TallyState {
    last: BTreeMap<&'static str, u64>,
    total: BTreeMap<&'static str, u64>,
    busy_last: BTreeMap<String, f64>,
    busy_total: BTreeMap<String, f64>,
    failures: u64,
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
    /// `settings`. Returns whether it could check them (it reports them in
    /// `provider_settings`).
    ///
    /// # Errors
    /// The URL is not usable, the provider's metrics cannot be read, or the provider runs
    /// with other settings.
    pub async fn connect(
        url: &str,
        settings: &limiter::crossplane::Settings,
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
        let checked = check_settings(&text, settings)?;
        let mut s = tally.state.lock().unwrap_or_else(|e| e.into_inner());
        for c in COUNTERS {
            s.last.insert(c, read(&text, c));
        }
        s.busy_last = busy(&text);
        drop(s);
        Ok((tally, checked))
    }

    /// Scrapes once more and adds what grew.
    pub async fn scrape(&self) {
        let text = self.remote.get_text(&self.path).await;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Ok(text) = text else {
            s.failures += 1;
            return;
        };
        for c in COUNTERS {
            let now = read(&text, c);
            let before = s.last.get(c).copied().unwrap_or(0);
            let grew = counter_increase(before, now);
            *s.total.entry(c).or_default() += grew;
            s.last.insert(c, now);
        }
        let TallyState {
            busy_last,
            busy_total,
            ..
        } = &mut *s;
        add_busy(busy_last, busy_total, busy(&text));
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
            metrics: Some(totals(
                |c| s.total.get(c).copied().unwrap_or(0),
                s.busy_total.clone(),
            )),
            notes,
        }
    }
}

/// Where the provider's counters are read.
pub enum ProviderMetricsSource {
    /// The in-process provider's registry (it lives across provider restarts).
    InProcess(Arc<provider::metrics::ProviderMetrics>),
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
                metrics: metrics
                    .encode()
                    .ok()
                    .map(|text| totals(|c| read(&text, c), busy(&text))),
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

    #[test]
    fn time_spent_reconciling_is_read_per_controller_and_summed_across_pods() {
        let text = "# TYPE workqueue_work_duration_seconds_sum gauge\n\
                    workqueue_work_duration_seconds_sum{name=\"buckets\"} 2.5\n\
                    workqueue_work_duration_seconds_sum{name=\"records\"} 1\n\
                    workqueue_work_duration_seconds_count{name=\"buckets\"} 7\n";
        let scraped = busy(text);
        assert_eq!(
            scraped
                .iter()
                .map(|(k, v)| (k.as_str(), *v))
                .collect::<Vec<_>>(),
            [("buckets", 2.5), ("records", 1.0)]
        );
        let (mut last, mut total) = (scraped, BTreeMap::new());
        add_busy(&mut last, &mut total, busy(&text.replace("2.5", "4")));
        // A new pod: its sum starts again from zero.
        add_busy(&mut last, &mut total, busy(&text.replace("2.5", "0.5")));
        assert_eq!(total["buckets"], 1.5 + 0.5);
        assert_eq!(total["records"], 0.0);
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
