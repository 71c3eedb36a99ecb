//! The `apiserver_flowcontrol_*` metrics: what is counted, and their Prometheus text.

use std::collections::BTreeMap;

use crate::flowcontrol::config::PriorityAndFairness;
use crate::prometheus::write_histogram;

/// `requestDurationSecondsBuckets` of `flowcontrol/metrics/metrics.go`.
const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

#[derive(Default)]
pub(super) struct Histogram {
    buckets: [u64; WAIT_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    pub(super) fn observe(&mut self, seconds: f64) {
        if let Some(i) = WAIT_BUCKETS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += seconds;
    }
}

#[derive(Default)]
pub(super) struct Metrics {
    /// (level, schema) → dispatched.
    pub(super) dispatched: BTreeMap<(usize, usize), u64>,
    /// (level, schema, reason) → rejected.
    pub(super) rejected: BTreeMap<(usize, usize, &'static str), u64>,
    /// (level, schema) → waiting now.
    pub(super) in_queue: BTreeMap<(usize, usize), i64>,
    /// (level, schema) → executing now.
    pub(super) executing: BTreeMap<(usize, usize), i64>,
    /// (level, schema, executed) → wait.
    pub(super) waits: BTreeMap<(usize, usize, bool), Histogram>,
}

/// The `apiserver_flowcontrol_*` series of `m`, in the Prometheus text format; `limits`
/// are the priority levels' names and seats (`None` when exempt), in `config`'s order.
pub(super) fn prometheus_text<'a>(
    m: &Metrics,
    config: &PriorityAndFairness,
    limits: impl Iterator<Item = (&'a str, Option<usize>)>,
) -> String {
    use std::fmt::Write as _;
    let names = |level: usize, schema: usize| {
        (
            config.flow_schemas[schema].name.as_str(),
            config.priority_levels[level].name.as_str(),
        )
    };
    let mut out = String::new();
    out.push_str("# HELP apiserver_flowcontrol_dispatched_requests_total [BETA] Number of requests executed by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_dispatched_requests_total counter\n");
    for (&(l, s), n) in &m.dispatched {
        let (fs, pl) = names(l, s);
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_dispatched_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
        );
    }
    out.push_str("# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_rejected_requests_total counter\n");
    for (&(l, s, reason), n) in &m.rejected {
        let (fs, pl) = names(l, s);
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_rejected_requests_total{{flow_schema=\"{fs}\",priority_level=\"{pl}\",reason=\"{reason}\"}} {n}"
        );
    }
    out.push_str("# HELP apiserver_flowcontrol_current_inqueue_requests [BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_current_inqueue_requests gauge\n");
    for (&(l, s), n) in &m.in_queue {
        let (fs, pl) = names(l, s);
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_current_inqueue_requests{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
        );
    }
    out.push_str("# HELP apiserver_flowcontrol_current_executing_requests [BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem\n# TYPE apiserver_flowcontrol_current_executing_requests gauge\n");
    for (&(l, s), n) in &m.executing {
        let (fs, pl) = names(l, s);
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_current_executing_requests{{flow_schema=\"{fs}\",priority_level=\"{pl}\"}} {n}"
        );
    }
    out.push_str("# HELP apiserver_flowcontrol_request_wait_duration_seconds [BETA] Length of time a request spent waiting in its queue\n# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram\n");
    for (&(l, s, executed), h) in &m.waits {
        let (fs, pl) = names(l, s);
        let labels = format!("execute=\"{executed}\",flow_schema=\"{fs}\",priority_level=\"{pl}\"");
        write_histogram(
            &mut out,
            "apiserver_flowcontrol_request_wait_duration_seconds",
            &labels,
            &WAIT_BUCKETS,
            &h.buckets,
            h.count,
            h.sum,
        );
    }
    out.push_str("# HELP apiserver_flowcontrol_nominal_limit_seats [BETA] Nominal number of execution seats configured for each priority level\n# TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n");
    for (name, limit) in limits {
        let _ = writeln!(
            out,
            "apiserver_flowcontrol_nominal_limit_seats{{priority_level=\"{name}\"}} {}",
            limit.unwrap_or(0)
        );
    }
    out
}
