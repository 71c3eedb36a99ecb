//! A sweep's Indexed Job applied to a cluster (`harness sweep … --kubernetes-job --apply`):
//! its ConfigMap and Job ([`super::job`]) by server-side apply, through kube.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};

/// The field manager of the applies.
pub const FIELD_MANAGER: &str = "harness-sweep";

/// Why [`apply`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The kubeconfig given cannot be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The kubeconfig cannot be used (its context, its cluster, its credentials).
    #[error("cannot use {}", path.display())]
    Use {
        /// The file, or "the kubeconfig" for the environment's.
        path: PathBuf,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// No kubeconfig given, none in the environment, and not in a pod.
    #[error("no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster: give --kubeconfig")]
    NoConfig(#[source] kube::config::InferConfigError),
    /// The client cannot be built from the configuration.
    #[error("cannot build a client")]
    Client(#[source] kube::Error),
    /// The API server refused the ConfigMap.
    #[error("cannot apply configmap/{name} in namespace {namespace}")]
    ConfigMap {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// The API server refused the Job.
    #[error(
        "cannot apply job.batch/{name} in namespace {namespace} (a Job's pod template cannot change: `kubectl -n {namespace} delete job {name}` first to run another sweep under its name)"
    )]
    Job {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

/// [`apply`]'s future, boxed: the namespace and name applied.
pub type ApplyFuture<'a> = Pin<Box<dyn Future<Output = Result<(String, String), ApplyError>> + 'a>>;

/// Applies `cm` and `job` (server-side, forced, field manager [`FIELD_MANAGER`]) in
/// `namespace` (default: the configuration's) of the cluster of `kubeconfig` (default:
/// `KUBECONFIG`, else `~/.kube/config`, else the pod's) and its `context` (default: the
/// current one); their namespace and name. A plain function returning a boxed future, so
/// that its caller does not compile the client's code for Jobs again.
///
/// # Errors
/// The future's: see [`ApplyError`].
pub fn apply<'a>(
    kubeconfig: Option<&'a Path>,
    context: Option<String>,
    namespace: Option<String>,
    cm: &'a ConfigMap,
    job: &'a Job,
) -> ApplyFuture<'a> {
    Box::pin(async move {
        let has_context = context.is_some();
        let options = kube::config::KubeConfigOptions {
            context,
            ..Default::default()
        };
        let config = match kubeconfig {
            Some(path) => {
                let file = kube::config::Kubeconfig::read_from(path).map_err(|source| {
                    ApplyError::Read {
                        path: path.to_path_buf(),
                        source,
                    }
                })?;
                kube::Config::from_custom_kubeconfig(file, &options)
                    .await
                    .map_err(|source| ApplyError::Use {
                        path: path.to_path_buf(),
                        source,
                    })?
            }
            None if has_context => {
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(|source| ApplyError::Use {
                        path: PathBuf::from("the kubeconfig"),
                        source,
                    })?
            }
            None => kube::Config::infer().await.map_err(ApplyError::NoConfig)?,
        };
        let namespace = namespace.unwrap_or_else(|| config.default_namespace.clone());
        let client = kube::Client::try_from(config).map_err(ApplyError::Client)?;
        let name = job.metadata.name.clone().unwrap_or_default();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        Api::<ConfigMap>::namespaced(client.clone(), &namespace)
            .patch(&name, &params, &Patch::Apply(cm))
            .await
            .map_err(|source| ApplyError::ConfigMap {
                namespace: namespace.clone(),
                name: name.clone(),
                source,
            })?;
        Api::<Job>::namespaced(client, &namespace)
            .patch(&name, &params, &Patch::Apply(job))
            .await
            .map_err(|source| ApplyError::Job {
                namespace: namespace.clone(),
                name: name.clone(),
                source,
            })?;
        Ok((namespace, name))
    })
}
