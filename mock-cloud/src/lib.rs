//! A cloud API that enforces its quotas like real clouds do, and journals every call.
//!
//! `mock-cloud` is the external system a Kubernetes provider manages in our load tests,
//! and the ground truth for every call rate the harness asserts. It serves JSON over
//! HTTP/1.1: accounts with bearer tokens; `buckets` (created at once), `databases`
//! (provisioned asynchronously) and DNS `records`; create, get, update, delete and
//! paginated list. Quotas are governor token buckets per account, per action class or
//! action, and account-wide, plus count quotas per collection; a throttled request gets
//! 429 with `Retry-After`. Faults (latency, error rates, outages) can be injected, and
//! every call lands in a compact journal.
//!
//! # Where to start
//! - [`Config`] (in code, or [`Config::load`] for a YAML file) describes accounts, quotas
//!   ([`Quotas`], [`Rate`]), provisioning times and [`Faults`].
//! - [`MockCloud::new`] builds the cloud. It is a tower `Service` for in-process use
//!   ([`MockCloud::handle`]), and [`serve()`] puts it on a socket.
//! - [`MockCloud::calls_page`], [`MockCloud::summary`] and [`MockCloud::inventory`] read
//!   the journal, the aggregates and the live resources in-process; the admin API under
//!   `/admin/v1/` serves the same over HTTP.
//! - [`admin`] owns the admin API's wire types, which serialize and deserialize alike:
//!   the config and faults documents ([`admin::ConfigDocument`], [`admin::FaultsDocument`],
//!   convertible to and from [`Config`] and [`Faults`]), the journal's lines
//!   ([`admin::Call`]) and pages ([`admin::CallsPage`]), the [`admin::Inventory`] and the
//!   [`admin::Summary`]. With the `client` feature, `admin::Client` speaks the admin API
//!   over HTTP/1.1.
//! - [`Switchable`] lets a served cloud be replaced as a whole by `PUT /admin/v1/config`
//!   (what [`serve()`] does), so one long-running process serves scenario after scenario.
//!
//! # Time
//! All time is tokio time, so `#[tokio::test(start_paused = true)]` drives quotas and
//! provisioning deterministically. Journal times (`at_us`), creation times and outage
//! windows count from the cloud's own clock, which starts when the cloud is built; its
//! epoch, the wall-clock time at which it read zero, is [`MockCloud::epoch`], served in the
//! summary and in the `x-epoch` header of every journal page.
//!
//! # The request pipeline
//! Every journalled request, of the generic JSON API or of an AWS service, takes the same
//! steps (route, authenticate, quota, faults, operation, journal) and leaves the same
//! journal record, a [`Call`], whichever service answered it.
//!
//! # Features
//! - `cli` (default): the `mock-cloud` binary, with clap, anyhow and tracing-subscriber;
//!   the library alone (`default-features = false`) builds none of them.
//! - `client`: [`admin`]`::Client`, a client of the admin API on hyper-util's HTTP/1.1
//!   client. Off by default.
//!
//! # Example
//! ```
//! use mock_cloud::{AccountConfig, Class, Config, MockCloud, Quotas, Rate};
//! use tower::ServiceExt;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
//! let quotas = Quotas::cloud_default().with_class(Class::Mutate, Some(Rate::new(1, 1.0)));
//! let config = Config::empty().with_account(AccountConfig::new("acme").with_token("t").with_quotas(quotas));
//! let cloud = MockCloud::new(config).unwrap();
//!
//! let create = |name: &str| {
//!     http::Request::post("/v1/accounts/acme/buckets")
//!         .header("authorization", "Bearer t")
//!         .body(http_body_util::Full::new(bytes::Bytes::from(format!(r#"{{"name":"{name}"}}"#))))
//!         .unwrap()
//! };
//! let first = cloud.clone().oneshot(create("a")).await.unwrap();
//! assert_eq!(first.status(), 201);
//! let second = cloud.clone().oneshot(create("b")).await.unwrap();
//! assert_eq!(second.status(), 429);
//! assert_eq!(second.headers()["retry-after"], "1");
//!
//! let calls = cloud.calls();
//! assert_eq!(calls.len(), 2);
//! assert!(calls[1].throttled);
//! assert_eq!(cloud.inventory().len(), 1);
//! # });
//! ```

pub mod admin;
mod aws;
mod clock;
mod cloud;
mod config;
mod faults;
mod generic;
mod http;
mod journal;
mod model;
mod pipeline;
mod quota;
mod resource_faults;
mod serve;
mod service;
mod store;
mod summary;

/// A hash map with foldhash's fast hasher, for the maps looked up on every request (the
/// journal's interner, the summary's counters, quotas, credentials, tokens): SipHash, std's
/// default, costs several times more for short keys, and no key here comes from a party
/// that could aim collisions at it any better than at the per-process random seed.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

pub use admin::CONFIG_PATH;
pub use clock::TokioClock;
pub use cloud::MockCloud;
pub use config::{
    AccessKey, AccountConfig, AwsIdentity, AwsSettings, ClassQuota, Config, ConfigError,
    DEFAULT_ACCOUNT_ID, DEFAULT_JOURNAL_CAP, ErrorRate, Faults, Flavor, LastingError, Latency,
    OperationFaults, Outage, Per, Quotas, Rate, ResourceEffect, ResourceFault, ResourceKind,
    ResourceSelector, ServiceQuotas,
};
pub use http::{BoxError, MAX_BODY, ResponseBody, Switchable};
pub use journal::{Call, JournalStats};
pub use model::{Action, Class, Collection, State};
pub use quota::Layer;
pub use serve::{Loopback, serve, serve_loopback, serve_switchable};
pub use service::{Ec2Operation, Operation, Protocol, S3Operation, Service, StsOperation};
pub use store::Resource;
pub use summary::{OperationCount, Second, StatusCount, Summary, Violations};
