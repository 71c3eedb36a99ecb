//! `--metrics-addr`: core's function metrics in Prometheus' text format at `/metrics`.

use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use composer::function::FunctionMetrics;
use composer::function::metrics::ResponseCount;
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

/// A counter series of the function responses: name, help, and its value of a count.
type Counter = (&'static str, &'static str, fn(&ResponseCount) -> String);

/// The counters, under core's names (`internal/xfn/function_runner_metrics.go`).
fn exposition(metrics: &FunctionMetrics) -> String {
    let mut out = String::new();
    out.push_str(
        "# HELP function_run_function_request_total Total number of RunFunctionRequests sent.\n",
    );
    out.push_str("# TYPE function_run_function_request_total counter\n");
    for ((function, method), count) in metrics.requests_by_method() {
        let _ = writeln!(
            out,
            "function_run_function_request_total{{function_name=\"{function}\",grpc_method=\"{method}\"}} {count}"
        );
    }
    let responses = metrics.responses();
    let counters: [Counter; 2] = [
        (
            "function_run_function_response_total",
            "Total number of RunFunctionResponses received.",
            |count| count.count.to_string(),
        ),
        (
            "function_run_function_seconds_sum",
            "Seconds spent in RunFunction calls.",
            |count| count.seconds.to_string(),
        ),
    ];
    for (name, help, value) in counters {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} counter");
        for (labels, count) in &responses {
            let _ = writeln!(
                out,
                "{name}{{function_name=\"{}\",grpc_method=\"{}\",grpc_code=\"{}\",result_severity=\"{}\"}} {}",
                labels.function,
                labels.method,
                labels.code,
                labels.severity,
                value(count)
            );
        }
    }
    out
}
