//! Why a Connect failed.

use aws_sdk_sts::error::ProvideErrorMetadata;

use crate::aws::config::ConfigError;
use crate::aws::error::AwsError;

/// Why a Connect failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The ProviderConfig, its Secret or the region is wrong: the user fixes it.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A service the resource needs has no endpoint in `spec.endpoint`.
    #[error(
        "service {0} is not in spec.endpoint.services: this provider reaches only the endpoints given there (it has no TLS for AWS's own)"
    )]
    NoEndpoint(&'static str),
    /// STS refused or failed.
    #[error(transparent)]
    Sts(AwsError),
}

impl ConnectError {
    pub(super) fn sts<E, R>(operation: &'static str, e: aws_sdk_sts::error::SdkError<E, R>) -> Self
    where
        E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
        R: std::fmt::Debug + Send + Sync + 'static,
    {
        ConnectError::Sts(AwsError::sdk("STS", operation, e))
    }
}
