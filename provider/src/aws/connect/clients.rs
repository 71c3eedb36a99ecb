//! The SDK clients of a Connect (STS, S3, EC2, DynamoDB) and the retry partitions they
//! share within one provider process.

use aws_credential_types::Credentials;
use aws_sdk_s3::config::retry::{ClientRateLimiter, RetryPartition, TokenBucket};

use aws_smithy_async::time::SharedTimeSource;
use aws_smithy_runtime_api::client::http::SharedHttpClient;

use super::error::ConnectError;
use super::modes::RetryMode;
use crate::aws::attempts::CountAttempts;
use crate::aws::config::ProviderConfigSpec;

/// The clients of one Connect, for one region.
#[derive(Clone, Debug)]
pub struct Clients {
    /// S3.
    pub s3: aws_sdk_s3::Client,
    /// EC2.
    pub ec2: aws_sdk_ec2::Client,
    /// DynamoDB.
    pub dynamodb: aws_sdk_dynamodb::Client,
    /// STS, with the final credentials.
    pub sts: aws_sdk_sts::Client,
    /// The account the credentials act as (`000000000000` when both skips are set).
    pub account_id: String,
    /// The region.
    pub region: String,
}

/// What every SDK client of one provider process is built with: the retry mode, the
/// transport, the time source, the retry partitions and the attempt counter.
pub(super) struct Sdk {
    pub(super) retry: RetryMode,
    pub(super) http: SharedHttpClient,
    pub(super) time: Option<SharedTimeSource>,
    pub(super) partitions: Partitions,
    pub(super) attempts: Option<CountAttempts>,
}

impl Sdk {
    /// An STS client on `url`, with `creds` (none for the web identity exchange).
    pub(super) fn sts(
        &self,
        url: &str,
        region: &str,
        creds: Option<Credentials>,
    ) -> aws_sdk_sts::Client {
        let mut b = aws_sdk_sts::Config::builder()
            .behavior_version(aws_sdk_sts::config::BehaviorVersion::latest())
            .endpoint_url(url)
            .region(aws_sdk_sts::config::Region::new(region.to_owned()))
            .retry_config(self.retry.retry_config())
            .retry_partition(self.partitions.sts.clone())
            .http_client(self.http.clone());
        b.set_time_source(self.time.clone());
        if let Some(a) = &self.attempts {
            b = b.interceptor(a.clone());
        }
        if let Some(c) = creds {
            b = b.credentials_provider(c);
        }
        aws_sdk_sts::Client::from_conf(b.build())
    }

    /// The clients of one Connect: S3, EC2 and DynamoDB with `creds`, and `sts`.
    pub(super) fn clients(
        &self,
        spec: &ProviderConfigSpec,
        region: &str,
        creds: Credentials,
        sts: aws_sdk_sts::Client,
        account_id: String,
    ) -> Result<Clients, ConnectError> {
        let retry = self.retry.retry_config();
        let s3 = {
            let mut b = aws_sdk_s3::Config::builder()
                .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
                .region(aws_sdk_s3::config::Region::new(region.to_owned()))
                .credentials_provider(creds.clone())
                .force_path_style(spec.s3_use_path_style)
                .retry_config(retry.clone())
                .retry_partition(self.partitions.s3.clone())
                .http_client(self.http.clone());
            b.set_time_source(self.time.clone());
            if let Some(a) = &self.attempts {
                b = b.interceptor(a.clone());
            }
            if let Some(u) = spec.endpoint_for("s3")? {
                b = b.endpoint_url(u);
            }
            aws_sdk_s3::Client::from_conf(b.build())
        };
        let ec2 = {
            let mut b = aws_sdk_ec2::Config::builder()
                .behavior_version(aws_sdk_ec2::config::BehaviorVersion::latest())
                .region(aws_sdk_ec2::config::Region::new(region.to_owned()))
                .credentials_provider(creds.clone())
                .retry_config(retry.clone())
                .retry_partition(self.partitions.ec2.clone())
                .http_client(self.http.clone());
            b.set_time_source(self.time.clone());
            if let Some(a) = &self.attempts {
                b = b.interceptor(a.clone());
            }
            if let Some(u) = spec.endpoint_for("ec2")? {
                b = b.endpoint_url(u);
            }
            aws_sdk_ec2::Client::from_conf(b.build())
        };
        let dynamodb = {
            let mut b = aws_sdk_dynamodb::Config::builder()
                .behavior_version(aws_sdk_dynamodb::config::BehaviorVersion::latest())
                .region(aws_sdk_dynamodb::config::Region::new(region.to_owned()))
                .credentials_provider(creds)
                .retry_config(retry)
                .retry_partition(self.partitions.dynamodb.clone())
                .http_client(self.http.clone());
            b.set_time_source(self.time.clone());
            if let Some(a) = &self.attempts {
                b = b.interceptor(a.clone());
            }
            if let Some(u) = spec.endpoint_for("dynamodb")? {
                b = b.endpoint_url(u);
            }
            aws_sdk_dynamodb::Client::from_conf(b.build())
        };
        Ok(Clients {
            s3,
            ec2,
            dynamodb,
            sts,
            account_id,
            region: region.to_owned(),
        })
    }
}

/// The SDK's retry partitions of one provider process, one per service: each holds the retry
/// quota (the SDK's default token bucket: 500 tokens, 5 per retry after a throttle or
/// transient error, 10 after a timeout, 1 back per first-attempt success) and, in adaptive
/// mode, the client-side rate limiter that every client of the service shares.
///
/// The SDK keeps its default partitions in process-wide statics, shared by every client of a
/// service; a [`Connector`] is one provider, so its own partitions are the same thing, and
/// two providers in one process (the tests, the harness's restarts) do not share quotas.
#[derive(Clone, Debug)]
pub(super) struct Partitions {
    s3: RetryPartition,
    sts: RetryPartition,
    ec2: RetryPartition,
    dynamodb: RetryPartition,
}

impl Partitions {
    pub(super) fn new(seconds_since_unix_epoch: f64) -> Self {
        let partition = |service: &'static str| {
            RetryPartition::custom(service)
                .token_bucket(TokenBucket::default())
                .client_rate_limiter(ClientRateLimiter::new(seconds_since_unix_epoch))
                .build()
        };
        Partitions {
            s3: partition("s3"),
            sts: partition("sts"),
            ec2: partition("ec2"),
            dynamodb: partition("dynamodb"),
        }
    }
}
