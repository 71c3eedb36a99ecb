//! `--metrics-addr`: core's function metrics in Prometheus' text format at `/metrics`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use composer::function::FunctionMetrics;
use composer::function::metrics::{ResponseCount, ResponseLabels, SECONDS_BUCKETS};
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use tokio::net::TcpListener;

/// Serves `/metrics` on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<FunctionMetrics>,
    shutdown: impl Future<Output = ()>,
) {
    let service = tower::service_fn(move |request: Request<Incoming>| {
        let response = if request.uri().path() == "/metrics" {
            Response::builder()
                .header("content-type", "text/plain; version=0.0.4")
                .body(Full::new(Bytes::from(exposition(&metrics))))
        } else {
            Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Full::new(Bytes::from_static(b"not found; try /metrics\n")))
        }
        .expect("a valid response");
        async move { Ok::<_, Infallible>(response) }
    });
    let options = serve::Options::default().drain_timeout(Some(Duration::from_secs(1)));
    serve::serve(listener, service, shutdown, options).await;
}

/// The series, under core's names and help texts (`internal/xfn/function_runner_metrics.go`):
/// the request and response counters and the latency histogram.
fn exposition(metrics: &FunctionMetrics) -> String {
    render(&metrics.requests_by_method(), &metrics.responses())
}

/// [`exposition`] of these counts.
fn render(
    requests: &BTreeMap<(String, &'static str), u64>,
    responses: &BTreeMap<ResponseLabels, ResponseCount>,
) -> String {
    let mut out = String::new();
    out.push_str(
        "# HELP function_run_function_request_total Total number of RunFunctionRequests sent.\n",
    );
    out.push_str("# TYPE function_run_function_request_total counter\n");
    for ((function, method), count) in requests {
        let _ = writeln!(
            out,
            "function_run_function_request_total{{function_name=\"{function}\",grpc_method=\"{method}\"}} {count}"
        );
    }
    let labels = |l: &ResponseLabels| {
        format!(
            "function_name=\"{}\",grpc_method=\"{}\",grpc_code=\"{}\",result_severity=\"{}\"",
            l.function, l.method, l.code, l.severity
        )
    };
    out.push_str(
        "# HELP function_run_function_response_total Total number of RunFunctionResponses received.\n",
    );
    out.push_str("# TYPE function_run_function_response_total counter\n");
    for (l, count) in responses {
        let _ = writeln!(
            out,
            "function_run_function_response_total{{{}}} {}",
            labels(l),
            count.count
        );
    }
    out.push_str(
        "# HELP function_run_function_seconds Histogram of RunFunctionResponse latency (seconds).\n",
    );
    out.push_str("# TYPE function_run_function_seconds histogram\n");
    for (l, count) in responses {
        let l = labels(l);
        for (bound, n) in SECONDS_BUCKETS.iter().zip(count.buckets) {
            let _ = writeln!(
                out,
                "function_run_function_seconds_bucket{{{l},le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "function_run_function_seconds_bucket{{{l},le=\"+Inf\"}} {}",
            count.count
        );
        let _ = writeln!(
            out,
            "function_run_function_seconds_sum{{{l}}} {}",
            count.seconds
        );
        let _ = writeln!(
            out,
            "function_run_function_seconds_count{{{l}}} {}",
            count.count
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_is_a_histogram_with_prometheus_default_buckets_as_cores() {
        let method = composer::function::proto::RUN_FUNCTION_V1;
        let mut count = ResponseCount::default();
        count.observe(0.02);
        count.observe(3.0);
        let labels = ResponseLabels {
            function: "f".to_owned(),
            method,
            code: "OK",
            severity: "Normal",
        };
        let text = render(
            &BTreeMap::from([(("f".to_owned(), method), 2)]),
            &BTreeMap::from([(labels, count)]),
        );
        let l = format!(
            "function_name=\"f\",grpc_method=\"{method}\",grpc_code=\"OK\",result_severity=\"Normal\""
        );
        for line in [
            "# TYPE function_run_function_seconds histogram".to_owned(),
            format!("function_run_function_seconds_bucket{{{l},le=\"0.01\"}} 0"),
            format!("function_run_function_seconds_bucket{{{l},le=\"0.025\"}} 1"),
            format!("function_run_function_seconds_bucket{{{l},le=\"2.5\"}} 1"),
            format!("function_run_function_seconds_bucket{{{l},le=\"5\"}} 2"),
            format!("function_run_function_seconds_bucket{{{l},le=\"10\"}} 2"),
            format!("function_run_function_seconds_bucket{{{l},le=\"+Inf\"}} 2"),
            format!("function_run_function_seconds_sum{{{l}}} 3.02"),
            format!("function_run_function_seconds_count{{{l}}} 2"),
            format!("function_run_function_response_total{{{l}}} 2"),
        ] {
            assert!(text.lines().any(|x| x == line), "{line}\n{text}");
        }
        assert_eq!(
            text.lines()
                .filter(|x| x.starts_with("function_run_function_seconds_bucket"))
                .count(),
            12
        );
    }
}
