//! [`FunctionMetrics`]: core's function metrics (`internal/xfn/function_runner_metrics.go`),
//! counted per gRPC call, as core's client interceptor counts them.
//!
//! # Semantics
//! - One request and one response per gRPC call: a v1beta1-only function counts two of
//!   each per `run` (the `UNIMPLEMENTED` v1 call, then the v1beta1 one), with `method` telling
//!   them apart.
//! - Waiting for a function that is down is part of the v1 call, as with gRPC's
//!   wait-for-ready: it ends as one response with code `DeadlineExceeded`.
//! - `code` is the gRPC code as Go names it (`OK`, `DeadlineExceeded`, …), including the
//!   code grpc-go's client would report for what this client checks itself: an answer over
//!   the size limit is `ResourceExhausted`, a malformed one `Internal`, an unreachable
//!   function `Unavailable`.
//! - `severity` is `Fatal` when any result is FATAL, else `Warning` when any is WARNING,
//!   else `Normal`; and `Normal` for every v1beta1 call, whose answer core's interceptor
//!   does not recognise as a v1 response.
//! - Seconds go into `function_run_function_seconds`, a histogram with Prometheus' default
//!   buckets ([`SECONDS_BUCKETS`], as core's `prometheus.DefBuckets`), per label set.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use super::error::{Direction, FunctionError};
use super::proto::{RUN_FUNCTION_V1, RunFunctionResponse, Severity};

/// The labels of one response series.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResponseLabels {
    /// `function_name`
    pub function: String,
    /// `grpc_method`, the full method path.
    pub method: &'static str,
    /// `grpc_code`, as Go names it.
    pub code: &'static str,
    /// `result_severity`: `Fatal`, `Warning` or `Normal`.
    pub severity: &'static str,
}

/// The upper bounds (s) of `function_run_function_seconds`' buckets: Prometheus' default
/// buckets, which core's histogram uses (`prometheus.DefBuckets`); `+Inf` is the count.
pub const SECONDS_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Counts and seconds of one response series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ResponseCount {
    /// `function_run_function_response_total`
    pub count: u64,
    /// The sum of `function_run_function_seconds`.
    pub seconds: f64,
    /// Its buckets: how many responses took at most each of [`SECONDS_BUCKETS`]
    /// (cumulative, as Prometheus exposes them).
    pub buckets: [u64; SECONDS_BUCKETS.len()],
}

impl ResponseCount {
    /// Counts one response that took `seconds`.
    pub fn observe(&mut self, seconds: f64) {
        self.count += 1;
        self.seconds += seconds;
        for (bucket, bound) in self.buckets.iter_mut().zip(SECONDS_BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
    }
}

/// Core's function metrics, shared by the runners that record into it.
#[derive(Debug, Default)]
pub struct FunctionMetrics {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    requests: BTreeMap<(String, &'static str), u64>,
    responses: BTreeMap<ResponseLabels, ResponseCount>,
}

impl FunctionMetrics {
    /// No calls yet.
    #[must_use]
    pub fn new() -> Self {
        FunctionMetrics::default()
    }

    /// `function_run_function_request_total` for `function`, all methods.
    #[must_use]
    pub fn requests(&self, function: &str) -> u64 {
        let state = self.lock();
        state
            .requests
            .iter()
            .filter(|((f, _), _)| f == function)
            .map(|(_, n)| n)
            .sum()
    }

    /// `function_run_function_request_total` by function and method.
    #[must_use]
    pub fn requests_by_method(&self) -> BTreeMap<(String, &'static str), u64> {
        self.lock().requests.clone()
    }

    /// `function_run_function_response_total` and the seconds, by label set.
    #[must_use]
    pub fn responses(&self) -> BTreeMap<ResponseLabels, ResponseCount> {
        self.lock().responses.clone()
    }

    /// Counts one gRPC call's request.
    pub(crate) fn request(&self, function: &str, method: &'static str) {
        *self
            .lock()
            .requests
            .entry((function.to_owned(), method))
            .or_default() += 1;
    }

    /// Counts one gRPC call's outcome.
    pub(crate) fn response(
        &self,
        function: &str,
        method: &'static str,
        outcome: Result<&RunFunctionResponse, &FunctionError>,
        elapsed: Duration,
    ) {
        let (code, severity) = match outcome {
            Ok(response) if method == RUN_FUNCTION_V1 => ("OK", severity(response)),
            Ok(_) => ("OK", "Normal"),
            Err(error) => (go_code(error), "Normal"),
        };
        let labels = ResponseLabels {
            function: function.to_owned(),
            method,
            code,
            severity,
        };
        let mut state = self.lock();
        state
            .responses
            .entry(labels)
            .or_default()
            .observe(elapsed.as_secs_f64());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Counters stay meaningful after a panic elsewhere: take them as they are.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn severity(response: &RunFunctionResponse) -> &'static str {
    let severities = response.results.iter().map(super::proto::Result::severity);
    let mut label = "Normal";
    for severity in severities {
        match severity {
            Severity::Fatal => return "Fatal",
            Severity::Warning => label = "Warning",
            Severity::Normal | Severity::Unspecified => {}
        }
    }
    label
}

/// The code grpc-go's client reports for `error`.
fn go_code(error: &FunctionError) -> &'static str {
    match error {
        FunctionError::DeadlineExceeded { .. } => "DeadlineExceeded",
        FunctionError::Unreachable { .. } | FunctionError::UnknownFunction { .. } => "Unavailable",
        FunctionError::MessageTooLarge {
            direction: Direction::Response,
            ..
        } => "ResourceExhausted",
        FunctionError::MessageTooLarge { status, .. } | FunctionError::Status { status, .. } => {
            go_name(status.code())
        }
        FunctionError::MalformedResponse { .. } => "Internal",
    }
}

/// Go's name of a gRPC code (`codes.Code.String`).
fn go_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "Canceled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::function::proto::Result as FnResult;

    fn with(severities: &[Severity]) -> RunFunctionResponse {
        RunFunctionResponse {
            results: severities
                .iter()
                .map(|s| FnResult {
                    severity: *s as i32,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn the_severity_label_is_the_worst_result_as_cores_interceptor_reads_it() {
        assert_eq!(severity(&with(&[])), "Normal");
        assert_eq!(
            severity(&with(&[Severity::Normal, Severity::Warning])),
            "Warning"
        );
        assert_eq!(
            severity(&with(&[
                Severity::Warning,
                Severity::Fatal,
                Severity::Normal
            ])),
            "Fatal"
        );
        assert_eq!(severity(&with(&[Severity::Unspecified])), "Normal");
    }

    #[test]
    fn a_response_counts_in_every_bucket_whose_bound_it_does_not_pass() {
        // Prometheus' `le`: a value equal to a bound is in that bucket.
        let mut c = ResponseCount::default();
        for s in [0.005, 0.3, 11.0] {
            c.observe(s);
        }
        assert_eq!(c.buckets, [1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
        assert_eq!(c.count, 3);
        assert!((c.seconds - 11.305).abs() < 1e-9, "{}", c.seconds);
    }

    #[test]
    fn a_v1beta1_answer_is_always_normal_and_errors_carry_gos_code_names() {
        let metrics = FunctionMetrics::new();
        let beta = crate::function::proto::RUN_FUNCTION_V1BETA1;
        metrics.request("f", beta);
        metrics.response(
            "f",
            beta,
            Ok(&with(&[Severity::Fatal])),
            Duration::from_millis(500),
        );
        let cancelled = FunctionError::Status {
            function: "f".into(),
            status: tonic::Status::cancelled(""),
        };
        metrics.request("f", RUN_FUNCTION_V1);
        metrics.response(
            "f",
            RUN_FUNCTION_V1,
            Err(&cancelled),
            Duration::from_millis(250),
        );
        assert_eq!(metrics.requests("f"), 2);
        let responses = metrics.responses();
        let labels: Vec<_> = responses
            .keys()
            .map(|l| (l.method, l.code, l.severity))
            .collect();
        assert_eq!(
            labels,
            [
                (RUN_FUNCTION_V1, "Canceled", "Normal"),
                (beta, "OK", "Normal")
            ]
        );
        assert_eq!(responses.values().map(|c| c.seconds).sum::<f64>(), 0.75);
    }
}
