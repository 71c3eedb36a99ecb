//! The upjet-shaped AWS flavour (cargo feature `aws`): what provider-upjet-aws does to a
//! cloud, on aws-sdk-rust, against any endpoint that speaks AWS (mock-cloud's AWS mode).
//!
//! - [`config`]: upjet's `ProviderConfig` spec (credentials from a Secret or IRSA,
//!   `assumeRoleChain`, `spec.endpoint`, the `skip_*` flags, path style,
//!   `reconciliationPolicy.exponentialFailureRateLimiter`) and its checks, whose messages
//!   say what to fix.
//! - [`connect`]: Connect through STS on each reconcile, the SDK's retry mode
//!   (`standard`, `adaptive`, `off`) and `--credential-cache=none|irsa|all`.
//! - [`bucket`]: the S3 Bucket's external client: Observe is Terraform's 15-call read.
//! - [`vpc`]: the EC2 VPC's external client; [`table`]: the DynamoDB Table's.
//!
//! Not here yet: the Bucket, VPC and Table custom resources and their controllers (the
//! reconciler still drives only the mock-cloud JSON kinds). Calls per path are in `provider/README.md`.

pub mod bucket;
pub mod config;
pub mod connect;
pub mod table;
pub mod vpc;
