//! The provider metrics a run reads, by name: the ones controller-runtime and client-go
//! export in every provider built on them, and this workspace's provider's own, used only
//! where present. Pure: Prometheus text to [`Readings`], readings summed over a run to
//! [`ProviderMetrics`]. [`super::provider_metrics`] does the reading and the summing.

use std::collections::{BTreeMap, BTreeSet};

use crate::result::ProviderMetrics;
use crate::result::provider_check::{ControllerMetrics, RestRequests};
use crate::run::prometheus::{label_value, samples};

const RESERVATIONS: &str = "limiter_reservations_total";
const EARLY_RUNS: &str = "limiter_early_runs_total";
const CLOUD_CALLS: &str = "provider_cloud_requests_total";
const RECONCILE_CPU_COUNT: &str = "provider_reconcile_cpu_seconds_count";
const RECONCILE_CPU_SUM: &str = "provider_reconcile_cpu_seconds_sum";
/// Time spent reconciling, per controller (`name`), as client-go's work queue gives it.
const WORK_DURATION: &str = "workqueue_work_duration_seconds_sum";
const RECONCILES: &str = "controller_runtime_reconcile_total";
const RECONCILE_ERRORS: &str = "controller_runtime_reconcile_errors_total";
const QUEUE_ADDS: &str = "workqueue_adds_total";
const QUEUE_DEPTH: &str = "workqueue_depth";
const REST_REQUESTS: &str = "rest_client_requests_total";

/// How a metric adds up over a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sum {
    /// A counter (or a sum that only grows): what it grew by, a fall being a new process
    /// that counts from zero.
    Growth,
    /// A gauge: the largest value read.
    Max,
}

/// Every metric the run reads.
pub const READ: [(&str, Sum); 11] = [
    (RESERVATIONS, Sum::Growth),
    (EARLY_RUNS, Sum::Growth),
    (CLOUD_CALLS, Sum::Growth),
    (RECONCILE_CPU_COUNT, Sum::Growth),
    (RECONCILE_CPU_SUM, Sum::Growth),
    (WORK_DURATION, Sum::Growth),
    (RECONCILES, Sum::Growth),
    (RECONCILE_ERRORS, Sum::Growth),
    (QUEUE_ADDS, Sum::Growth),
    (QUEUE_DEPTH, Sum::Max),
    (REST_REQUESTS, Sum::Growth),
];

/// A series: a metric's name and its labels as written (without braces).
pub type SeriesKey = (&'static str, String);

/// One read of a provider's metrics, or their sums over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Readings {
    /// Each series' value.
    pub values: BTreeMap<SeriesKey, f64>,
    /// The names the provider exports: a sample, or a `# TYPE` line (a counter with no
    /// label set yet has only that).
    pub exported: BTreeSet<&'static str>,
}

/// Whether `text` declares `name`: a `# TYPE` line of it, of its counter base (without
/// `_total`) or of its histogram (without `_sum` or `_count`).
fn declared(text: &str, name: &str) -> bool {
    let bases = [
        Some(name),
        name.strip_suffix("_total"),
        name.strip_suffix("_sum"),
        name.strip_suffix("_count"),
    ];
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .any(|l| {
            let declared = l.split(' ').next().unwrap_or_default();
            bases.iter().flatten().any(|b| *b == declared)
        })
}

/// The metrics of [`READ`] in `text`.
#[must_use]
pub fn parse(text: &str) -> Readings {
    let mut out = Readings::default();
    for (name, _) in READ {
        let mut any = false;
        for (labels, v) in samples(text, name) {
            any = true;
            *out.values.entry((name, labels.to_owned())).or_default() += v;
        }
        if any || declared(text, name) {
            out.exported.insert(name);
        }
    }
    out
}

/// How [`READ`] sums `name`.
#[must_use]
pub fn sum_of(name: &str) -> Sum {
    READ.iter()
        .find(|(n, _)| *n == name)
        .map_or(Sum::Growth, |(_, s)| *s)
}

impl Readings {
    /// The sum of `name` over its series, when exported.
    fn total(&self, name: &str) -> Option<f64> {
        self.exported.contains(name).then(|| {
            self.values
                .iter()
                .filter(|((n, _), _)| *n == name)
                .map(|(_, v)| v)
                .sum()
        })
    }

    /// `name`'s series, by the value of label `key` (summed over the other labels).
    fn by_label(&self, name: &str, key: &str) -> BTreeMap<String, f64> {
        let mut out: BTreeMap<String, f64> = BTreeMap::new();
        for ((n, labels), v) in &self.values {
            if *n == name
                && let Some(value) = label_value(labels, key)
            {
                *out.entry(value.to_owned()).or_default() += v;
            }
        }
        out
    }

    /// Each controller's standard metrics (`controller` of controller-runtime's,
    /// `name` of the work queue's).
    fn controllers(&self) -> Vec<ControllerMetrics> {
        let mut out: BTreeMap<String, ControllerMetrics> = BTreeMap::new();
        for ((n, labels), v) in &self.values {
            let (key, name) = match *n {
                RECONCILES | RECONCILE_ERRORS => ("controller", *n),
                QUEUE_ADDS | QUEUE_DEPTH => ("name", *n),
                _ => continue,
            };
            let Some(c) = label_value(labels, key) else {
                continue;
            };
            let m = out
                .entry(c.to_owned())
                .or_insert_with(|| ControllerMetrics {
                    controller: c.to_owned(),
                    ..ControllerMetrics::default()
                });
            let n = v.round() as u64;
            match name {
                RECONCILES => {
                    let result = label_value(labels, "result").unwrap_or("unknown");
                    *m.reconciles.entry(result.to_owned()).or_default() += n;
                }
                RECONCILE_ERRORS => *m.reconcile_errors.get_or_insert(0) += n,
                QUEUE_ADDS => *m.queue_adds.get_or_insert(0) += n,
                _ => *m.queue_depth_max.get_or_insert(0.0) += v,
            }
        }
        out.into_values().collect()
    }

    /// `rest_client_requests_total` by code, method and host, when exported.
    fn rest_requests(&self) -> Option<Vec<RestRequests>> {
        self.exported.contains(REST_REQUESTS).then(|| {
            let mut out: BTreeMap<(String, String, String), u64> = BTreeMap::new();
            for ((n, labels), v) in &self.values {
                if *n != REST_REQUESTS {
                    continue;
                }
                let l = |k| label_value(labels, k).unwrap_or_default().to_owned();
                *out.entry((l("code"), l("method"), l("host"))).or_default() += v.round() as u64;
            }
            out.into_iter()
                .map(|((code, method, host), count)| RestRequests {
                    code,
                    method,
                    host,
                    count,
                })
                .collect()
        })
    }

    /// The provider's metrics, from readings summed over the run.
    #[must_use]
    pub fn metrics(&self) -> ProviderMetrics {
        let whole = |name| self.total(name).map(|v| v.round() as u64);
        ProviderMetrics {
            reservations: whole(RESERVATIONS),
            early_runs: whole(EARLY_RUNS),
            cloud_calls: whole(CLOUD_CALLS),
            reconciles: whole(RECONCILE_CPU_COUNT).unwrap_or(0),
            reconcile_cpu_us: self
                .total(RECONCILE_CPU_SUM)
                .map_or(0, |s| (s * 1e6) as u64),
            busy_s: self.by_label(WORK_DURATION, "name"),
            controllers: self.controllers(),
            rest_requests: self.rest_requests(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a controller-runtime provider (provider-upjet-aws) exports of the names read:
    /// no provider_*, no limiter_*.
    const UPJET: &str = "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",result=\"error\"} 2
controller_runtime_reconcile_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",result=\"requeue\"} 0
controller_runtime_reconcile_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",result=\"requeue_after\"} 30
controller_runtime_reconcile_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",result=\"success\"} 10
# TYPE controller_runtime_reconcile_errors_total counter
controller_runtime_reconcile_errors_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\"} 2
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",name=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\"} 45
# TYPE workqueue_depth gauge
workqueue_depth{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",name=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",priority=\"\"} 3
workqueue_depth{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",name=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",priority=\"-100\"} 2
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_sum{controller=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\",name=\"managed/s3.aws.upbound.io/v1beta1, kind=bucket\"} 4.5
# TYPE rest_client_requests_total counter
rest_client_requests_total{code=\"200\",host=\"10.96.0.1:443\",method=\"GET\"} 40
rest_client_requests_total{code=\"200\",host=\"10.96.0.1:443\",method=\"PATCH\"} 12
rest_client_requests_total{code=\"409\",host=\"10.96.0.1:443\",method=\"PUT\"} 1
";

    #[test]
    fn a_controller_runtime_provider_is_read_through_the_standard_names_alone() {
        let r = parse(UPJET);
        let m = r.metrics();
        assert_eq!(m.cloud_calls, None, "no provider_cloud_requests_total");
        assert_eq!((m.reservations, m.early_runs), (None, None));
        let c = &m.controllers[0];
        assert_eq!(
            c.controller,
            "managed/s3.aws.upbound.io/v1beta1, kind=bucket"
        );
        assert_eq!(c.reconciles_total(), Some(42));
        assert_eq!(c.reconciles["requeue_after"], 30);
        assert_eq!(c.reconcile_errors, Some(2));
        assert_eq!(c.queue_adds, Some(45));
        assert_eq!(c.queue_depth_max, Some(5.0), "summed over priorities");
        assert_eq!(m.busy_s.values().copied().collect::<Vec<_>>(), [4.5]);
        let rest = m.rest_requests.expect("exported");
        assert_eq!(rest.iter().map(|r| r.count).sum::<u64>(), 53);
        assert_eq!(rest[0].host, "10.96.0.1:443");
    }

    #[test]
    fn a_counter_with_no_label_set_yet_is_exported_and_zero() {
        let text = "# TYPE provider_cloud_requests counter\n# TYPE rest_client_requests counter\n";
        let m = parse(text).metrics();
        assert_eq!(m.cloud_calls, Some(0));
        assert_eq!(m.rest_requests, Some(Vec::new()));
        assert_eq!(parse("other 1\n").metrics().cloud_calls, None);
    }
}
