//! The provider profile: what the budget needs to know about a provider the harness does
//! not control. [`raw`] is the format; the validated [`Profile`] reaches the prediction
//! (its settings replace the scenario's `provider` section), the scenario's kinds (its
//! [`Catalogue`](super::Catalogue)), the cluster target (which checks the Deployment's
//! args against it) and the `process` target (which starts the provider from its command).

pub mod core;
pub mod raw;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use limiter::crossplane::Settings;

use super::clients::ClientLimiter;
use super::flags::{ClientLimits, Dialect};
use super::kinds::ApiKind;
use raw::RawProfile;

/// A validated provider profile.
#[derive(Clone, Debug)]
pub struct Profile {
    /// The file it was read from (none when inline in the scenario).
    pub file: Option<String>,
    /// The family of the provider's flags, when its settings come from a command line.
    pub flags: Option<Dialect>,
    /// The rate-limit settings.
    pub settings: Settings,
    /// The API client's QPS and burst.
    pub client: ClientLimits,
    /// The client-side limiters of its API requests (docs/budget.md §2.5).
    pub client_limiters: Vec<ClientLimiter>,
    /// Every kind the scenario may name.
    pub kinds: Vec<ApiKind>,
    /// How the `process` target starts the provider.
    pub process: Option<ProcessCommand>,
    /// The kinds' calls per reconcile from the calibration file the profile names
    /// (`calibration`), which `harness calibrate` writes.
    pub calibration: Vec<Calibrated>,
    /// The start of the provider's `User-Agent` (`userAgent`), if the profile states it.
    pub user_agent: Option<String>,
}

/// One kind's calls per reconcile from a calibration file.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibrated {
    /// Its `apiVersion` (none for the sample provider's short kinds).
    pub api_version: Option<String>,
    /// Its kind.
    pub kind: String,
    /// The figures per path.
    pub calls: crate::calls::Calls,
    /// Calls by operation and the measured samples.
    pub detail: crate::calls::CallDetail,
}

impl Calibrated {
    /// Whether this entry is of `kind`.
    #[must_use]
    pub fn describes(&self, kind: &super::kinds::GroupKind) -> bool {
        match (kind, &self.api_version) {
            (super::kinds::GroupKind::Api(a), Some(v)) => {
                *v == a.api_version() && self.kind == a.kind
            }
            (super::kinds::GroupKind::Short(k), None) => format!("{k:?}") == self.kind,
            _ => false,
        }
    }
}

/// The provider's command line for the `process` target, placeholders unrendered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessCommand {
    /// The program (resolved against the profile's directory when it names a file there).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment variables.
    pub env: BTreeMap<String, String>,
    /// CRD files mock-apiserver serves (none: one permissive CRD per profile kind).
    pub crds: Vec<PathBuf>,
    /// The provider's metrics URL, placeholders unrendered (none: not read).
    pub metrics_url: Option<String>,
}

/// What replaces a profile command's placeholders in one run.
#[derive(Clone, Copy, Debug)]
pub struct Rendered<'a> {
    /// The kubeconfig file.
    pub kubeconfig: &'a str,
    /// mock-cloud's base URL.
    pub cloud_url: &'a str,
    /// The loopback port picked for the provider's metrics.
    pub metrics_port: u16,
}

/// The placeholder of the kubeconfig file in a profile's command line.
pub const KUBECONFIG: &str = "{{kubeconfig}}";
pub use super::template::CLOUD_URL;
/// The placeholder of a free loopback port for the provider's metrics, in a profile's
/// command line and `metricsUrl`.
pub const METRICS_PORT: &str = "{{metricsPort}}";

impl ProcessCommand {
    /// `text` with the placeholders replaced.
    #[must_use]
    pub fn render(text: &str, with: Rendered<'_>) -> String {
        text.replace(KUBECONFIG, with.kubeconfig)
            .replace(CLOUD_URL, with.cloud_url)
            .replace(METRICS_PORT, &with.metrics_port.to_string())
    }

    /// Whether the command line, its environment or the metrics URL uses
    /// `{{metricsPort}}`.
    #[must_use]
    pub fn uses_metrics_port(&self) -> bool {
        self.args
            .iter()
            .chain(self.env.values())
            .chain(&self.metrics_url)
            .any(|t| t.contains(METRICS_PORT))
    }

    /// The command `cmd` (its program first, not empty) of the profile `raw` read from
    /// `dir`: a program with a directory in its path, or a file beside the profile, is
    /// found from `dir`; any other is looked up on the PATH.
    #[must_use]
    pub fn of(cmd: &[String], raw: &RawProfile, dir: &Path) -> Self {
        let first = Path::new(&cmd[0]);
        let local = dir.join(first);
        let program = if first.is_relative() && first.components().count() > 1 || local.is_file() {
            local
        } else {
            first.to_path_buf()
        };
        Self {
            program,
            args: cmd[1..].to_vec(),
            env: raw.env.clone(),
            crds: raw.crds.iter().map(|f| dir.join(&f.value)).collect(),
            metrics_url: raw.metrics_url.as_ref().map(|u| u.value.clone()),
        }
    }
}

/// What is wrong with a profile's `metricsUrl`, if anything: it must be an http:// URL once
/// `{{metricsPort}}` is replaced.
#[must_use]
pub fn metrics_url_problem(url: &str) -> Option<String> {
    let sample = url.replace(METRICS_PORT, "8080");
    let http = sample
        .strip_prefix("http://")
        .is_some_and(|rest| !rest.is_empty() && sample.parse::<http::Uri>().is_ok());
    (!http).then(|| {
        format!(
            "metricsUrl {url:?} is not an http:// URL, expected such as http://127.0.0.1:{METRICS_PORT}/metrics"
        )
    })
}

/// A permissive CustomResourceDefinition for `kind`: its schema keeps every field, with the
/// status subresource, as a provider's CRD serves for the harness's purposes.
#[must_use]
pub fn permissive_crd(kind: &ApiKind) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", kind.plural, kind.group)},
        "spec": {
            "group": kind.group,
            "names": {
                "kind": kind.kind,
                "plural": kind.plural,
                "singular": kind.kind.to_lowercase(),
                "listKind": format!("{}List", kind.kind),
            },
            "scope": if kind.namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "name": kind.version,
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "subresources": {"status": {}},
            }],
        },
    })
}
