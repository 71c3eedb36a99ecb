//! AWS errors and their envelopes, one per protocol, with the request-id headers each
//! service sends. The errors every protocol shares (authentication, throttling, bad input)
//! are `Protocol`'s, in `aws/protocol_errors.rs`.
//!
//! # Envelopes
//! - restXml (S3): `<?xml …?><Error><Code/><Message/>…<RequestId/><HostId/></Error>`,
//!   `application/xml`, headers `x-amz-request-id` and `x-amz-id-2`; a `HEAD` gets no body.
//! - awsQuery (STS): `<ErrorResponse xmlns=…><Error><Type>Sender|Receiver</Type><Code/>
//!   <Message/></Error><RequestId/></ErrorResponse>`, `text/xml`, header `x-amzn-RequestId`.
//! - ec2Query: `<Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>
//!   </Response>`, `text/xml;charset=UTF-8`.
//! - awsJson1_0: `{"__type": "<prefix>#Code", "message": …}`,
//!   `application/x-amz-json-1.0`, headers `x-amzn-RequestId` and `x-amzn-ErrorType`.
//!
//! DynamoDB adds `x-amz-crc32` (the CRC32 of the body, in decimal) to every answer,
//! errors included.

use std::borrow::Cow;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::Full;

use super::xml::escape;
use crate::http::respond::ResponseBody;
use crate::service::{Protocol, Service};

/// An AWS error, before it is put in its service's envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AwsError {
    pub status: StatusCode,
    pub code: Cow<'static, str>,
    pub message: Cow<'static, str>,
    /// Extra elements of an S3 error body, such as `<BucketName>`, in order.
    pub fields: Vec<(&'static str, String)>,
    /// For a throttle: the wait, sent as `x-amz-retry-after` (milliseconds) when enabled.
    pub retry_after: Option<Duration>,
    /// A per-resource retry hint: always sent, as `Retry-After` (whole seconds, rounded up)
    /// and `x-amz-retry-after` (milliseconds).
    pub hint: Option<Duration>,
}

impl AwsError {
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> AwsError {
        AwsError {
            status,
            code: code.into(),
            message: message.into(),
            fields: Vec::new(),
            retry_after: None,
            hint: None,
        }
    }

    /// Adds an element to an S3 error body.
    #[must_use]
    pub fn with_field(mut self, name: &'static str, value: impl Into<String>) -> AwsError {
        self.fields.push((name, value.into()));
        self
    }
}

/// Where an error or an answer goes: the service (for the awsQuery namespace and the JSON
/// type prefix), whether the request was a `HEAD`, and its request ID.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reply<'a> {
    pub service: Service,
    pub protocol: Protocol,
    pub head: bool,
    pub request_id: &'a RequestId,
}

/// A request's ID in the shapes services print it, kept as the header values it is sent
/// as (built on the stack, one allocation each).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestId {
    /// S3: 16 upper-case hex digits; others: a UUID.
    id: HeaderValue,
    /// S3's `x-amz-id-2` (the host ID); empty for the other protocols.
    host_id: HeaderValue,
}

impl RequestId {
    /// The ID of the `n`-th request, scrambled so that IDs look like AWS's but repeat for
    /// a seed.
    pub fn new(protocol: Protocol, n: u64) -> RequestId {
        const UPPER: &[u8; 16] = b"0123456789ABCDEF";
        const LOWER: &[u8; 16] = b"0123456789abcdef";
        /// Writes the low `digits` hex digits of `x` into `out`, most significant first.
        fn hex(out: &mut [u8], x: u64, table: &[u8; 16]) {
            let n = out.len();
            for (i, b) in out.iter_mut().enumerate() {
                *b = table[((x >> (4 * (n - 1 - i))) & 15) as usize];
            }
        }
        let a = mix(n);
        let b = mix(a ^ 0x5DEE_CE66);
        match protocol {
            Protocol::RestXml => {
                let mut id = [0u8; 16];
                hex(&mut id, a, UPPER);
                let mut raw = [0u8; 48];
                let mut x = b;
                for chunk in raw.chunks_mut(8) {
                    x = mix(x);
                    chunk.copy_from_slice(&x.to_le_bytes());
                }
                let mut host_id = [0u8; 64];
                let written = base64::engine::general_purpose::STANDARD
                    .encode_slice(raw, &mut host_id)
                    .unwrap_or(0);
                RequestId {
                    id: header_value(&id),
                    host_id: header_value(&host_id[..written]),
                }
            }
            _ => {
                // xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx
                let mut id = *b"00000000-0000-4000-0000-000000000000";
                hex(&mut id[0..8], a >> 32, LOWER);
                hex(&mut id[9..13], (a >> 16) & 0xffff, LOWER);
                hex(&mut id[15..18], a & 0xfff, LOWER);
                hex(&mut id[19..23], 0x8000 | (b >> 48 & 0x3fff), LOWER);
                hex(&mut id[24..36], b & 0xffff_ffff_ffff, LOWER);
                RequestId {
                    id: header_value(&id),
                    host_id: HeaderValue::from_static(""),
                }
            }
        }
    }

    /// The ID, as the protocol prints it.
    pub fn id(&self) -> &str {
        self.id.to_str().unwrap_or_default()
    }

    /// S3's host ID (`x-amz-id-2`); empty for the other protocols.
    pub fn host_id(&self) -> &str {
        self.host_id.to_str().unwrap_or_default()
    }
}

/// ASCII hex or base64 as a header value (always valid; empty if it were not).
fn header_value(ascii: &[u8]) -> HeaderValue {
    HeaderValue::from_bytes(ascii).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// SplitMix64's first output from the state `x`.
fn mix(x: u64) -> u64 {
    use rand_xoshiro::rand_core::{Rng as _, SeedableRng as _};
    rand_xoshiro::SplitMix64::seed_from_u64(x).next_u64()
}

/// A response with a body and the request-id headers of the protocol.
pub(crate) fn respond(
    reply: &Reply<'_>,
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<ResponseBody> {
    let body = if reply.head {
        Bytes::new()
    } else {
        body.into()
    };
    // DynamoDB sends the CRC32 of every answer's body, and the SDKs check it when present.
    let crc32 = (reply.service == Service::DynamoDb).then(|| crc32fast::hash(&body));
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if !content_type.is_empty() {
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    add_request_id(reply, headers);
    if let Some(crc32) = crc32 {
        headers.insert(X_AMZ_CRC32, HeaderValue::from(crc32));
    }
    response
}

/// DynamoDB's `x-amz-crc32`: the CRC32 (IEEE) of the body, in decimal.
const X_AMZ_CRC32: HeaderName = HeaderName::from_static("x-amz-crc32");

const X_AMZ_REQUEST_ID: HeaderName = HeaderName::from_static("x-amz-request-id");
const X_AMZ_ID_2: HeaderName = HeaderName::from_static("x-amz-id-2");
const X_AMZN_REQUESTID: HeaderName = HeaderName::from_static("x-amzn-requestid");

fn add_request_id(reply: &Reply<'_>, headers: &mut http::HeaderMap) {
    let id = &reply.request_id;
    match reply.protocol {
        Protocol::RestXml => {
            headers.insert(X_AMZ_REQUEST_ID, id.id.clone());
            headers.insert(X_AMZ_ID_2, id.host_id.clone());
        }
        Protocol::AwsQuery | Protocol::AwsJson1_0 | Protocol::Ec2Query => {
            headers.insert(X_AMZN_REQUESTID, id.id.clone());
        }
    }
}

/// An error in its service's envelope.
pub(crate) fn error(
    reply: &Reply<'_>,
    err: &AwsError,
    retry_after_header: bool,
) -> Response<ResponseBody> {
    let id = &reply.request_id;
    let (content_type, body) = match reply.protocol {
        Protocol::RestXml => {
            let mut body = String::with_capacity(256);
            body.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>");
            body.push_str(&escape(&err.code));
            body.push_str("</Code><Message>");
            body.push_str(&escape(&err.message));
            body.push_str("</Message>");
            for (name, value) in &err.fields {
                body.push_str(&format!("<{name}>{}</{name}>", escape(value)));
            }
            body.push_str(&format!(
                "<RequestId>{}</RequestId><HostId>{}</HostId></Error>",
                id.id(),
                id.host_id()
            ));
            ("application/xml", body)
        }
        Protocol::AwsQuery => {
            let kind = if err.status.is_server_error() {
                "Receiver"
            } else {
                "Sender"
            };
            let body = format!(
                "<ErrorResponse xmlns=\"{}\">\n  <Error>\n    <Type>{kind}</Type>\n    <Code>{}</Code>\n    <Message>{}</Message>\n  </Error>\n  <RequestId>{}</RequestId>\n</ErrorResponse>\n",
                reply.service.xml_namespace(),
                escape(&err.code),
                escape(&err.message),
                id.id()
            );
            ("text/xml", body)
        }
        Protocol::Ec2Query => {
            let body = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{}</Code><Message>{}</Message></Error></Errors><RequestID>{}</RequestID></Response>",
                escape(&err.code),
                escape(&err.message),
                id.id()
            );
            ("text/xml;charset=UTF-8", body)
        }
        Protocol::AwsJson1_0 => {
            let kind = match reply.service.json_type_prefix() {
                Some(prefix) => {
                    let namespace = coral_namespace(&err.code).unwrap_or(prefix);
                    format!("{namespace}#{}", err.code)
                }
                None => err.code.to_string(),
            };
            let body = serde_json::json!({"__type": kind, "message": err.message}).to_string();
            ("application/x-amz-json-1.0", body)
        }
    };
    let mut response = respond(reply, err.status, content_type, body);
    let headers = response.headers_mut();
    if reply.protocol == Protocol::AwsJson1_0
        && let Ok(value) = HeaderValue::from_str(&err.code)
    {
        headers.insert("x-amzn-errortype", value);
    }
    if retry_after_header && let Some(wait) = err.retry_after {
        let millis = u64::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
        headers.insert("x-amz-retry-after", HeaderValue::from(millis));
    }
    if let Some(hint) = err.hint {
        let millis = u64::try_from(hint.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
        headers.insert("x-amz-retry-after", HeaderValue::from(millis));
        headers.insert(
            http::header::RETRY_AFTER,
            HeaderValue::from(crate::quota::retry_after_secs(hint)),
        );
    }
    response
}

/// The namespace a namespacing JSON service (DynamoDB) writes before one of the errors
/// its framework (Coral) answers for every service, instead of the service's own prefix:
/// `com.amazon.coral.availability#ThrottlingException`,
/// `com.amazon.coral.validate#ValidationException`,
/// `com.amazon.coral.service#UnknownOperationException`, ….
fn coral_namespace(code: &str) -> Option<&'static str> {
    match code {
        "ThrottlingException" => Some("com.amazon.coral.availability"),
        "ValidationException" => Some("com.amazon.coral.validate"),
        "SerializationException"
        | "UnknownOperationException"
        | "UnrecognizedClientException"
        | "InvalidSignatureException"
        | "IncompleteSignatureException"
        | "MissingAuthenticationTokenException"
        | "ExpiredTokenException"
        | "AccessDeniedException"
        | "InternalFailure"
        | "ServiceUnavailable"
        | "MalformedInput"
        | "RequestEntityTooLarge" => Some("com.amazon.coral.service"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(response: Response<ResponseBody>) -> String {
        String::from_utf8(crate::http::respond::read_body(response).to_vec()).unwrap()
    }

    fn reply(service: Service, protocol: Protocol, id: &RequestId) -> Reply<'_> {
        Reply {
            service,
            protocol,
            head: false,
            request_id: id,
        }
    }

    #[test]
    fn every_protocol_throttles_with_a_code_the_sdks_classify_as_a_throttle() {
        // botocore's _THROTTLED_ERROR_CODES and the Rust SDK's THROTTLING_ERRORS.
        let throttling = [
            "Throttling",
            "ThrottlingException",
            "RequestLimitExceeded",
            "SlowDown",
        ];
        let expected = [
            (Protocol::RestXml, 503, "SlowDown"),
            (Protocol::Ec2Query, 503, "RequestLimitExceeded"),
            (Protocol::AwsQuery, 400, "Throttling"),
            (Protocol::AwsJson1_0, 400, "ThrottlingException"),
        ];
        for (protocol, status, code) in expected {
            let err = protocol.throttle(Duration::from_millis(1500));
            assert_eq!((err.status.as_u16(), err.code.as_ref()), (status, code));
            assert!(throttling.contains(&code));
        }
    }

    #[test]
    fn an_s3_error_is_an_xml_error_document_with_both_request_ids() {
        let id = RequestId::new(Protocol::RestXml, 7);
        assert_eq!(id.id().len(), 16);
        let err = AwsError::new(
            StatusCode::NOT_FOUND,
            "NoSuchBucket",
            "The specified bucket does not exist",
        )
        .with_field("BucketName", "a&b");
        let response = error(&reply(Service::S3, Protocol::RestXml, &id), &err, false);
        assert_eq!(response.status(), 404);
        assert_eq!(response.headers()["x-amz-request-id"], id.id());
        assert!(response.headers().contains_key("x-amz-id-2"));
        assert_eq!(
            body(response),
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>a&amp;b</BucketName><RequestId>{}</RequestId><HostId>{}</HostId></Error>",
                id.id(),
                id.host_id()
            )
        );
    }

    #[test]
    fn a_query_throttle_is_a_sender_error_with_the_retry_hint_when_asked() {
        let id = RequestId::new(Protocol::AwsQuery, 1);
        let err = Protocol::AwsQuery.throttle(Duration::from_micros(1500));
        let response = error(&reply(Service::Sts, Protocol::AwsQuery, &id), &err, true);
        assert_eq!(response.status(), 400);
        assert_eq!(response.headers()["x-amz-retry-after"], "2");
        assert_eq!(response.headers()["x-amzn-requestid"], id.id());
        let text = body(response);
        assert!(
            text.contains("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"),
            "{text}"
        );
        assert!(
            text.contains("<Type>Sender</Type>") && text.contains("<Code>Throttling</Code>"),
            "{text}"
        );
    }

    #[test]
    fn ec2_and_json_envelopes_have_their_own_shape() {
        let id = RequestId::new(Protocol::Ec2Query, 1);
        let err = Protocol::Ec2Query.throttle(Duration::from_secs(1));
        let text = body(error(
            &reply(Service::S3, Protocol::Ec2Query, &id),
            &err,
            false,
        ));
        assert!(text.contains("<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>"), "{text}");
        let err = Protocol::AwsJson1_0.throttle(Duration::from_secs(1));
        let response = error(&reply(Service::S3, Protocol::AwsJson1_0, &id), &err, false);
        assert_eq!(
            response.headers()["x-amzn-errortype"],
            "ThrottlingException"
        );
        assert!(!response.headers().contains_key("x-amz-retry-after"));
        let json: serde_json::Value = serde_json::from_str(&body(response)).unwrap();
        assert_eq!(json["__type"], "ThrottlingException");
    }

    #[test]
    fn a_head_error_has_no_body() {
        let id = RequestId::new(Protocol::RestXml, 1);
        let mut r = reply(Service::S3, Protocol::RestXml, &id);
        r.head = true;
        let err = AwsError::new(StatusCode::NOT_FOUND, "NoSuchBucket", "x");
        assert_eq!(body(error(&r, &err, false)), "");
    }
}
