//! The one error of an AWS call, for every service the flavour calls (S3, DynamoDB, EC2, STS).
//!
//! Its text names the call only (`S3 HeadBucket on bucket "b" failed`); the SDK's error is its
//! [`source`](std::error::Error::source), so a condition message, which is the error with its
//! causes ([`error_chain`](crate::reconciler::conditions::error_chain)), says each cause once.

use aws_smithy_runtime_api::client::result::SdkError;
use aws_smithy_types::error::metadata::ProvideErrorMetadata;

/// An AWS call that failed, or a request the SDK could not build.
#[derive(Debug, thiserror::Error)]
#[error(
    "{service} {operation}{} failed",
    resource.as_ref().map(|r| format!(" on {r}")).unwrap_or_default()
)]
pub struct AwsError {
    /// The service: `S3`, `DynamoDB`, `EC2`, `STS`.
    pub service: &'static str,
    /// The operation (`HeadBucket`, `CreateTable`, …).
    pub operation: &'static str,
    /// What the call was about, when its text names it (`bucket "b"`).
    pub resource: Option<String>,
    /// AWS's error code, if the service answered one (`SlowDown`, `ThrottlingException`, …).
    pub code: Option<String>,
    /// The SDK's error, or what was missing from an answer.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl AwsError {
    /// A failed call of `service`: the SDK's error and its code.
    pub fn sdk<E, R>(service: &'static str, operation: &'static str, e: SdkError<E, R>) -> Self
    where
        E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
        R: std::fmt::Debug + Send + Sync + 'static,
    {
        AwsError {
            service,
            operation,
            resource: None,
            code: e.code().map(str::to_owned),
            source: Box::new(e),
        }
    }

    /// A call that did not happen or whose answer lacked something: `cause` says what.
    pub fn other(
        service: &'static str,
        operation: &'static str,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        AwsError {
            service,
            operation,
            resource: None,
            code: None,
            source: cause.into(),
        }
    }

    /// The same error, about `resource` (`bucket "b"`).
    #[must_use]
    pub fn on(mut self, resource: String) -> Self {
        self.resource = Some(resource);
        self
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::operation::describe_table::DescribeTableError;
    use aws_smithy_runtime_api::http::{Response, StatusCode};
    use aws_smithy_types::body::SdkBody;
    use aws_smithy_types::error::ErrorMetadata;

    use super::AwsError;
    use crate::reconciler::conditions::error_chain;

    fn throttled() -> SdkError {
        let meta = ErrorMetadata::builder()
            .code("ThrottlingException")
            .message("Rate of requests exceeds the allowed throughput.")
            .build();
        let raw = Response::new(StatusCode::try_from(400).unwrap(), SdkBody::empty());
        aws_smithy_runtime_api::client::result::SdkError::service_error(
            DescribeTableError::generic(meta),
            raw,
        )
    }

    type SdkError = aws_smithy_runtime_api::client::result::SdkError<DescribeTableError, Response>;

    #[test]
    fn the_condition_message_says_each_cause_once() {
        let e = AwsError::sdk("DynamoDB", "DescribeTable", throttled());
        assert_eq!(e.code.as_deref(), Some("ThrottlingException"));
        assert_eq!(e.to_string(), "DynamoDB DescribeTable failed");
        let message = error_chain(&e);
        assert_eq!(
            message,
            "DynamoDB DescribeTable failed: service error: unhandled error (ThrottlingException): \
             Error { code: \"ThrottlingException\", message: \"Rate of requests exceeds the allowed throughput.\" }"
        );
        assert_eq!(message.matches("Rate of requests").count(), 1, "{message}");
    }

    #[test]
    fn a_resource_is_named_and_a_missing_part_is_the_cause() {
        let e = AwsError::other("S3", "PutBucketTagging", "no tags").on("bucket \"b\"".to_owned());
        assert_eq!(
            error_chain(&e),
            "S3 PutBucketTagging on bucket \"b\" failed: no tags"
        );
        assert_eq!(e.code, None);
    }
}
