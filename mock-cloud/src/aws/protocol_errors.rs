//! The errors every AWS protocol has (throttling, authentication, bad input, faults), each
//! with the code and status that protocol's services answer, put in its envelope by
//! [`super::envelope::error`].

use std::time::Duration;

use http::StatusCode;

use super::envelope::AwsError;
use crate::service::Protocol;

/// An error's status, code and message in one protocol.
type Shape = (StatusCode, &'static str, &'static str);

const BAD_REQUEST: StatusCode = StatusCode::BAD_REQUEST;
const UNAUTHORIZED: StatusCode = StatusCode::UNAUTHORIZED;
const FORBIDDEN: StatusCode = StatusCode::FORBIDDEN;
const SERVICE_UNAVAILABLE: StatusCode = StatusCode::SERVICE_UNAVAILABLE;

/// Messages more than one protocol answers.
const NOT_VALIDATED: &str = "AWS was not able to validate the provided access credentials";
const INVALID_TOKEN: &str = "The security token included in the request is invalid.";
const EXPIRED_TOKEN: &str = "The security token included in the request is expired";
const MISSING_TOKEN: &str = "Request is missing Authentication Token";

/// The errors every protocol has, each as that protocol's services answer it.
impl Protocol {
    /// This protocol's error of `shapes`, which are in the order restXml, ec2Query,
    /// awsQuery, awsJson1.0.
    fn shaped(self, shapes: [Shape; 4]) -> AwsError {
        let (status, code, message) = shapes[match self {
            Protocol::RestXml => 0,
            Protocol::Ec2Query => 1,
            Protocol::AwsQuery => 2,
            Protocol::AwsJson1_0 => 3,
        }];
        AwsError::new(status, code, message)
    }

    /// A rate-quota throttle: S3 503 `SlowDown`, EC2 503 `RequestLimitExceeded`, awsQuery
    /// 400 `Throttling`, JSON 400 `ThrottlingException`. Every one is in botocore's and
    /// the Rust SDK's list of throttling codes.
    pub(crate) fn throttle(self, wait: Duration) -> AwsError {
        let mut err = self.shaped([
            (
                SERVICE_UNAVAILABLE,
                "SlowDown",
                "Please reduce your request rate.",
            ),
            (
                SERVICE_UNAVAILABLE,
                "RequestLimitExceeded",
                "Request limit exceeded.",
            ),
            (BAD_REQUEST, "Throttling", "Rate exceeded"),
            (BAD_REQUEST, "ThrottlingException", "Rate exceeded"),
        ]);
        err.retry_after = Some(wait);
        err
    }

    /// An access key ID that no account has.
    pub(crate) fn unknown_access_key(self, access_key: &str) -> AwsError {
        let err = self.shaped([
            (
                FORBIDDEN,
                "InvalidAccessKeyId",
                "The AWS Access Key Id you provided does not exist in our records.",
            ),
            (UNAUTHORIZED, "AuthFailure", NOT_VALIDATED),
            (FORBIDDEN, "InvalidClientTokenId", INVALID_TOKEN),
            (BAD_REQUEST, "UnrecognizedClientException", INVALID_TOKEN),
        ]);
        if self == Protocol::RestXml {
            err.with_field("AWSAccessKeyId", access_key)
        } else {
            err
        }
    }

    /// A signature that does not match the one computed with the key's secret.
    pub(crate) fn signature_mismatch(
        self,
        access_key: &str,
        string_to_sign: &str,
        canonical: &str,
    ) -> AwsError {
        let message = match self {
            Protocol::RestXml => {
                "The request signature we calculated does not match the signature you provided. Check your key and signing method."
            }
            _ => {
                "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
            }
        };
        let (status, code) = match self {
            Protocol::Ec2Query => (StatusCode::UNAUTHORIZED, "AuthFailure"),
            Protocol::AwsJson1_0 => (StatusCode::BAD_REQUEST, "InvalidSignatureException"),
            Protocol::RestXml | Protocol::AwsQuery => {
                (StatusCode::FORBIDDEN, "SignatureDoesNotMatch")
            }
        };
        let mut err = AwsError::new(status, code, message);
        if self == Protocol::RestXml {
            err = err
                .with_field("AWSAccessKeyId", access_key)
                .with_field("StringToSign", string_to_sign)
                .with_field("CanonicalRequest", canonical);
        }
        err
    }

    /// A request time too far from the server's. S3 answers 403 `RequestTimeTooSkewed`;
    /// the query and JSON services answer a signature error whose message starts
    /// "Signature expired", which the SDKs read as clock skew.
    pub(crate) fn skewed(
        self,
        request_time: &str,
        server_time: &str,
        earliest: &str,
        max_skew: Duration,
    ) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::FORBIDDEN,
                "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large.",
            )
            .with_field("RequestTime", request_time)
            .with_field("ServerTime", server_time)
            .with_field(
                "MaxAllowedSkewMilliseconds",
                max_skew.as_millis().to_string(),
            ),
            Protocol::Ec2Query => AwsError::new(
                StatusCode::BAD_REQUEST,
                "RequestExpired",
                format!("Request has expired. Timestamp date is {request_time}"),
            ),
            Protocol::AwsQuery | Protocol::AwsJson1_0 => {
                let (status, code) = if self == Protocol::AwsQuery {
                    (StatusCode::FORBIDDEN, "SignatureDoesNotMatch")
                } else {
                    (StatusCode::BAD_REQUEST, "InvalidSignatureException")
                };
                let minutes = max_skew.as_secs() / 60;
                AwsError::new(
                    status,
                    code,
                    format!(
                        "Signature expired: {request_time} is now earlier than {earliest} ({server_time} - {minutes} min.)"
                    ),
                )
            }
        }
    }

    /// Temporary credentials past their expiry.
    pub(crate) fn expired_token(self) -> AwsError {
        self.shaped([
            (
                BAD_REQUEST,
                "ExpiredToken",
                "The provided token has expired.",
            ),
            (BAD_REQUEST, "RequestExpired", "Request has expired."),
            (FORBIDDEN, "ExpiredToken", EXPIRED_TOKEN),
            (BAD_REQUEST, "ExpiredTokenException", EXPIRED_TOKEN),
        ])
    }

    /// Temporary credentials without their session token, or with another one.
    pub(crate) fn invalid_token(self, access_key: &str) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidToken",
                "The provided token is malformed or otherwise invalid.",
            ),
            _ => self.unknown_access_key(access_key),
        }
    }

    /// A signature that cannot be read.
    pub(crate) fn malformed_auth(self, message: &str) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::BAD_REQUEST,
                "AuthorizationHeaderMalformed",
                format!("The authorization header is malformed; {message}"),
            ),
            Protocol::Ec2Query => {
                AwsError::new(StatusCode::UNAUTHORIZED, "AuthFailure", message.to_owned())
            }
            Protocol::AwsQuery => AwsError::new(
                StatusCode::BAD_REQUEST,
                "IncompleteSignature",
                message.to_owned(),
            ),
            Protocol::AwsJson1_0 => AwsError::new(
                StatusCode::BAD_REQUEST,
                "IncompleteSignatureException",
                message.to_owned(),
            ),
        }
    }

    /// A request signed with Signature Version 2, which S3 refuses in every region opened
    /// since 2014 with this answer.
    pub(crate) fn signature_v2(self) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidRequest",
                "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
            ),
            _ => self
                .malformed_auth("Signature Version 2 is not supported; sign with AWS4-HMAC-SHA256"),
        }
    }

    /// A presigned URL past its expiry (S3 403 `AccessDenied`).
    pub(crate) fn presigned_expired(self, expires: &str, server_time: &str) -> AwsError {
        match self {
            Protocol::RestXml => {
                AwsError::new(StatusCode::FORBIDDEN, "AccessDenied", "Request has expired")
                    .with_field("Expires", expires)
                    .with_field("ServerTime", server_time)
            }
            _ => self.skewed(expires, server_time, server_time, Duration::ZERO),
        }
    }

    /// No signature where one is needed.
    pub(crate) fn missing_auth(self) -> AwsError {
        self.shaped([
            (FORBIDDEN, "AccessDenied", "Access Denied"),
            (UNAUTHORIZED, "AuthFailure", NOT_VALIDATED),
            (FORBIDDEN, "MissingAuthenticationToken", MISSING_TOKEN),
            (
                BAD_REQUEST,
                "MissingAuthenticationTokenException",
                MISSING_TOKEN,
            ),
        ])
    }

    /// A body longer than the cloud reads ([`crate::MAX_BODY`]).
    pub(crate) fn too_large(self, max: usize) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                "Your proposed upload exceeds the maximum allowed size",
            )
            .with_field("MaxSizeAllowed", max.to_string()),
            _ => AwsError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                format!("Request body must be at most {max} bytes"),
            ),
        }
    }

    /// A body that broke off before its end.
    pub(crate) fn incomplete_body(self) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::BAD_REQUEST,
                "IncompleteBody",
                "You did not provide the number of bytes specified by the Content-Length HTTP header",
            ),
            _ => AwsError::new(
                StatusCode::BAD_REQUEST,
                "MalformedInput",
                "The request body could not be read",
            ),
        }
    }

    /// An operation the service does not have (or mock-cloud does not answer).
    pub(crate) fn unknown_operation(self, name: &str, version: &str) -> AwsError {
        match self {
            Protocol::RestXml => AwsError::new(
                StatusCode::NOT_IMPLEMENTED,
                "NotImplemented",
                "A header you provided implies functionality that is not implemented",
            ),
            Protocol::AwsQuery => AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidAction",
                format!("Could not find operation {name} for version {version}"),
            ),
            Protocol::Ec2Query => AwsError::new(
                StatusCode::BAD_REQUEST,
                "InvalidAction",
                format!("The action {name} is not valid for this web service."),
            ),
            Protocol::AwsJson1_0 => {
                AwsError::new(StatusCode::BAD_REQUEST, "UnknownOperationException", "")
            }
        }
    }

    /// An error injected by a fault, with `code` or the protocol's usual code for
    /// `status`.
    pub(crate) fn fault(self, status: StatusCode, code: Option<&str>) -> AwsError {
        let default = match (self, status.as_u16()) {
            (Protocol::RestXml, 503) => ("ServiceUnavailable", "Please reduce your request rate."),
            (Protocol::AwsJson1_0, 500) => ("InternalServerError", "Internal server error"),
            (Protocol::AwsJson1_0, 503) => ("ServiceUnavailable", "Service unavailable"),
            (Protocol::Ec2Query, 503) => (
                "Unavailable",
                "The server is overloaded and can't handle the request.",
            ),
            (_, 503) => ("ServiceUnavailable", "Service is unable to handle request."),
            (Protocol::RestXml, _) => (
                "InternalError",
                "We encountered an internal error. Please try again.",
            ),
            _ => (
                "InternalFailure",
                "The request processing has failed because of an unknown error, exception or failure.",
            ),
        };
        match code {
            Some(code) => AwsError::new(status, code.to_owned(), "injected by mock-cloud"),
            None => AwsError::new(status, default.0, default.1),
        }
    }
}
