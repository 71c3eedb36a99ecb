//! [`FunctionError`]: why a call to a function produced no response.

use std::fmt;
use std::time::Duration;

/// A boxed error, as a connection attempt's cause.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a call to a composition function produced no `RunFunctionResponse`.
///
/// A response with a FATAL result is not an error here: it is an answer, and the pipeline
/// decides what it means ([`crate::function::pipeline`]).
#[derive(Debug, thiserror::Error)]
pub enum FunctionError {
    /// The caller's deadline passed before an answer came: the function was down (with
    /// wait-for-ready, the call waits for it) or slow.
    #[error("function {function:?} did not answer before the deadline, {waited:?} after the call")]
    DeadlineExceeded {
        /// The function's name.
        function: String,
        /// How long the call waited.
        waited: Duration,
        /// The last failed connection attempt, when the function was never reached.
        #[source]
        last_connect_error: Option<BoxError>,
    },
    /// No connection could be made, and the runner does not wait for the function to be
    /// ready.
    #[error("function {function:?} is unreachable at {address}")]
    Unreachable {
        /// The function's name.
        function: String,
        /// Where it was called.
        address: String,
        /// Why the connection failed.
        #[source]
        source: BoxError,
    },
    /// The function (or the transport) answered with a gRPC status other than OK.
    #[error("function {function:?} failed")]
    Status {
        /// The function's name.
        function: String,
        /// The status, with its code and message.
        #[source]
        status: tonic::Status,
    },
    /// A message exceeded a size limit: the response the client would accept, or the
    /// request the client or the server would accept.
    #[error("function {function:?}: the {direction} exceeds the message size limit")]
    MessageTooLarge {
        /// The function's name.
        function: String,
        /// Which message was too large.
        direction: Direction,
        /// The status that reports the sizes.
        #[source]
        status: tonic::Status,
    },
    /// The answer was a gRPC message, but not a `RunFunctionResponse`.
    #[error("function {function:?} answered with a malformed RunFunctionResponse")]
    MalformedResponse {
        /// The function's name.
        function: String,
        /// What the decoder found.
        #[source]
        source: prost::DecodeError,
    },
    /// No runner serves a function of this name.
    #[error("no function named {function:?}")]
    UnknownFunction {
        /// The name asked for.
        function: String,
    },
}

/// Which way a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `RunFunctionRequest`, to the function.
    Request,
    /// `RunFunctionResponse`, from the function.
    Response,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Request => "request",
            Direction::Response => "response",
        })
    }
}

impl FunctionError {
    /// Classifies a status the gRPC client returned. `from_server` says the server sent it
    /// in place of an answer (a trailers-only response): there, `RESOURCE_EXHAUSTED` (grpc-go's
    /// and grpc-python's receive limit) and tonic's "decoded message length too large" mean
    /// our request was too large. Otherwise the status arose in our client: tonic's size
    /// checks are [`FunctionError::MessageTooLarge`] (the answer when decoding, the request
    /// when encoding) and a decoding failure is [`FunctionError::MalformedResponse`]. The
    /// rest is [`FunctionError::Status`].
    pub(crate) fn from_status(
        function: &str,
        status: tonic::Status,
        from_server: bool,
    ) -> FunctionError {
        let function = function.to_owned();
        let message = status.message();
        let decoded_too_large = status.code() == tonic::Code::OutOfRange
            && message.starts_with("Error, decoded message length too large");
        let direction = if from_server {
            (decoded_too_large || status.code() == tonic::Code::ResourceExhausted)
                .then_some(Direction::Request)
        } else if let Some(decode) = status
            .source()
            .and_then(|e| e.downcast_ref::<prost::DecodeError>())
        {
            return FunctionError::MalformedResponse {
                function,
                source: decode.clone(),
            };
        } else if decoded_too_large {
            Some(Direction::Response)
        } else if status.code() == tonic::Code::OutOfRange
            && message.starts_with("Error, encoded message length too large")
        {
            Some(Direction::Request)
        } else {
            None
        };
        match direction {
            Some(direction) => FunctionError::MessageTooLarge {
                function,
                direction,
                status,
            },
            None => FunctionError::Status { function, status },
        }
    }

    /// The function's name.
    #[must_use]
    pub fn function(&self) -> &str {
        match self {
            FunctionError::DeadlineExceeded { function, .. }
            | FunctionError::Unreachable { function, .. }
            | FunctionError::Status { function, .. }
            | FunctionError::MessageTooLarge { function, .. }
            | FunctionError::MalformedResponse { function, .. }
            | FunctionError::UnknownFunction { function } => function,
        }
    }
}

use std::error::Error as _;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    const DECODED: &str =
        "Error, decoded message length too large: found 5000000 bytes, the limit is: 4194304 bytes";
    const ENCODED: &str =
        "Error, encoded message length too large: found 5000000 bytes, the limit is: 4194304 bytes";

    fn classify(status: tonic::Status, from_server: bool) -> FunctionError {
        FunctionError::from_status("f", status, from_server)
    }

    #[test]
    fn our_own_size_checks_name_the_message_that_was_too_large() {
        let error = classify(tonic::Status::out_of_range(DECODED), false);
        assert!(matches!(
            error,
            FunctionError::MessageTooLarge {
                direction: Direction::Response,
                ..
            }
        ));
        let error = classify(tonic::Status::out_of_range(ENCODED), false);
        assert!(matches!(
            error,
            FunctionError::MessageTooLarge {
                direction: Direction::Request,
                ..
            }
        ));
    }

    #[test]
    fn a_server_that_refused_our_request_means_the_request_was_too_large() {
        // tonic's server, and grpc-go's or grpc-python's.
        let tonic_server = classify(tonic::Status::out_of_range(DECODED), true);
        assert!(matches!(
            tonic_server,
            FunctionError::MessageTooLarge {
                direction: Direction::Request,
                ..
            }
        ));
        let go_server = classify(
            tonic::Status::resource_exhausted("grpc: received message larger than max"),
            true,
        );
        assert!(matches!(
            go_server,
            FunctionError::MessageTooLarge {
                direction: Direction::Request,
                ..
            }
        ));
    }

    #[test]
    fn a_decoding_failure_here_is_a_malformed_response_and_the_rest_is_a_status() {
        let mut status = tonic::Status::internal("malformed RunFunctionResponse");
        let decode_error = crate::function::decode_response(&[0x0f]).unwrap_err();
        status.set_source(Arc::new(decode_error));
        assert!(matches!(
            classify(status, false),
            FunctionError::MalformedResponse { .. }
        ));
        let error = classify(tonic::Status::unavailable("restarting"), false);
        assert!(matches!(error, FunctionError::Status { .. }));
        assert_eq!(error.to_string(), "function \"f\" failed");
        assert_eq!(
            std::error::Error::source(&error).unwrap().to_string(),
            tonic::Status::unavailable("restarting").to_string()
        );
        // A server's OUT_OF_RANGE that is not about sizes stays a status.
        assert!(matches!(
            classify(tonic::Status::out_of_range("page 9"), true),
            FunctionError::Status { .. }
        ));
    }
}
