//! Functions called in process, with no socket, on tokio's paused clock.

use std::time::Duration;

use composer::function::builtin::{self, Resources};
use composer::function::pipeline::{self, PipelineError, Step};
use composer::function::proto::{RunFunctionRequest, RunFunctionResponse, Severity, State};
use composer::function::value::from_struct;
use composer::function::{
    Direction, Faulty, FnFunction, FunctionError, FunctionRunner, FunctionService, Functions,
    InProcessRunner, MAX_MESSAGE_SIZE,
};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{builtin_input, json_of, object, observed, request, too_large_direction};

/// Core's per-reconcile deadline.
const RECONCILE_DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(start_paused = true)]
async fn the_builtin_function_runs_in_process_with_no_virtual_time_spent() {
    let runner = InProcessRunner::new(Resources);
    let started = Instant::now();
    let response = runner
        .run("resources", request(3), started + RECONCILE_DEADLINE)
        .await
        .unwrap();
    assert_eq!(response.desired.unwrap().resources.len(), 3);
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_latency_fault_advances_virtual_time_by_exactly_the_latency() {
    let runner = InProcessRunner::new(Faulty::new(Resources).latency(Duration::from_millis(250)));
    let started = Instant::now();
    runner
        .run("slow", request(1), started + RECONCILE_DEADLINE)
        .await
        .unwrap();
    assert_eq!(started.elapsed(), Duration::from_millis(250));
}

#[tokio::test(start_paused = true)]
async fn a_down_function_blocks_until_the_reconcile_deadline_in_virtual_time() {
    let runner = InProcessRunner::new(Faulty::new(Resources).down());
    let started = Instant::now();
    let error = runner
        .run("down", request(1), started + RECONCILE_DEADLINE)
        .await
        .unwrap_err();
    assert_eq!(started.elapsed(), RECONCILE_DEADLINE);
    let FunctionError::DeadlineExceeded { waited, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(waited, RECONCILE_DEADLINE);
}

#[tokio::test(start_paused = true)]
async fn a_fatal_fault_answers_a_fatal_result_and_a_ttl_override_replaces_the_ttl() {
    let deadline = Instant::now() + RECONCILE_DEADLINE;
    let fatal = InProcessRunner::new(Faulty::new(Resources).fatal("injected"));
    let response = fatal.run("f", request(1), deadline).await.unwrap();
    assert_eq!(response.results.len(), 1);
    assert_eq!(response.results[0].severity(), Severity::Fatal);
    assert_eq!(response.results[0].message, "injected");

    let ttl = InProcessRunner::new(Faulty::new(Resources).ttl(Duration::from_secs(5)));
    let response = ttl.run("f", request(1), deadline).await.unwrap();
    assert_eq!(
        response.meta.unwrap().ttl,
        Some(prost_types::Duration {
            seconds: 5,
            nanos: 0
        })
    );
}

#[tokio::test(start_paused = true)]
async fn an_oversized_answer_is_refused_in_process_too() {
    let big = FnFunction(|_request: RunFunctionRequest| async {
        let output = composer::function::value::to_struct(&object(
            json!({"blob": "x".repeat(MAX_MESSAGE_SIZE)}),
        ));
        Ok(RunFunctionResponse {
            output: Some(output),
            ..Default::default()
        })
    });
    let error = InProcessRunner::new(big)
        .run("big", request(1), Instant::now() + RECONCILE_DEADLINE)
        .await
        .unwrap_err();
    assert_eq!(too_large_direction(&error), Direction::Response);
}

#[tokio::test(start_paused = true)]
async fn a_function_that_serves_only_v1beta1_is_reached_through_the_fallback_in_process() {
    let runner = InProcessRunner::from_service(FunctionService::new(Resources).v1beta1_only());
    let response = runner
        .run("old", request(2), Instant::now() + RECONCILE_DEADLINE)
        .await
        .unwrap();
    assert_eq!(response.desired.unwrap().resources.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_function_error_status_reaches_the_caller_with_its_code() {
    let failing = FnFunction(|_request: RunFunctionRequest| async {
        Err(tonic::Status::unavailable("overloaded"))
    });
    let error = InProcessRunner::new(failing)
        .run("f", request(1), Instant::now() + RECONCILE_DEADLINE)
        .await
        .unwrap_err();
    let FunctionError::Status { status, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (status.code(), status.message()),
        (tonic::Code::Unavailable, "overloaded")
    );
}

fn functions() -> Functions {
    Functions::new()
        .with("resources", InProcessRunner::new(Resources))
        .with(
            "slow-ttl",
            InProcessRunner::new(
                Faulty::new(Resources)
                    .latency(Duration::from_secs(2))
                    .ttl(Duration::from_secs(10)),
            ),
        )
        .with(
            "fatal",
            InProcessRunner::new(Faulty::new(Resources).fatal("no quota")),
        )
}

/// Runs `steps` with [`functions`] on the observed state, by the reconcile's deadline.
async fn run_steps(steps: &[Step]) -> Result<pipeline::Outcome, PipelineError> {
    pipeline::run(
        &functions(),
        steps,
        observed(),
        State::default(),
        Instant::now() + RECONCILE_DEADLINE,
    )
    .await
}

/// The error of a pipeline of `steps` that must fail.
async fn run_failing(steps: &[Step]) -> PipelineError {
    run_steps(steps).await.unwrap_err()
}

#[tokio::test(start_paused = true)]
async fn a_pipeline_chains_desired_state_and_context_and_keeps_the_smallest_ttl() {
    let second = object(json!({
        "apiVersion": builtin::API_VERSION,
        "kind": builtin::KIND,
        "resources": [{"name": "queue", "base": {"kind": "Queue"}, "readinessCheck": {"type": "None"}}],
    }));
    let steps = [
        Step::new("buckets", "resources", Some(builtin_input(2, "30s"))),
        Step::new(
            "queues",
            "slow-ttl",
            Some(composer::function::value::to_struct(&second)),
        ),
    ];
    let started = Instant::now();
    let outcome = run_steps(&steps).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(
        outcome.desired.resources.keys().collect::<Vec<_>>(),
        ["bucket-0", "bucket-1", "queue-0"]
    );
    assert_eq!(
        json_of(&outcome.desired.resources["queue-0"]),
        json!({"kind": "Queue"})
    );
    assert_eq!(outcome.ttl, Some(Duration::from_secs(10)));
    // The second step saw the first step's context, and replaced the list with its own.
    let context = from_struct(outcome.context.as_ref().unwrap());
    assert_eq!(context[builtin::CONTEXT_KEY], json!(["queue-0"]));
}

#[tokio::test(start_paused = true)]
async fn a_fatal_result_stops_the_pipeline_at_its_step() {
    let steps = [
        Step::new("first", "fatal", Some(builtin_input(1, "30s"))),
        Step::new("never", "resources", Some(builtin_input(1, "30s"))),
    ];
    let error = run_failing(&steps).await;
    assert_eq!(
        error.to_string(),
        "pipeline step \"first\" returned a fatal result: no quota"
    );
    assert!(matches!(error, PipelineError::Fatal { .. }));
}

#[tokio::test(start_paused = true)]
async fn an_unknown_function_fails_its_step() {
    let steps = [Step::new("only", "missing", None)];
    let error = run_failing(&steps).await;
    let PipelineError::Call { step, source } = error else {
        panic!("{error:?}")
    };
    assert_eq!(step, "only");
    assert!(matches!(source, FunctionError::UnknownFunction { .. }));
}

#[tokio::test(start_paused = true)]
async fn metrics_count_each_grpc_call_as_cores_interceptor_does() {
    use composer::function::FunctionMetrics;
    use composer::function::metrics::{ResponseCount, ResponseLabels};
    use composer::function::proto::{RUN_FUNCTION_V1, RUN_FUNCTION_V1BETA1};
    use std::sync::Arc;

    let metrics = Arc::new(FunctionMetrics::new());
    let old = InProcessRunner::from_service(FunctionService::new(Resources).v1beta1_only())
        .metrics(metrics.clone());
    let fatal = InProcessRunner::new(
        Faulty::new(Resources)
            .fatal("no")
            .latency(Duration::from_secs(1)),
    )
    .metrics(metrics.clone());
    let down = InProcessRunner::new(Faulty::new(Resources).down()).metrics(metrics.clone());
    let deadline = Instant::now() + RECONCILE_DEADLINE;
    old.run("old", request(1), deadline).await.unwrap();
    fatal.run("fatal", request(1), deadline).await.unwrap();
    down.run("down", request(1), deadline).await.unwrap_err();

    assert_eq!(
        (
            metrics.requests("old"),
            metrics.requests("fatal"),
            metrics.requests("down")
        ),
        (2, 1, 1)
    );
    let series = |function: &str, method, code, severity| ResponseLabels {
        function: function.into(),
        method,
        code,
        severity,
    };
    // One response each, in the histogram's buckets as its seconds fall.
    let count = |seconds| {
        let mut c = ResponseCount::default();
        c.observe(seconds);
        c
    };
    assert_eq!(
        metrics.responses().into_iter().collect::<Vec<_>>(),
        [
            // One deadline for the three calls, as for a reconcile's steps: the down
            // function waited all that the fatal one's second left of it, in one call.
            (
                series("down", RUN_FUNCTION_V1, "DeadlineExceeded", "Normal"),
                count(119.0)
            ),
            (series("fatal", RUN_FUNCTION_V1, "OK", "Fatal"), count(1.0)),
            (
                series("old", RUN_FUNCTION_V1, "Unimplemented", "Normal"),
                count(0.0)
            ),
            (
                series("old", RUN_FUNCTION_V1BETA1, "OK", "Normal"),
                count(0.0)
            ),
        ]
    );
}
