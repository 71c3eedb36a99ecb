//! The built-in function, shaped like function-patch-and-transform: resources from a
//! template per index, patched from the XR's spec, ready by the composed resource's `Ready`
//! condition. Its input is documented in [`input`].
//!
//! # Semantics
//! - The response starts from the request, as function-sdk's `response.To` does: tag,
//!   desired state (so earlier steps' resources survive) and context pass through.
//! - Template `name` with count n composes `name-0` … `name-(n-1)`; `countFromFieldPath`
//!   in the XR, when present, overrides `count`.
//! - Each patch copies the XR's value at `fromFieldPath` to `toFieldPath`; a missing source
//!   is skipped (patch-and-transform's default `Optional` policy).
//! - Each composed resource is `READY_TRUE` when its observed counterpart has the matching
//!   condition, else `READY_FALSE` (not yet observed included); `None` is always ready.
//! - `meta.ttl` is the input's `ttl`, or unset.
//! - The names composed are listed in the context under [`CONTEXT_KEY`], for later steps.
//! - Bad input, a count that is not a non-negative integer, or a patch that cannot be
//!   written answers a FATAL result (and the request's desired state), never a gRPC error.

mod compose;
pub mod fieldpath;
pub mod input;

pub use compose::{CONTEXT_KEY, ComposeError, compose};
pub use input::{API_VERSION, Input, InputError, KIND};

use provider::reconciler::conditions::error_chain;

use super::proto::{RunFunctionRequest, RunFunctionResponse};
use super::response;
use super::runner::BoxFuture;
use super::service::Function;
use super::value::from_struct;

/// The built-in function.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resources;

impl Resources {
    /// Runs the function (synchronously: it does no IO).
    #[must_use]
    pub fn run(request: RunFunctionRequest) -> RunFunctionResponse {
        let input = request.input.as_ref().map(from_struct);
        let result = Input::from_json(input)
            .map_err(|e| error_chain(&e))
            .and_then(|input| compose(&input, &request).map_err(|e| error_chain(&e)));
        match result {
            Ok(response) => response,
            Err(message) => {
                tracing::debug!(%message, "refusing the request");
                response::fatal(request, &message)
            }
        }
    }
}

impl Function for Resources {
    fn run_function(
        &self,
        request: RunFunctionRequest,
    ) -> BoxFuture<'_, Result<RunFunctionResponse, tonic::Status>> {
        Box::pin(std::future::ready(Ok(Resources::run(request))))
    }
}

#[cfg(test)]
mod tests;
