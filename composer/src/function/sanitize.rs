//! Removes `grpc-status-details-bin` from a function's answer before tonic reads it: tonic
//! 0.14 panics on a value that is not base64 (`Status::from_header_map`), and a function's
//! answer must never panic its caller. Core reads no status details either.

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};

/// The header tonic would decode.
const STATUS_DETAILS: &str = "grpc-status-details-bin";

/// `response` without status details, in its headers or in its trailers.
pub(crate) fn without_status_details<B>(
    response: http::Response<B>,
) -> http::Response<WithoutStatusDetails<B>> {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(STATUS_DETAILS);
    http::Response::from_parts(parts, WithoutStatusDetails { inner: body })
}

pin_project_lite::pin_project! {
    /// A body whose trailers lose `grpc-status-details-bin`.
    pub(crate) struct WithoutStatusDetails<B> {
        #[pin]
        inner: B,
    }
}

impl<B: Body> Body for WithoutStatusDetails<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        self.project().inner.poll_frame(cx).map(|frame| {
            frame.map(|frame| {
                frame.map(|mut frame| {
                    if let Some(trailers) = frame.trailers_mut() {
                        trailers.remove(STATUS_DETAILS);
                    }
                    frame
                })
            })
        })
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
