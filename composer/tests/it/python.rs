//! Real functions nobody here wrote the protocol of: a Python function built on
//! crossplane-function-sdk-python (PyPI; `.ci/run` installs it), run as a process serving
//! insecure on loopback, called through our gRPC client.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use composer::function::builtin::{self, Resources};
use composer::function::pipeline::{self, PipelineError, Step};
use composer::function::proto::{Ready, RunFunctionRequest, Severity, State};
use composer::function::value::from_struct;
use composer::function::{FunctionRunner, FunctionServer, Functions, GrpcRunner, InProcessRunner};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{builtin_input, free_port, json_of, observed, resource};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/functions/label_function.py"
);
const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/functions/call_function.py"
);

/// Waiting for Python to start is part of the call (wait-for-ready), so the deadline is
/// generous.
const DEADLINE: Duration = Duration::from_secs(60);

/// The Python function, killed on drop.
pub struct PythonFunction {
    child: Child,
    pub address: SocketAddr,
}

impl Drop for PythonFunction {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether python3 has the SDK; if not, says so and returns false (a failure instead when
/// `REQUIRE_TOOLS` is set, as in CI).
pub fn sdk_installed() -> bool {
    let sdk = Command::new("python3")
        .args(["-c", "import crossplane.function.runtime"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !sdk.is_ok_and(|s| s.success()) {
        let reason = "python3 with crossplane-function-sdk-python is not installed \
                      (pip install crossplane-function-sdk-python==0.15.1)";
        assert!(
            std::env::var_os("REQUIRE_TOOLS").is_none(),
            "REQUIRE_TOOLS is set: {reason}"
        );
        eprintln!("skipped: {reason}");
        return false;
    }
    true
}

/// Starts the function, unless the SDK is missing.
pub fn start(ttl_seconds: u32) -> Option<PythonFunction> {
    if !sdk_installed() {
        return None;
    }
    let address = free_port();
    let child = Command::new("python3")
        .arg(SCRIPT)
        .args([
            "--address",
            &address.to_string(),
            "--ttl-seconds",
            &ttl_seconds.to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 starts");
    Some(PythonFunction { child, address })
}

#[tokio::test]
async fn a_python_sdk_function_answers_our_client_over_insecure_grpc() {
    let Some(function) = start(42) else { return };
    let mut desired = State::default();
    desired
        .resources
        .insert("bucket-0".into(), resource(json!({"kind": "Bucket"})));
    desired.resources.get_mut("bucket-0").unwrap().ready = Ready::True as i32;
    let request = RunFunctionRequest {
        observed: Some(observed()),
        desired: Some(desired),
        ..Default::default()
    };
    let runner = GrpcRunner::new(function.address);
    let response = runner
        .run("label", request, Instant::now() + DEADLINE)
        .await
        .unwrap();

    assert_eq!(
        response.meta.unwrap().ttl,
        Some(prost_types::Duration {
            seconds: 42,
            nanos: 0
        })
    );
    let bucket = &response.desired.as_ref().unwrap().resources["bucket-0"];
    assert_eq!(
        json_of(bucket),
        json!({"kind": "Bucket", "metadata": {"labels": {"example.org/region": "eu-west-1"}}})
    );
    assert_eq!(bucket.ready(), Ready::True, "readiness passes through");
    assert_eq!(response.results.len(), 1);
    assert_eq!(response.results[0].severity(), Severity::Normal);
    assert_eq!(response.results[0].message, "labelled 1 resources");
}

#[tokio::test]
async fn a_python_sdk_function_answers_a_fatal_result_for_an_xr_without_a_region() {
    let Some(function) = start(42) else { return };
    let mut observed = observed();
    observed.composite = Some(resource(
        json!({"apiVersion": "example.org/v1", "kind": "XBucket", "spec": {}}),
    ));
    let request = RunFunctionRequest {
        observed: Some(observed),
        ..Default::default()
    };
    let response = GrpcRunner::new(function.address)
        .run("label", request, Instant::now() + DEADLINE)
        .await
        .unwrap();
    assert_eq!(response.results.len(), 1);
    assert_eq!(response.results[0].severity(), Severity::Fatal);
    assert_eq!(response.results[0].message, "the XR has no spec.region");
}

#[tokio::test]
async fn our_builtin_function_then_the_python_one_compose_one_desired_state() {
    let Some(function) = start(20) else { return };
    let functions = Functions::new()
        .with("resources", InProcessRunner::new(Resources))
        .with("label", GrpcRunner::new(function.address));
    let steps = [
        Step::new("compose", "resources", Some(builtin_input(2, "30s"))),
        Step::new("label", "label", None),
    ];
    let outcome = pipeline::run(
        &functions,
        &steps,
        observed(),
        State::default(),
        Instant::now() + DEADLINE,
    )
    .await
    .unwrap();

    let resources = &outcome.desired.resources;
    assert_eq!(
        resources.keys().collect::<Vec<_>>(),
        ["bucket-0", "bucket-1"]
    );
    for bucket in resources.values() {
        assert_eq!(
            json_of(bucket),
            json!({
                "apiVersion": "s3.aws.upbound.io/v1beta1",
                "kind": "Bucket",
                "metadata": {"labels": {"example.org/region": "eu-west-1"}},
                "spec": {"forProvider": {"region": "eu-west-1"}},
            })
        );
    }
    // Readiness the built-in function judged survives the Python step.
    assert_eq!(resources["bucket-0"].ready(), Ready::True);
    assert_eq!(resources["bucket-1"].ready(), Ready::False);
    // The context flowed from our step into the Python one, which extended it.
    let context = from_struct(outcome.context.as_ref().unwrap());
    assert_eq!(
        context[builtin::CONTEXT_KEY],
        json!(["bucket-0", "bucket-1"])
    );
    assert_eq!(
        context["example.org/labelled"],
        json!(["bucket-0", "bucket-1", "bucket-0", "bucket-1"])
    );
    // The smallest TTL: Python's 20 s under ours 30 s.
    assert_eq!(outcome.ttl, Some(Duration::from_secs(20)));
    assert_eq!(outcome.results.len(), 1);
    assert_eq!(outcome.results[0].0, "label");
}

#[tokio::test]
async fn a_fatal_result_from_the_python_step_stops_the_pipeline() {
    let Some(function) = start(20) else { return };
    let functions = Functions::new().with("label", GrpcRunner::new(function.address));
    let mut observed = observed();
    observed.composite = Some(resource(json!({"kind": "XBucket"})));
    let error = pipeline::run(
        &functions,
        &[Step::new("label", "label", None)],
        observed,
        State::default(),
        Instant::now() + DEADLINE,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(error, PipelineError::Fatal { ref step, .. } if step == "label"),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_grpc_stub_calls_our_builtin_function_server() {
    if !sdk_installed() {
        return;
    }
    let server = FunctionServer::bind("127.0.0.1:0".parse().unwrap(), Resources)
        .await
        .unwrap();
    let address = server.address().to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new("python3").args([CLIENT, &address]).output()
    })
    .await
    .unwrap()
    .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // protojson, as the Python client printed it.
    let response: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(
        response["meta"],
        json!({"tag": "from-python", "ttl": "45s"})
    );
    let resources = &response["desired"]["resources"];
    assert_eq!(
        resources["bucket-1"]["resource"]["spec"]["forProvider"]["region"],
        "us-east-2"
    );
    assert_eq!(resources["bucket-1"]["ready"], "READY_FALSE");
    assert_eq!(
        response["context"][builtin::CONTEXT_KEY],
        json!(["bucket-0", "bucket-1"])
    );
    server.shutdown().await;
}
