//! Building responses: JSON bodies, the error envelope and the flavors of throttle.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::Full;
use serde::Serialize;
use serde_json::json;

use crate::admin::{ErrorBody, ErrorDetail};
use crate::config::Flavor;
use crate::quota::{Budget, Layer, retry_after_secs};

/// `RateLimit-Limit`: the capacity of the request's bucket.
pub(crate) const RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("ratelimit-limit");
/// `RateLimit-Remaining`: the tokens left in it.
pub(crate) const RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("ratelimit-remaining");

/// The body of every response.
pub type ResponseBody = Full<Bytes>;

pub(crate) fn bytes(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<ResponseBody> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub(crate) fn json(status: StatusCode, value: &impl Serialize) -> Response<ResponseBody> {
    match serde_json::to_vec(value) {
        Ok(body) => bytes(status, "application/json", body),
        Err(err) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            &err.to_string(),
        ),
    }
}

/// The error envelope: `{"error":{"code":…,"message":…}}`.
pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response<ResponseBody> {
    json(status, &envelope(code, message, None))
}

/// A 400 naming the offending field.
pub(crate) fn bad_field(field: &str, message: &str) -> Response<ResponseBody> {
    let body = envelope("InvalidArgument", message, Some(field));
    json(StatusCode::BAD_REQUEST, &body)
}

fn envelope(code: &str, message: &str, field: Option<&str>) -> ErrorBody {
    ErrorBody {
        error: ErrorDetail {
            code: code.to_owned(),
            message: message.to_owned(),
            field: field.map(str::to_owned),
        },
    }
}

/// The answer to a body that could not be read: too large (413) or broken off (400).
pub(crate) fn body_error(status: StatusCode) -> Response<ResponseBody> {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        let message = format!(
            "the request body must be at most {} bytes",
            super::body::MAX_BODY
        );
        error(status, "PayloadTooLarge", &message)
    } else {
        bad_field("body", "the request body could not be read")
    }
}

pub(crate) fn method_not_allowed(allow: &'static str) -> Response<ResponseBody> {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        &format!("allowed methods: {allow}"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

pub(crate) fn add_budget(response: &mut Response<ResponseBody>, budget: Budget) {
    let headers = response.headers_mut();
    headers.insert(RATELIMIT_LIMIT, HeaderValue::from(budget.limit));
    headers.insert(RATELIMIT_REMAINING, HeaderValue::from(budget.remaining));
}

/// The answer to a rate-quota throttle, in the configured flavor.
pub(crate) fn throttled(
    flavor: Flavor,
    layer: Layer,
    budget: Budget,
    wait: std::time::Duration,
) -> Response<ResponseBody> {
    let secs = retry_after_secs(wait);
    let millis = u64::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
    let mut response = match flavor {
        Flavor::Generic => json(
            StatusCode::TOO_MANY_REQUESTS,
            &json!({"error": {
                "code": "TooManyRequests",
                "message": format!("rate quota {} exceeded; retry after {secs} s", layer.name()),
                "layer": layer.name(),
                "retry_after_s": secs,
            }}),
        ),
        Flavor::AwsJson => {
            let mut r = json(
                StatusCode::BAD_REQUEST,
                &json!({"__type": "ThrottlingException", "message": "Rate exceeded"}),
            );
            r.headers_mut().insert(
                "x-amzn-errortype",
                HeaderValue::from_static("ThrottlingException"),
            );
            r
        }
        Flavor::AwsEc2 => bytes(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/xml",
            "<Response><Errors><Error><Code>RequestLimitExceeded</Code>\
             <Message>Request limit exceeded.</Message></Error></Errors></Response>",
        ),
    };
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    if flavor != Flavor::Generic {
        headers.insert("x-amz-retry-after", HeaderValue::from(millis));
    }
    add_budget(&mut response, budget);
    response
}

/// The answer to a count-quota rejection: distinct from a throttle and not retryable.
pub(crate) fn quota_exceeded(
    flavor: Flavor,
    collection: &str,
    limit: u32,
) -> Response<ResponseBody> {
    let message = format!("count quota of {limit} {collection} reached");
    match flavor {
        Flavor::Generic => json(
            StatusCode::FORBIDDEN,
            &json!({"error": {"code": "QuotaExceeded", "message": message, "limit": limit}}),
        ),
        Flavor::AwsJson => json(
            StatusCode::BAD_REQUEST,
            &json!({"__type": "LimitExceededException", "message": message}),
        ),
        Flavor::AwsEc2 => bytes(
            StatusCode::BAD_REQUEST,
            "text/xml",
            format!(
                "<Response><Errors><Error><Code>ResourceLimitExceeded</Code>\
                 <Message>{message}</Message></Error></Errors></Response>"
            ),
        ),
    }
}

/// The body of `response`, read to its end.
#[cfg(test)]
pub(crate) fn read_body(response: Response<ResponseBody>) -> Bytes {
    use http_body_util::BodyExt;
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(response.into_body().collect())
        .unwrap()
        .to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Class;
    use std::time::Duration;

    fn header(r: &Response<ResponseBody>, name: &str) -> String {
        r.headers()[name].to_str().unwrap().to_owned()
    }

    #[test]
    fn a_generic_throttle_is_a_429_with_retry_after_rounded_up_and_ratelimit_headers() {
        let budget = Budget {
            limit: 100,
            remaining: 0,
        };
        let r = throttled(
            Flavor::Generic,
            Layer::Class(Class::Read),
            budget,
            Duration::from_millis(1200),
        );
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(header(&r, "retry-after"), "2");
        assert_eq!(header(&r, "ratelimit-limit"), "100");
        assert_eq!(header(&r, "ratelimit-remaining"), "0");
    }

    #[test]
    fn aws_flavors_use_their_status_and_millisecond_hint() {
        let budget = Budget {
            limit: 5,
            remaining: 0,
        };
        let wait = Duration::from_micros(1500);
        let json = throttled(Flavor::AwsJson, Layer::Account, budget, wait);
        assert_eq!(json.status(), StatusCode::BAD_REQUEST);
        assert_eq!(header(&json, "x-amz-retry-after"), "2");
        let ec2 = throttled(Flavor::AwsEc2, Layer::Account, budget, wait);
        assert_eq!(ec2.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            quota_exceeded(Flavor::Generic, "buckets", 1).status(),
            StatusCode::FORBIDDEN
        );
    }
}
