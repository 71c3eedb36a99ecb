//! The provider profile as written: in a scenario's `profile:` section, or in a file that
//! section names (`profile: {file: PATH}`, relative to the scenario). Unknown fields are
//! rejected.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::flags::Dialect;

/// What the budget needs to know about a provider the harness does not control: its
/// rate-limit settings (written out, or read from its command line), the kinds it serves,
/// and for the `process` target how to start it.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProfile {
    /// A file holding the profile (the same fields as this section), relative to the
    /// scenario's directory. With `file`, the section has no other field.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub file: Option<Spanned<String>>,
    /// The family of the provider's flags: `crossplane-runtime` (provider-template's main),
    /// `upjet` (provider-upjet-aws's mains) or `loadtest` (this workspace's provider). With
    /// it, the settings come from `args` (or `command`), each flag's default applying when
    /// it is absent; `settings` may then only agree with them, or give what the flags
    /// cannot. A core profile (`harness run --core-profile FILE`, docs/core-process.md)
    /// has `crossplane-core`: Crossplane core's flags, set from the scenario's `core`
    /// section.
    #[serde(default)]
    #[schemars(with = "Option<Dialect>")]
    pub flags: Option<Spanned<Dialect>>,
    /// The provider's arguments (its Deployment's container `args`). Default: `command`
    /// without its program.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub args: Option<Spanned<Vec<String>>>,
    /// The `process` target: the provider's command line, program first, with the
    /// placeholders `{{kubeconfig}}` (a kubeconfig file for the harness's mock-apiserver)
    /// and `{{cloudUrl}}` (mock-cloud's base URL). A relative program path is taken from
    /// the profile's directory when it names a file there, else from `PATH`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub command: Option<Spanned<Vec<String>>>,
    /// The `process` target: environment variables of the provider, with the same
    /// placeholders.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The `process` target: the URL of the provider's Prometheus metrics, such as
    /// `http://127.0.0.1:8080/metrics` (controller-runtime's default address) or
    /// `http://127.0.0.1:{{metricsPort}}/metrics` with the provider told to listen there in
    /// `command`: `{{metricsPort}}` is a free loopback port the harness picks. The run
    /// scrapes it every second (its counters beside the journal's). Default: not read.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub metrics_url: Option<Spanned<String>>,
    /// The `process` target: files of CustomResourceDefinitions (YAML, several documents
    /// allowed), or directories of them (their `.yaml` and `.yml` files, such as a provider
    /// package's `package/crds`), that mock-apiserver serves, relative to the profile's
    /// directory. Default: one CRD per kind of `kinds`, with a schema that keeps every
    /// field.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub crds: Vec<Spanned<String>>,
    /// A calibration file (YAML with a `calls` list, as `harness calibrate` writes it),
    /// relative to the profile's directory: each kind's calls per reconcile by path and by
    /// operation, used for every kind the scenario's own `calls` section does not give.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub calibration: Option<Spanned<String>>,
    /// The start of the provider's `User-Agent` header, such as `provider-aws-s3/`
    /// (client-go's convention is `BINARY/VERSION (OS/ARCH) kubernetes/COMMIT`, and its
    /// leader-election client appends `/leader-election`): an API server journal counts the
    /// requests whose `User-Agent` starts with it as the provider's. Default: every request
    /// that is not the harness's (the result notes it).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub user_agent: Option<Spanned<String>>,
    /// The rate-limit settings. Without `flags`, every one is required.
    #[serde(default)]
    pub settings: RawProfileSettings,
    /// Every kind the scenario names (managed kinds, ProviderConfigs), with its plural and
    /// scope.
    #[serde(default)]
    pub kinds: Vec<RawProfileKind>,
}

crate::settings::rate_section! {
    /// A profile's rate-limit settings (budget.md §0), each as the provider's flags would
    /// give it: the settings a scenario's `provider` section writes, then the API client's.
    /// Without `flags`, every one but `clientLimiters` is required (the defaults named are
    /// the `provider` section's).
    #[derive(Debug, Default, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct RawProfileSettings {
        /// The API client's QPS (`LimitRESTConfig`: 5R).
        #[serde(default)]
        #[schemars(with = "Option<f64>")]
        pub client_qps: Option<Spanned<f64>>,
        /// The API client's burst (`LimitRESTConfig`: 10R).
        #[serde(default)]
        #[schemars(with = "Option<f64>")]
        pub client_burst: Option<Spanned<f64>>,
        /// The client-side limiters of the provider's API requests: one per REST client with a
        /// bucket of its own (docs/budget.md §2.5). Default: what `flags` derives
        /// (`crossplane-runtime`, `upjet`: `manager`, `events`, and `leader-election` with
        /// `--leader-election`; `loadtest` takes them from `--event-client` and refuses this
        /// field); without `flags`, `manager` and `events`.
        #[serde(default)]
        #[schemars(with = "Option<Vec<RawClientLimiter>>")]
        pub client_limiters: Option<Spanned<Vec<RawClientLimiter>>>,
    }
}

/// One client-side limiter: a REST client's bucket.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawClientLimiter {
    /// The client it limits, unique: `manager`, `events`, `leader-election`, or any name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Its QPS (default `clientQps`).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub qps: Option<Spanned<f64>>,
    /// Its burst (default `clientBurst`).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub burst: Option<Spanned<f64>>,
}

/// A kind the provider serves.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawProfileKind {
    /// `group/version`.
    #[schemars(with = "String")]
    pub api_version: Spanned<String>,
    /// The kind.
    #[schemars(with = "String")]
    pub kind: Spanned<String>,
    /// Its plural (default: the kind in lower case with an `s`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub plural: Option<Spanned<String>>,
    /// `Cluster` or `Namespaced`.
    #[schemars(with = "ScopeName")]
    pub scope: Spanned<ScopeName>,
}

/// A kind's scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum ScopeName {
    /// Cluster-scoped.
    Cluster,
    /// Namespaced.
    Namespaced,
}
