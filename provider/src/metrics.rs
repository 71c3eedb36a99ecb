//! Prometheus metrics: reconciles by kind and result, work-queue depth, latency, work
//! duration and retries per controller, cloud requests by action and code, Kubernetes
//! requests, events, and the limiter's `limiter_reservations_total` and
//! `limiter_early_runs_total`.
//!
//! # The names every controller-runtime provider exports
//! A harness reads any provider through the names controller-runtime and client-go give
//! their metrics, with their label names and values; this provider exports them too:
//! - `controller_runtime_reconcile_total{controller, result}`, `result` one of `success`,
//!   `error`, `requeue`, `requeue_after` (a terminal error counts as `error`, as
//!   controller-runtime counts it), every label set present from the controller's start;
//! - `controller_runtime_reconcile_errors_total{controller}` and
//!   `controller_runtime_terminal_reconcile_errors_total{controller}`;
//! - `controller_runtime_active_workers{controller}`;
//! - `workqueue_depth`, `workqueue_adds_total`, `workqueue_retries_total`,
//!   `workqueue_work_duration_seconds_{sum,count}` and the others, by `name` and
//!   `controller` (both the controller's name, as controller-runtime's provider sets them);
//! - `rest_client_requests_total{code, method, host}` (see [`crate::kube_client`]).
//!
//! The work queue's durations are a sum, a count and a maximum rather than histograms.

use std::sync::Arc;

use limiter::controller::{Controller, Request};
use limiter::crossplane::MiddlewareStats;
use limiter::workqueue::QueueMetrics;
use parking_lot::Mutex;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::cloud::CloudRequests;
use crate::events::EventCounters;
use crate::kube_client::KubeRequests;

/// Labels of `provider_reconciles_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileLabels {
    /// `Bucket`, `Database` or `Record`.
    pub kind: String,
    /// `success`, `requeue`, `requeue_after` or `error`.
    pub result: String,
}

/// Reconciles that reached the managed reconciler, by kind and result (global-limiter
/// throttles are not here: see `controller_runtime_reconcile_total`).
#[derive(Clone, Debug, Default)]
pub struct Reconciles(Family<ReconcileLabels, Counter>);

impl Reconciles {
    /// Counts one.
    pub fn inc(&self, kind: &str, result: &str) {
        self.0
            .get_or_create(&ReconcileLabels {
                kind: kind.to_owned(),
                result: result.to_owned(),
            })
            .inc();
    }

    /// The count for a kind and result.
    #[must_use]
    pub fn get(&self, kind: &str, result: &str) -> u64 {
        self.0
            .get_or_create(&ReconcileLabels {
                kind: kind.to_owned(),
                result: result.to_owned(),
            })
            .get()
    }

    /// All reconciles of a kind.
    #[must_use]
    pub fn total(&self, kind: &str) -> u64 {
        ["success", "requeue", "requeue_after", "error"]
            .iter()
            .map(|r| self.get(kind, r))
            .sum()
    }
}

/// The running controllers of a provider.
pub type Controllers = Arc<Mutex<Vec<Controller<Request>>>>;

/// What the collector reads at each scrape; replaced when the provider (re)starts.
#[derive(Default)]
pub(crate) struct RuntimeState {
    /// Each controller's name and counters, exported after it stops too (until the next
    /// start replaces them), as controller-runtime's counters outlive its controllers.
    pub(crate) controllers: Vec<(String, Arc<limiter::controller::ControllerStats>)>,
    pub(crate) queues: Vec<(String, Arc<QueueMetrics<Request>>)>,
    pub(crate) middleware: Option<Arc<MiddlewareStats>>,
    pub(crate) events: Option<Arc<EventCounters>>,
    pub(crate) settings: Option<limiter::crossplane::Settings>,
}

/// Labels of `provider_settings_info`: the rate-limit settings the provider runs with, as
/// its flags spell them, so that a harness can check them against its scenario.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SettingsLabels {
    max_reconcile_rate: String,
    rate_limit_model: String,
    poll_interval: String,
    poll_jitter_percent: String,
    poll_jitter_sizing: String,
    min_poll_interval: String,
    scoped_buckets: String,
    backoff_base: String,
    backoff_max: String,
    error_requeue: String,
    observe_only_absent: String,
    event_client: String,
    reconcile_requests: String,
}

impl SettingsLabels {
    fn of(s: &limiter::crossplane::Settings) -> Self {
        let go = |d| limiter::go::GoDuration::from_std(d).to_string();
        SettingsLabels {
            max_reconcile_rate: s.max_reconcile_rate.to_string(),
            rate_limit_model: s.model.to_string(),
            poll_interval: go(s.poll_interval),
            poll_jitter_percent: s.poll_jitter_percent.to_string(),
            poll_jitter_sizing: s.poll_jitter_sizing.to_string(),
            min_poll_interval: go(s.min_poll_interval),
            scoped_buckets: s.scoped_buckets.to_string(),
            backoff_base: go(s.failure_backoff().base),
            backoff_max: go(s.failure_backoff().max),
            error_requeue: s.error_requeue.to_string(),
            observe_only_absent: s.observe_only_absent.to_string(),
            event_client: s.event_client.to_string(),
            reconcile_requests: s.reconcile_requests.to_string(),
        }
    }
}

#[derive(Default)]
struct RuntimeCollector {
    state: Arc<Mutex<RuntimeState>>,
}

impl std::fmt::Debug for RuntimeCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuntimeCollector")
    }
}

/// Every metric of a provider. Keep one across restarts of an in-process provider to keep
/// its counters; the runtime ones (queues, controllers, limiter) restart from zero with each
/// start, and a stopped provider's stay readable until the next start replaces them.
pub struct ProviderMetrics {
    registry: Registry,
    reconciles: Reconciles,
    reconcile_cpu: Histogram,
    cloud_requests: CloudRequests,
    kube_requests: KubeRequests,
    state: Arc<Mutex<RuntimeState>>,
}

impl std::fmt::Debug for ProviderMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderMetrics").finish_non_exhaustive()
    }
}

impl Default for ProviderMetrics {
    fn default() -> Self {
        ProviderMetrics::new()
    }
}

impl ProviderMetrics {
    /// A registry with every metric, all zero.
    #[must_use]
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let reconciles = Reconciles::default();
        let cloud_requests = CloudRequests::default();
        let kube_requests = KubeRequests::default();
        // 50 µs to 0.8 s.
        let reconcile_cpu = Histogram::new(exponential_buckets(0.000_05, 2.0, 15));
        registry.register(
            "provider_reconcile_cpu_seconds",
            "CPU time of a reconcile that reached the managed reconciler: wall time spent in its polls, waits not counted (in process, the API server's and cloud's handling of its requests is in it)",
            reconcile_cpu.clone(),
        );
        registry.register(
            "provider_reconciles",
            "Reconciles that reached the managed reconciler, by kind and result",
            reconciles.0.clone(),
        );
        registry.register(
            "provider_cloud_requests",
            "Cloud API requests by action (observe, create, update, delete) and HTTP code",
            cloud_requests.clone(),
        );
        registry.register(
            "provider_kube_requests",
            "Kubernetes API requests by verb and HTTP code (one per logical request)",
            kube_requests.by_verb().clone(),
        );
        registry.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host (one per logical request)",
            kube_requests.rest().clone(),
        );
        let collector = RuntimeCollector::default();
        let state = Arc::clone(&collector.state);
        registry.register_collector(Box::new(collector));
        ProviderMetrics {
            registry,
            reconciles,
            reconcile_cpu,
            cloud_requests,
            kube_requests,
            state,
        }
    }

    /// Reconciles by kind and result.
    #[must_use]
    pub fn reconciles(&self) -> &Reconciles {
        &self.reconciles
    }

    /// The CPU time of reconciles that reached the managed reconciler.
    #[must_use]
    pub fn reconcile_cpu(&self) -> &Histogram {
        &self.reconcile_cpu
    }

    /// Cloud requests by action and code.
    #[must_use]
    pub fn cloud_requests(&self) -> &CloudRequests {
        &self.cloud_requests
    }

    /// Kubernetes requests by verb and code.
    #[must_use]
    pub fn kube_requests(&self) -> &KubeRequests {
        &self.kube_requests
    }

    pub(crate) fn set_runtime(&self, state: RuntimeState) {
        *self.state.lock() = state;
    }

    /// The text exposition format.
    ///
    /// # Errors
    /// Only if formatting fails.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// A work queue's labels: controller-runtime's provider sets both to the controller's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabels {
    name: String,
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: String,
}

/// The process's resident set in bytes (`VmRSS` of `/proc/self/status`), as Prometheus's
/// process collector reports it; `None` where `/proc` has no such line.
fn resident_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

fn family<L: EncodeLabelSet, M: EncodeMetric>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    metric_type: MetricType,
    samples: &[(L, M)],
) -> Result<(), std::fmt::Error> {
    let mut descriptor = encoder.encode_descriptor(name, help, None, metric_type)?;
    for (labels, metric) in samples {
        metric.encode(descriptor.encode_family(labels)?)?;
    }
    Ok(())
}

impl prometheus_client::collector::Collector for RuntimeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let state = self.state.lock();
        let queues: Vec<_> = state
            .queues
            .iter()
            .map(|(name, m)| {
                let labels = QueueLabels {
                    name: name.clone(),
                    controller: name.clone(),
                };
                (labels, m.snapshot())
            })
            .collect();
        let gauge = |f: &dyn Fn(&limiter::workqueue::QueueMetricsSnapshot) -> f64| {
            queues
                .iter()
                .map(|(l, s)| (l.clone(), ConstGauge::new(f(s))))
                .collect::<Vec<_>>()
        };
        let counter = |f: &dyn Fn(&limiter::workqueue::QueueMetricsSnapshot) -> u64| {
            queues
                .iter()
                .map(|(l, s)| (l.clone(), ConstCounter::new(f(s))))
                .collect::<Vec<_>>()
        };
        family(
            &mut encoder,
            "workqueue_depth",
            "Items waiting in the work queue",
            MetricType::Gauge,
            &gauge(&|s| s.depth as f64),
        )?;
        family(
            &mut encoder,
            "workqueue_adds",
            "Items added to the work queue",
            MetricType::Counter,
            &counter(&|s| s.adds),
        )?;
        family(
            &mut encoder,
            "workqueue_retries",
            "Delayed or rate-limited re-adds",
            MetricType::Counter,
            &counter(&|s| s.retries),
        )?;
        family(
            &mut encoder,
            "workqueue_queue_duration_seconds_sum",
            "Total time items waited from add to hand-out",
            MetricType::Gauge,
            &gauge(&|s| s.queue_latency.sum.as_secs_f64()),
        )?;
        family(
            &mut encoder,
            "workqueue_queue_duration_seconds_count",
            "Items handed out",
            MetricType::Gauge,
            &gauge(&|s| s.queue_latency.count as f64),
        )?;
        family(
            &mut encoder,
            "workqueue_queue_duration_seconds_max",
            "Longest wait from add to hand-out",
            MetricType::Gauge,
            &gauge(&|s| s.queue_latency.max.as_secs_f64()),
        )?;
        family(
            &mut encoder,
            "workqueue_work_duration_seconds_sum",
            "Total time spent reconciling",
            MetricType::Gauge,
            &gauge(&|s| s.work_duration.sum.as_secs_f64()),
        )?;
        family(
            &mut encoder,
            "workqueue_work_duration_seconds_count",
            "Reconciles finished",
            MetricType::Gauge,
            &gauge(&|s| s.work_duration.count as f64),
        )?;
        family(
            &mut encoder,
            "workqueue_work_duration_seconds_max",
            "Longest reconcile",
            MetricType::Gauge,
            &gauge(&|s| s.work_duration.max.as_secs_f64()),
        )?;
        family(
            &mut encoder,
            "workqueue_longest_running_processor_seconds",
            "Age of the oldest reconcile in progress",
            MetricType::Gauge,
            &gauge(&|s| s.longest_running.as_secs_f64()),
        )?;

        let mut results = Vec::new();
        let (mut errors, mut terminal, mut active) = (Vec::new(), Vec::new(), Vec::new());
        for (name, stats) in &state.controllers {
            let s = stats.snapshot();
            let controller = || ControllerLabel {
                controller: name.clone(),
            };
            // controller-runtime's `result` values: a terminal error is an `error` there too.
            for (result, n) in [
                ("success", s.success),
                ("error", s.error + s.terminal_error),
                ("requeue", s.requeue),
                ("requeue_after", s.requeue_after),
            ] {
                let labels = ResultLabels {
                    controller: name.clone(),
                    result: result.to_owned(),
                };
                results.push((labels, ConstCounter::new(n)));
            }
            errors.push((controller(), ConstCounter::new(s.error + s.terminal_error)));
            terminal.push((controller(), ConstCounter::new(s.terminal_error)));
            active.push((controller(), ConstGauge::new(s.active_workers as i64)));
        }
        family(
            &mut encoder,
            "controller_runtime_reconcile",
            "Reconciles by controller and result, as controller-runtime counts them (global-limiter throttles included, as requeue_after; terminal errors as error)",
            MetricType::Counter,
            &results,
        )?;
        family(
            &mut encoder,
            "controller_runtime_reconcile_errors",
            "Reconciles that returned an error, terminal ones included",
            MetricType::Counter,
            &errors,
        )?;
        family(
            &mut encoder,
            "controller_runtime_terminal_reconcile_errors",
            "Reconciles that returned a terminal error (not requeued)",
            MetricType::Counter,
            &terminal,
        )?;
        family(
            &mut encoder,
            "controller_runtime_active_workers",
            "Workers inside a reconcile now",
            MetricType::Gauge,
            &active,
        )?;

        let (reservations, early, throttled) = state.middleware.as_ref().map_or((0, 0, 0), |m| {
            (m.reservations(), m.early_runs(), m.throttled())
        });
        for (name, help, value) in [
            (
                "limiter_reservations",
                "Tokens reserved from the global bucket by the crossplane middleware",
                reservations,
            ),
            (
                "limiter_early_runs",
                "Middleware passes that ran before their token's time to act",
                early,
            ),
            (
                "limiter_throttled",
                "Middleware passes throttled (returned RequeueAfter without reconciling)",
                throttled,
            ),
        ] {
            let metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            ConstCounter::new(value).encode(metric)?;
        }

        if let Some(settings) = &state.settings {
            family(
                &mut encoder,
                "provider_settings",
                "The rate-limit settings the provider runs with, as labels (always 1)",
                MetricType::Gauge,
                &[(SettingsLabels::of(settings), ConstGauge::new(1))],
            )?;
        }

        if let Some(bytes) = resident_bytes() {
            let metric = encoder.encode_descriptor(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                None,
                MetricType::Gauge,
            )?;
            ConstGauge::new(bytes).encode(metric)?;
        }

        if let Some(events) = &state.events {
            let samples: Vec<_> = [
                ("queued", events.queued()),
                ("written", events.written()),
                ("failed", events.failed()),
                ("dropped", events.dropped()),
            ]
            .into_iter()
            .map(|(o, n)| {
                (
                    OutcomeLabel {
                        outcome: o.to_owned(),
                    },
                    ConstCounter::new(n),
                )
            })
            .collect();
            family(
                &mut encoder,
                "provider_events",
                "Kubernetes events by outcome",
                MetricType::Counter,
                &samples,
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_resident_set_is_exported_as_prometheus_names_it() {
        let text = ProviderMetrics::new().encode().unwrap();
        if cfg!(target_os = "linux") {
            let line = text
                .lines()
                .find(|l| l.starts_with("process_resident_memory_bytes "))
                .expect(&text);
            let bytes: f64 = line.split(' ').nth(1).unwrap().parse().unwrap();
            assert!(bytes > 1e6, "{line}");
        }
    }

    #[test]
    fn the_flags_of_todays_providers_reach_the_settings_metric() {
        let cli = crate::cli::Cli::try_parse_from([
            "provider",
            "--cloud-endpoint",
            "http://127.0.0.1:1",
            "--scoped-buckets=true",
            "--min-poll-interval=0s",
            "--backoff-base=2s",
            "--backoff-max=5m",
            "--poll-jitter-percent=5",
            "--poll-jitter-sizing=poll-interval",
            "--event-client=separate",
            "--reconcile-requests=ignore",
        ])
        .unwrap();
        let config = cli.run.validate().unwrap();
        let metrics = ProviderMetrics::new();
        metrics.set_runtime(RuntimeState {
            settings: Some(config.settings),
            ..RuntimeState::default()
        });
        let text = metrics.encode().unwrap();
        let want = "provider_settings{max_reconcile_rate=\"10\",rate_limit_model=\"crossplane\",\
            poll_interval=\"1m0s\",poll_jitter_percent=\"5\",poll_jitter_sizing=\"poll-interval\",\
            min_poll_interval=\"0s\",scoped_buckets=\"true\",backoff_base=\"2s\",\
            backoff_max=\"5m0s\",error_requeue=\"backoff\",observe_only_absent=\"poll\",\
            event_client=\"separate\",reconcile_requests=\"ignore\"} 1";
        assert!(text.contains(want), "{text}");
    }
}
