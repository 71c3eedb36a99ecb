//! Reading a request body, up to [`MAX_BODY`] bytes.

use bytes::Bytes;
use http::{StatusCode, header};
use http_body::Body;
use http_body_util::{BodyExt, Limited};

/// The error type request bodies may have.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The most bytes a request body may have.
pub const MAX_BODY: usize = 1 << 20;

/// Reads a body of at most [`MAX_BODY`] bytes: 413 if longer, 400 if it breaks off.
pub(crate) async fn read_body<B>(body: B, headers: &http::HeaderMap) -> Result<Bytes, StatusCode>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(StatusCode::PAYLOAD_TOO_LARGE);
    }
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            Err(StatusCode::PAYLOAD_TOO_LARGE)
        }
        Err(_) => Err(StatusCode::BAD_REQUEST),
    }
}
