//! Crossplane core's Deployment in a cluster, checked the way the provider's is
//! ([`super::cluster::check_deployment`]): its container's command and args read in the
//! `crossplane-core` family ([`crate::scenario::core_flags`]) must give the scenario's
//! `core` settings, each flag that differs named (`harness core-args SCENARIO
//! --kubeconfig FILE` runs it).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use k8s_openapi::api::apps::v1::Deployment;

use crate::run::error::{FlagDiff, RunError};
use crate::run::own::OwnRequests;
use crate::scenario::composite::CoreSettings;
use crate::scenario::core_flags;

/// The Deployment Crossplane's Helm chart installs core as.
pub const DEFAULT_CORE_DEPLOYMENT: &str = "crossplane-system/crossplane";

/// Reads core's Deployment `namespace/name` in the cluster of `kubeconfig`'s `context`
/// (default: its current one) and checks it with [`check_core_deployment`]: what `harness
/// core-args SCENARIO --kubeconfig FILE` prints. A plain function returning a boxed future,
/// so that its caller does not compile the client's code for Deployments again.
///
/// # Errors
/// The future's: the kubeconfig cannot be used, the Deployment cannot be read, or
/// [`check_core_deployment`]'s.
pub fn read_and_check_core_deployment<'a>(
    kubeconfig: &'a Path,
    context: Option<String>,
    (namespace, name): (&'a str, &'a str),
    container: Option<&'a str>,
    want: &'a CoreSettings,
) -> Pin<Box<dyn Future<Output = Result<String, RunError>> + 'a>> {
    Box::pin(async move {
        let own = OwnRequests::default();
        let (client, _) = crate::run::own::kube_client(kubeconfig, context, &own).await?;
        let d = kube::Api::<Deployment>::namespaced(client, namespace)
            .get(name)
            .await
            .map_err(|source| RunError::Kube {
                what: format!("read core's Deployment {namespace}/{name}"),
                source,
            })?;
        check_core_deployment(want, &format!("{namespace}/{name}"), &d, container)
    })
}

/// Checks that `container` (default: the first) of core's Deployment `d`, named
/// `deployment`, runs with `want`; returns a note of the flags it runs with.
///
/// # Errors
/// No such container, a flag that does not parse, or flags whose values differ from
/// `want` (each named).
pub fn check_core_deployment(
    want: &CoreSettings,
    deployment: &str,
    d: &Deployment,
    container: Option<&str>,
) -> Result<String, RunError> {
    let pod = d.spec.as_ref().and_then(|s| s.template.spec.as_ref());
    let containers = pod.map(|p| p.containers.as_slice()).unwrap_or_default();
    let found = match container {
        Some(c) => containers.iter().find(|x| x.name == c),
        None => containers.first(),
    };
    let Some(found) = found else {
        return Err(RunError::CoreNoContainer {
            deployment: deployment.to_owned(),
            container: container.unwrap_or_default().to_owned(),
        });
    };
    // kong and clap read the whole argv after the program: the image's command beyond the
    // program, then the args (core's chart gives `core start` and the flags as args).
    let args: Vec<String> = found
        .command
        .iter()
        .flatten()
        .skip(1)
        .chain(found.args.iter().flatten())
        .cloned()
        .collect();
    let have = core_flags::read(&args).map_err(|source| RunError::CoreDeploymentFlag {
        deployment: deployment.to_owned(),
        source,
    })?;
    let differ: Vec<FlagDiff> = core_flags::differ(&have, want)
        .into_iter()
        .map(FlagDiff::from)
        .collect();
    if !differ.is_empty() {
        return Err(RunError::CoreDeploymentArgs {
            deployment: deployment.to_owned(),
            differ,
        });
    }
    Ok(format!(
        "core's container {} in {deployment} runs with the scenario's core settings (crossplane-core flags: {})",
        found.name,
        core_flags::args(&have).join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(args: &[&str]) -> Deployment {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "crossplane", "namespace": "crossplane-system"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "crossplane", "image": "xpkg.crossplane.io/crossplane/crossplane",
                 "args": args}
            ]}}}
        }))
        .unwrap()
    }

    #[test]
    fn cores_deployment_args_must_give_the_scenarios_core_settings() {
        let want = CoreSettings {
            max_reconcile_rate: 50,
            ..CoreSettings::default()
        };
        let d = deployment(&["core", "start", "--max-reconcile-rate=50", "--debug"]);
        let note = check_core_deployment(&want, "crossplane-system/crossplane", &d, None)
            .expect("the same settings");
        assert!(note.contains("--max-reconcile-rate=50"), "{note}");
        let d = deployment(&["core", "start", "--poll-interval=5s"]);
        let e = check_core_deployment(&want, "crossplane-system/crossplane", &d, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--max-reconcile-rate=100 (the scenario says 50), --poll-interval=5s (the scenario says 1m0s)"),
            "{e}"
        );
        let e = check_core_deployment(&want, "ns/core", &d, Some("core"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no container \"core\""), "{e}");
        let d = deployment(&["core", "start", "--sync-interval=never"]);
        let e = check_core_deployment(&want, "ns/core", &d, None).unwrap_err();
        assert!(matches!(e, RunError::CoreDeploymentFlag { .. }), "{e}");
    }
}
