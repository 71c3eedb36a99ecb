//! Building responses: JSON bodies, watch streams and `Status` errors. A leaf: the service
//! and the handlers both build their answers here.

use std::convert::Infallible;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::{HeaderValue, Response, StatusCode, header};
use http_body::Frame;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::Value;

use crate::error::ApiError;

/// The body of every response: a full buffer, or a stream for watches.
pub type ResponseBody = UnsyncBoxBody<Bytes, Infallible>;

/// A response with `code`, `body` and `content_type`.
pub fn bytes_response(
    code: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(body).boxed_unsync());
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A JSON response with `code`.
pub fn json_response(code: StatusCode, body: Bytes) -> Response<ResponseBody> {
    bytes_response(code, "application/json", body)
}

/// A JSON response with `code`, serializing `value`.
pub fn value_response(code: StatusCode, value: &Value) -> Response<ResponseBody> {
    json_response(
        code,
        Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
    )
}

/// A 200 chunked stream (a watch) of `content_type`.
pub fn stream_response(
    content_type: &'static str,
    stream: impl Stream<Item = Bytes> + Send + 'static,
) -> Response<ResponseBody> {
    let body = StreamBody::new(stream.map(|chunk| Ok::<_, Infallible>(Frame::data(chunk))));
    let mut response = Response::new(BodyExt::boxed_unsync(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The `Status` response for an error, with `Retry-After` for a 429.
pub fn error_response(error: &ApiError) -> Response<ResponseBody> {
    let code = StatusCode::from_u16(error.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = value_response(code, &error.to_status());
    if let ApiError::TooManyRequests { retry_after_secs } = error {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
    }
    response
}

/// Adds one `Warning: 299 - "TEXT"` header per warning, as the real server does.
pub fn with_warnings(
    mut response: Response<ResponseBody>,
    warnings: &[String],
) -> Response<ResponseBody> {
    for warning in warnings {
        let quoted = Value::from(warning.as_str()).to_string();
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {quoted}")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}
