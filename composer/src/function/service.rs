//! [`Function`], what a composition function implements, and [`FunctionService`], the
//! gRPC service that serves one: a tower `Service` of HTTP requests, with no socket, so that
//! the same service answers over loopback ([`crate::function::FunctionServer`]) and in
//! process ([`crate::function::InProcessRunner`]).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::server::Grpc;
use tracing::Instrument;

use super::codec::ProtoCodec;
use super::error::BoxError;
use super::proto::{
    RUN_FUNCTION_V1, RUN_FUNCTION_V1BETA1, RunFunctionRequest, RunFunctionResponse,
};
use super::runner::{BoxFuture, MAX_MESSAGE_SIZE};

/// A composition function: `FunctionRunnerService`'s one method.
///
/// An error is a gRPC status, which a real function returns only when it cannot answer at
/// all; a function that rejects its input answers with a FATAL result instead.
pub trait Function: Send + Sync + 'static {
    /// Runs the function on one request.
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>>;
}

impl<F: Function + ?Sized> Function for Arc<F> {
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>> {
        (**self).run_function(request)
    }
}

/// A [`Function`] from an async closure, for tests and small functions.
pub struct FnFunction<F>(pub F);

impl<F, Fut> Function for FnFunction<F>
where
    F: Fn(RunFunctionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<RunFunctionResponse, tonic::Status>> + Send + 'static,
{
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>> {
        Box::pin((self.0)(request))
    }
}

/// Serves a [`Function`] as gRPC's `FunctionRunnerService/RunFunction`.
///
/// # Semantics
/// - Both `apiextensions.fn.proto.v1` and `v1beta1` are served, as function-sdk-go and
///   function-sdk-python serve them, unless [`FunctionService::v1beta1_only`] says
///   otherwise (a function built before v1, to test a caller's fallback).
/// - Requests over [`MAX_MESSAGE_SIZE`] are refused with `OUT_OF_RANGE`, as the SDKs'
///   4 MiB receive limit refuses them; responses are not limited here (a Go server's send
///   limit is 2 GiB): the client's receive limit is the one that applies.
/// - Any other path is `UNIMPLEMENTED`.
pub struct FunctionService<F: ?Sized> {
    function: Arc<F>,
    v1: bool,
    max_request_size: usize,
}

impl<F: ?Sized> Clone for FunctionService<F> {
    fn clone(&self) -> Self {
        FunctionService {
            function: self.function.clone(),
            v1: self.v1,
            max_request_size: self.max_request_size,
        }
    }
}

impl<F: Function> FunctionService<F> {
    /// Serves `function`.
    pub fn new(function: F) -> Self {
        FunctionService::from_arc(Arc::new(function))
    }
}

impl<F: Function + ?Sized> FunctionService<F> {
    /// Serves a shared `function`.
    pub fn from_arc(function: Arc<F>) -> Self {
        FunctionService {
            function,
            v1: true,
            max_request_size: MAX_MESSAGE_SIZE,
        }
    }

    /// Answers only `v1beta1`, and `UNIMPLEMENTED` to v1.
    #[must_use]
    pub fn v1beta1_only(mut self) -> Self {
        self.v1 = false;
        self
    }

    /// Refuses requests larger than `bytes` (default [`MAX_MESSAGE_SIZE`]).
    #[must_use]
    pub fn max_request_size(mut self, bytes: usize) -> Self {
        self.max_request_size = bytes;
        self
    }

    /// The same service with its function behind `dyn Function`: what
    /// [`FunctionServer`](super::FunctionServer) runs, so that the server's HTTP/2 and gRPC
    /// code is compiled once, in this crate, rather than in every crate that serves a
    /// function of its own type.
    pub(crate) fn into_dyn(self) -> FunctionService<dyn Function> {
        let function: Arc<dyn Function> = Arc::new(self.function);
        FunctionService {
            function,
            v1: self.v1,
            max_request_size: self.max_request_size,
        }
    }
}

impl<F, B> tower::Service<http::Request<B>> for FunctionService<F>
where
    F: Function + ?Sized,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError> + Send,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let path = request.uri().path();
        let served = (self.v1 && path == RUN_FUNCTION_V1) || path == RUN_FUNCTION_V1BETA1;
        if !served {
            let status = tonic::Status::unimplemented(format!("unknown method {path}"));
            return Box::pin(async move { Ok(status.into_http()) });
        }
        let handler = Handler(self.function.clone());
        let mut grpc = Grpc::new(ProtoCodec::<RunFunctionResponse, RunFunctionRequest>::default())
            .max_decoding_message_size(self.max_request_size);
        Box::pin(async move { Ok(grpc.unary(handler, request).await) })
    }
}

/// One call, as tonic's server wants it.
struct Handler<F: ?Sized>(Arc<F>);

impl<F: Function + ?Sized> tower::Service<tonic::Request<RunFunctionRequest>> for Handler<F> {
    type Response = tonic::Response<RunFunctionResponse>;
    type Error = tonic::Status;
    type Future = BoxFuture<'static, Result<Self::Response, tonic::Status>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), tonic::Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: tonic::Request<RunFunctionRequest>) -> Self::Future {
        let function = self.0.clone();
        Box::pin(
            async move {
                function
                    .run_function(request.into_inner())
                    .await
                    .map(tonic::Response::new)
            }
            .instrument(tracing::debug_span!("run_function")),
        )
    }
}
