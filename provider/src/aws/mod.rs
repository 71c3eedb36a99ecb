//! The upjet-shaped AWS flavour (cargo feature `aws`): what provider-upjet-aws does to a
//! cloud, on aws-sdk-rust, against any endpoint that speaks AWS (mock-cloud's AWS mode).
//!
//! - [`kinds`]: the custom resources: `Bucket` in `s3.aws.loadtest.dev` (cluster-scoped)
//!   and `s3.aws.m.loadtest.dev` (namespaced), `VPC` in `ec2.aws.m.loadtest.dev`, `Table`
//!   in `dynamodb.aws.m.loadtest.dev`, and `ClusterProviderConfig` and `ProviderConfig` in
//!   `aws.m.loadtest.dev`.
//! - [`controllers`]: their controllers on the provider's managed reconciler (the same
//!   rate limits: the cluster-scoped Bucket in the cluster scope's global bucket, the
//!   `.m.` kinds in the namespaced one with `--scoped-buckets`), Connect through the
//!   referenced ProviderConfig, whose `reconciliationPolicy` backoff wins over the flags'.
//! - [`config`]: upjet's `ProviderConfig` spec (credentials from a Secret or IRSA,
//!   `assumeRoleChain`, `spec.endpoint`, the `skip_*` flags, path style,
//!   `reconciliationPolicy.exponentialFailureRateLimiter`) and its checks, whose messages
//!   say what to fix.
//! - [`connect`]: Connect through STS on each reconcile, the SDK's retry mode
//!   (`--aws-retry-mode`: `standard`, `adaptive`, `off`) and
//!   `--credential-cache=none|irsa|all`.
//! - [`error`]: the one error of a failed AWS call, whatever the service.
//! - [`bucket`]: the S3 Bucket's external client: Observe is Terraform's 15-call read.
//! - [`vpc`]: the EC2 VPC's external client (on the trimmed aws-sdk-ec2 of `vendor/`);
//!   [`table`]: the DynamoDB Table's.
//! - [`attempts`]: each HTTP attempt of the SDK clients counted in
//!   `provider_cloud_requests_total`, by operation and status.
//! - [`transport`]: the SDK clients on a tower `Service` in process (the harness's embedded
//!   stack), so the AWS kinds run on tokio's paused clock too.
//!
//! Calls per path are in `provider/README.md`.

pub mod attempts;
pub mod bucket;
pub mod config;
pub mod connect;
pub mod controllers;
pub mod error;
pub mod kinds;
pub mod table;
pub mod time;
pub mod transport;
pub mod vpc;

use std::collections::BTreeMap;

use aws_smithy_runtime_api::client::http::SharedHttpClient;

use connect::{CredentialCache, RetryMode};

/// How the AWS flavour builds its clients (`--aws-retry-mode`, `--credential-cache`).
#[derive(Clone, Debug, Default)]
pub struct AwsOptions {
    /// The SDK's retry mode.
    pub retry_mode: RetryMode,
    /// What survives between Connects.
    pub credential_cache: CredentialCache,
    /// The HTTP client of every SDK client; `None`: plain http over TCP (hyper).
    pub http: Option<SharedHttpClient>,
}

/// Equal when the flags are (an HTTP client has no equality: only its presence counts).
impl PartialEq for AwsOptions {
    fn eq(&self, other: &Self) -> bool {
        self.retry_mode == other.retry_mode
            && self.credential_cache == other.credential_cache
            && self.http.is_some() == other.http.is_some()
    }
}

/// What an update does to a resource's tags: the tags of `want` that `have` lacks or holds
/// with another value (to set), and the keys of `have` that `want` lacks (to remove).
pub(crate) fn tag_changes(
    want: &BTreeMap<String, String>,
    have: &BTreeMap<String, String>,
) -> (BTreeMap<String, String>, Vec<String>) {
    let changed = want
        .iter()
        .filter(|(k, v)| have.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let removed = have
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    (changed, removed)
}
