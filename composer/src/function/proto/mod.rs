//! The messages of the composition-function protocol, `apiextensions.fn.proto.v1`.
//!
//! Written by hand from `proto/fn/v1/run_function.proto` in crossplane/crossplane (the same
//! file function-sdk-go and function-sdk-python vendor), with its field numbers, types and
//! enum values, so that no `protoc` is needed to build. Maps are `BTreeMap`s, so a message
//! always encodes to the same bytes. `v1beta1` has the same messages on the wire; only the
//! service's package differs ([`RUN_FUNCTION_V1BETA1`]).
//!
//! `google.protobuf.Duration` is [`prost_types`]'; `google.protobuf.Struct` is [`Struct`],
//! [`prost_types::Struct`] with an encoder linear in its size; the
//! [`crate::function::value`] module converts a `Struct` to and from `serde_json`.

mod linear;
mod request;
mod response;
mod state;

pub use linear::Struct;
pub use request::{
    Capability, CredentialData, Credentials, RequestMeta, Resources, RunFunctionRequest, Schema,
    credentials,
};
pub use response::{
    Condition, MatchLabels, Requirements, ResourceSelector, ResponseMeta, Result,
    RunFunctionResponse, SchemaSelector, Severity, Status, Target, resource_selector,
};
pub use state::{Ready, Resource, State};

use prost::Message;

/// The gRPC path of `FunctionRunnerService/RunFunction` in `apiextensions.fn.proto.v1`.
pub const RUN_FUNCTION_V1: &str = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction";

/// The same method in `apiextensions.fn.proto.v1beta1`, which core falls back to when a
/// function answers `Unimplemented` to v1.
pub const RUN_FUNCTION_V1BETA1: &str =
    "/apiextensions.fn.proto.v1beta1.FunctionRunnerService/RunFunction";

/// Decodes a `RunFunctionResponse` from its protobuf bytes (one gRPC message, without the
/// 5-byte frame header), with the same decoder the gRPC client's codec runs on every
/// answer: what a fuzz target should call.
///
/// # Errors
/// The bytes are not a valid `RunFunctionResponse`.
pub fn decode_response(
    bytes: &[u8],
) -> std::result::Result<RunFunctionResponse, prost::DecodeError> {
    RunFunctionResponse::decode(bytes)
}

/// Decodes a `RunFunctionRequest` from its protobuf bytes, with the same decoder the server's
/// codec runs on every request.
///
/// # Errors
/// The bytes are not a valid `RunFunctionRequest`.
pub fn decode_request(bytes: &[u8]) -> std::result::Result<RunFunctionRequest, prost::DecodeError> {
    RunFunctionRequest::decode(bytes)
}

#[cfg(test)]
mod tests;
