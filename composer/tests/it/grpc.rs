//! Functions over real gRPC on loopback, in real time (paused time and sockets do not mix).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use composer::function::builtin::Resources;
use composer::function::proto::{Ready, RunFunctionResponse};
use composer::function::value::to_struct;
use composer::function::{
    Direction, Faulty, FnFunction, FunctionError, FunctionRunner, FunctionServer, FunctionService,
    GrpcRunner, MAX_MESSAGE_SIZE,
};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use serde_json::json;
use tokio::time::Instant;

use crate::support::{free_port, json_of, object, request, too_large_direction};

const LOOPBACK: &str = "127.0.0.1:0";

fn loopback() -> SocketAddr {
    LOOPBACK.parse().unwrap()
}

fn in_seconds(s: u64) -> Instant {
    Instant::now() + Duration::from_secs(s)
}

/// A function whose answer carries `bytes` of output.
fn answering_with(
    bytes: usize,
) -> FnFunction<
    impl Fn(
        composer::function::proto::RunFunctionRequest,
    ) -> std::future::Ready<Result<RunFunctionResponse, tonic::Status>>
    + Send
    + Sync,
> {
    FnFunction(move |_request| {
        let output = to_struct(&object(json!({"blob": "x".repeat(bytes)})));
        std::future::ready(Ok(RunFunctionResponse {
            output: Some(output),
            ..Default::default()
        }))
    })
}

#[tokio::test]
async fn the_builtin_function_answers_over_grpc_on_loopback() {
    let server = FunctionServer::bind(loopback(), Resources).await.unwrap();
    let runner = GrpcRunner::new(server.address());
    let response = runner
        .run("resources", request(2), in_seconds(10))
        .await
        .unwrap();
    let desired = response.desired.unwrap().resources;
    assert_eq!(desired.keys().collect::<Vec<_>>(), ["bucket-0", "bucket-1"]);
    assert_eq!(
        json_of(&desired["bucket-1"])["spec"]["forProvider"]["region"],
        "eu-west-1"
    );
    assert_eq!(desired["bucket-0"].ready(), Ready::True);
    assert_eq!(desired["bucket-1"].ready(), Ready::False);
    assert_eq!(
        response.meta.unwrap().ttl,
        Some(prost_types::Duration {
            seconds: 30,
            nanos: 0
        })
    );
    // A second call shares the connection.
    runner
        .run("resources", request(1), in_seconds(10))
        .await
        .unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_function_that_starts_late_is_waited_for_until_it_is_ready() {
    let address = free_port();
    let late = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        FunctionServer::bind(address, Resources).await.unwrap()
    });
    let started = Instant::now();
    let response = GrpcRunner::new(address)
        .run("resources", request(1), in_seconds(10))
        .await;
    assert!(response.is_ok(), "{response:?}");
    // The first attempt failed; the retry came after grpc-go's first backoff, 1 s.
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    late.await.unwrap().shutdown().await;
}

#[tokio::test]
async fn a_function_that_is_down_blocks_until_the_callers_deadline() {
    let address = free_port();
    let started = Instant::now();
    let deadline = started + Duration::from_millis(1500);
    let error = GrpcRunner::new(address)
        .run("down", request(1), deadline)
        .await
        .unwrap_err();
    assert!(
        Instant::now() >= deadline,
        "returned {:?} before the deadline",
        deadline - Instant::now()
    );
    let FunctionError::DeadlineExceeded {
        function,
        last_connect_error,
        ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(function, "down");
    assert!(
        last_connect_error.is_some(),
        "the connection error is the cause"
    );
    assert!(
        error
            .to_string()
            .starts_with("function \"down\" did not answer before the deadline"),
        "{error}"
    );
}

#[tokio::test]
async fn without_wait_for_ready_a_down_function_is_unreachable_at_once() {
    let address = free_port();
    let runner = GrpcRunner::new(address).wait_for_ready(false);
    let error = runner
        .run("down", request(1), in_seconds(60))
        .await
        .unwrap_err();
    assert!(
        matches!(error, FunctionError::Unreachable { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("function \"down\" is unreachable at {address}")
    );
}

#[tokio::test]
async fn a_function_that_never_answers_hits_the_deadline() {
    let server = FunctionServer::bind(loopback(), Faulty::new(Resources).down())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_millis(300);
    let error = GrpcRunner::new(server.address())
        .run("hung", request(1), deadline)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            FunctionError::DeadlineExceeded {
                last_connect_error: None,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(Instant::now() >= deadline);
}

#[tokio::test]
async fn an_oversized_answer_is_refused_cleanly_and_the_connection_stays_usable() {
    let server = FunctionServer::bind(loopback(), answering_with(MAX_MESSAGE_SIZE + 1))
        .await
        .unwrap();
    let runner = GrpcRunner::new(server.address());
    let error = runner
        .run("big", request(1), in_seconds(10))
        .await
        .unwrap_err();
    let FunctionError::MessageTooLarge {
        direction, status, ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(*direction, Direction::Response);
    assert!(
        status.message().contains("the limit is: 4194304 bytes"),
        "{status:?}"
    );
    assert_eq!(
        error.to_string(),
        "function \"big\": the response exceeds the message size limit"
    );
    server.shutdown().await;

    // Just under the limit passes.
    let server = FunctionServer::bind(loopback(), answering_with(MAX_MESSAGE_SIZE - 64))
        .await
        .unwrap();
    let runner = GrpcRunner::new(server.address());
    assert!(runner.run("big", request(1), in_seconds(10)).await.is_ok());
    assert!(runner.run("big", request(1), in_seconds(10)).await.is_ok());
    server.shutdown().await;
}

#[tokio::test]
async fn an_oversized_request_is_refused_by_the_client_or_else_by_the_function() {
    let server = FunctionServer::bind(loopback(), Resources).await.unwrap();
    let mut big = request(1);
    big.context = Some(to_struct(&object(
        json!({"blob": "x".repeat(MAX_MESSAGE_SIZE)}),
    )));

    let error = GrpcRunner::new(server.address())
        .run("f", big.clone(), in_seconds(10))
        .await
        .unwrap_err();
    assert_eq!(too_large_direction(&error), Direction::Request);

    // A client that would send it: the function's 4 MiB receive limit refuses it after the
    // frame header, before the client has finished sending. The refusal and hyper's reset
    // of the unfinished request stream race, so the call fails either way, but not always
    // as MessageTooLarge.
    let lax = GrpcRunner::new(server.address()).max_request_size(2 * MAX_MESSAGE_SIZE);
    let error = lax.run("f", big, in_seconds(10)).await.unwrap_err();
    match &error {
        FunctionError::MessageTooLarge {
            direction: Direction::Request,
            status,
            ..
        } => {
            assert!(
                status.message().contains("the limit is: 4194304 bytes"),
                "{status:?}"
            );
        }
        FunctionError::Status { status, .. } => {
            assert_eq!(status.code(), tonic::Code::Unknown, "{status:?}");
        }
        other => panic!("{other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_function_that_serves_only_v1beta1_costs_two_calls_every_time_as_in_core() {
    let paths = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = paths.clone();
    let function = FunctionService::new(Resources).v1beta1_only();
    let counting = tower::service_fn(move |request: http::Request<hyper::body::Incoming>| {
        seen.lock().unwrap().push(request.uri().path().to_owned());
        let mut function = function.clone();
        async move { tower::Service::call(&mut function, request).await }
    });
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let address = listener.local_addr().unwrap();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = serve::Options::default().protocol(serve::Protocol::Http2);
    tokio::spawn(serve::serve(
        listener,
        counting,
        async {
            stopped.await.ok();
        },
        options,
    ));

    let runner = GrpcRunner::new(address);
    for _ in 0..2 {
        let response = runner.run("old", request(1), in_seconds(10)).await.unwrap();
        assert_eq!(response.desired.unwrap().resources.len(), 1);
    }
    let v1 = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";
    let v1beta1 = "/apiextensions.fn.proto.v1beta1.FunctionRunnerService/RunFunction";
    assert_eq!(*paths.lock().unwrap(), [v1, v1beta1, v1, v1beta1]);
}

/// A raw HTTP/2 server that answers every request with what `respond` makes of a gRPC
/// response's head (`content-type: application/grpc`).
async fn raw_grpc_server(
    respond: impl Fn(http::response::Builder) -> http::Response<BoxBody<bytes::Bytes, Infallible>>
    + Clone
    + Send
    + Sync
    + 'static,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let address = listener.local_addr().unwrap();
    let service = tower::service_fn(move |_request: http::Request<hyper::body::Incoming>| {
        let response =
            respond(http::Response::builder().header("content-type", "application/grpc"));
        async move { Ok::<_, Infallible>(response) }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = serve::Options::default().protocol(serve::Protocol::Http2);
    tokio::spawn(serve::serve(
        listener,
        service,
        async {
            stopped.await.ok();
        },
        options,
    ));
    (address, stop)
}

/// A raw HTTP/2 server that answers every request with `body` as a gRPC response.
async fn raw_server(body: &'static [u8]) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    raw_grpc_server(move |response| {
        response
            .body(Full::new(bytes::Bytes::from_static(body)).boxed())
            .unwrap()
    })
    .await
}

/// What the runner makes of the answer of the function at `address` to one request.
async fn garbage_error(address: SocketAddr) -> FunctionError {
    GrpcRunner::new(address)
        .run("garbage", request(1), in_seconds(10))
        .await
        .unwrap_err()
}

/// The code and message of a [`FunctionError::Status`].
fn status_of(error: &FunctionError) -> (tonic::Code, &str) {
    let FunctionError::Status { status, .. } = error else {
        panic!("{error:?}")
    };
    (status.code(), status.message())
}

#[tokio::test]
async fn a_garbage_message_in_a_valid_frame_is_a_malformed_response_not_a_panic() {
    // Frame: uncompressed, 3 bytes; message: field 1 (LEN) claiming 100 bytes.
    let (address, _stop) = raw_server(&[0, 0, 0, 0, 3, 0x0a, 100, 0]).await;
    let error = garbage_error(address).await;
    assert!(
        matches!(error, FunctionError::MalformedResponse { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "function \"garbage\" answered with a malformed RunFunctionResponse"
    );
}

#[tokio::test]
async fn garbage_bytes_that_are_not_even_a_grpc_frame_are_an_error_not_a_panic() {
    let (address, _stop) = raw_server(b"<html>not grpc</html>").await;
    let error = garbage_error(address).await;
    assert!(
        matches!(
            error,
            FunctionError::Status { .. }
                | FunctionError::MessageTooLarge { .. }
                | FunctionError::MalformedResponse { .. }
        ),
        "{error:?}"
    );
}

/// A raw HTTP/2 server that answers every request with `headers` and no body.
async fn raw_headers_server(
    headers: &'static [(&'static str, &'static str)],
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    raw_grpc_server(move |mut response| {
        for (name, value) in headers {
            response = response.header(*name, *value);
        }
        response
            .body(Full::new(bytes::Bytes::new()).boxed())
            .unwrap()
    })
    .await
}

#[tokio::test]
async fn status_details_that_are_not_base64_are_an_error_status_not_a_panic() {
    let (address, _stop) = raw_headers_server(&[
        ("grpc-status", "13"),
        ("grpc-message", "boom"),
        ("grpc-status-details-bin", "!!not base64!!"),
    ])
    .await;
    let error = garbage_error(address).await;
    assert_eq!(status_of(&error), (tonic::Code::Internal, "boom"));
}

#[tokio::test]
async fn status_details_in_trailers_that_are_not_base64_are_an_error_status_not_a_panic() {
    let (address, _stop) =
        raw_grpc_server(|response| {
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("14"));
            trailers.insert("grpc-message", http::HeaderValue::from_static("gone"));
            trailers.insert(
                "grpc-status-details-bin",
                http::HeaderValue::from_static("@@@"),
            );
            let body = Full::new(bytes::Bytes::new())
                .with_trailers(std::future::ready(Some(Ok::<_, Infallible>(trailers))));
            response.body(body.boxed()).unwrap()
        })
        .await;
    let error = garbage_error(address).await;
    assert_eq!(status_of(&error), (tonic::Code::Unavailable, "gone"));
}

#[tokio::test]
async fn waiting_for_a_down_function_is_one_call_that_ends_deadline_exceeded_in_the_metrics() {
    let metrics = std::sync::Arc::new(composer::function::FunctionMetrics::new());
    let runner = GrpcRunner::new(free_port()).metrics(metrics.clone());
    let deadline = Instant::now() + Duration::from_millis(1200);
    runner.run("down", request(1), deadline).await.unwrap_err();
    assert_eq!(metrics.requests("down"), 1);
    let responses = metrics.responses();
    let [(labels, count)] = responses.iter().collect::<Vec<_>>()[..] else {
        panic!("{responses:?}")
    };
    assert_eq!(
        (labels.code, labels.severity, count.count),
        ("DeadlineExceeded", "Normal", 1)
    );
    assert!(count.seconds >= 1.2, "{count:?}");
}
