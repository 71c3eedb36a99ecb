//! The two containers of ci/manifests as local processes: their command lines as the
//! rendered Deployments give them (args, env, the mock-cloud ConfigMap), rewritten only
//! where a pod and a process differ ([`processes`]), and the least-privilege check of
//! the requests the provider made against the RBAC bound to its ServiceAccount
//! ([`check_rbac`]). `cargo xtask validate` runs them: probes, a Bucket made Ready,
//! SIGTERM within the grace period.
//!
//! Differences from a pod, and only these: loopback ports instead of the Service
//! addresses, a kubeconfig instead of in-cluster config, a mock-apiserver instead of kind.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::need::{Objects, items, str_of};

/// A container's command line as a local process.
#[derive(Debug, PartialEq)]
pub struct Process {
    /// The Deployment's (and its container's) name.
    pub name: &'static str,
    pub args: Vec<String>,
    /// The container's env, in its order, with the local values.
    pub env: Vec<(String, String)>,
    /// The readiness and liveness probes' HTTP paths.
    pub probes: Vec<String>,
    /// The local port its container port 8080 became.
    pub port: u16,
    /// The files of its ConfigMap volumes: where they go, their text.
    pub files: Vec<(PathBuf, String)>,
}

/// The ServiceAccount the provider runs as.
pub const PROVIDER_ACCOUNT: (&str, &str) = ("loadtest-system", "provider");

/// The container port 8080 on all interfaces becomes `port` on loopback.
fn local(value: &str, port: u16) -> String {
    value.replace("0.0.0.0:8080", &format!("127.0.0.1:{port}"))
}

/// mock-cloud's and the provider's command lines from the rendered stack `docs`: their
/// ports 8080 moved to `cloud_port` and `metrics_port`, ConfigMap volumes as files under
/// `dir`, the provider pointed at mock-cloud on loopback and at `dir`/kubeconfig. Also
/// the provider's termination grace period, in seconds.
pub fn processes(
    docs: &[Value],
    dir: &Path,
    cloud_port: u16,
    metrics_port: u16,
) -> Result<(Vec<Process>, u64), String> {
    let by = Objects::new(docs);
    let mut out = Vec::new();
    let mut grace = None;
    for (name, port) in [("mock-cloud", cloud_port), ("provider", metrics_port)] {
        let pod = &by.get("Deployment", name)["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        if c.is_null() {
            return Err(format!("no Deployment {name} with a container"));
        }
        let mut args: Vec<String> = items(&c["args"])
            .iter()
            .map(|a| local(str_of(a), port))
            .collect();
        let mut env = Vec::new();
        for e in items(&c["env"]) {
            let value = e["value"]
                .as_str()
                .ok_or_else(|| format!("{name}: env {} has no plain value", e["name"]))?;
            env.push((str_of(&e["name"]).to_owned(), local(value, port)));
        }
        let mut files = Vec::new();
        for mount in items(&c["volumeMounts"]) {
            let volume = items(&pod["volumes"])
                .iter()
                .find(|v| v["name"] == mount["name"])
                .ok_or_else(|| format!("{name}: no volume {}", mount["name"]))?;
            let cm = by.get("ConfigMap", str_of(&volume["configMap"]["name"]));
            let data = cm["data"]
                .as_object()
                .ok_or_else(|| format!("{name}: volume {} is no ConfigMap's", mount["name"]))?;
            let local_dir = dir.join(format!("{name}-{}", str_of(&mount["name"])));
            for (key, text) in data {
                files.push((local_dir.join(key), str_of(text).to_owned()));
            }
            let mount_path = str_of(&mount["mountPath"]);
            let local_dir = local_dir.display().to_string();
            for a in &mut args {
                *a = a.replace(mount_path, &local_dir);
            }
        }
        if name == "provider" {
            let svc = by.get("Service", "mock-cloud");
            let http = items(&svc["spec"]["ports"])
                .iter()
                .find(|p| p["name"] == "http")
                .map(|p| p["port"].clone())
                .unwrap_or_default();
            let expected = format!(
                "http://{}.{}.svc:{http}",
                str_of(&svc["metadata"]["name"]),
                str_of(&svc["metadata"]["namespace"])
            );
            let endpoint = set(
                &mut env,
                "PROVIDER_CLOUD_ENDPOINT",
                format!("http://127.0.0.1:{cloud_port}"),
            );
            if endpoint.as_deref() != Some(expected.as_str()) {
                return Err(format!(
                    "PROVIDER_CLOUD_ENDPOINT is {endpoint:?}, the Service is {expected}"
                ));
            }
            set(
                &mut env,
                "PROVIDER_KUBECONFIG",
                dir.join("kubeconfig").display().to_string(),
            );
            grace = pod["terminationGracePeriodSeconds"].as_u64();
        }
        let probes = ["readinessProbe", "livenessProbe"]
            .iter()
            .map(|p| {
                c[p]["httpGet"]["path"]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{name}: no {p} with an httpGet path"))
            })
            .collect::<Result<_, _>>()?;
        out.push(Process {
            name,
            args,
            env,
            probes,
            port,
            files,
        });
    }
    let grace = grace.ok_or("the provider's pod has no terminationGracePeriodSeconds")?;
    Ok((out, grace))
}

/// Sets `name` in `env` (in place when present, else at the end); returns its old value.
fn set(env: &mut Vec<(String, String)>, name: &str, value: String) -> Option<String> {
    match env.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => Some(std::mem::replace(v, value)),
        None => {
            env.push((name.to_owned(), value));
            None
        }
    }
}

/// Rules and the namespace they hold in (`None`: cluster-wide).
type Grant<'a> = (Option<&'a str>, &'a [Value]);

/// The rules granted to the ServiceAccount `account` (namespace, name) by the bindings of
/// `docs`: each with the namespace it holds in (`None`: cluster-wide).
fn grants<'a>(docs: &'a [Value], account: (&str, &str)) -> Result<Vec<Grant<'a>>, String> {
    let mut out = Vec::new();
    for b in docs {
        let kind = str_of(&b["kind"]);
        if kind != "RoleBinding" && kind != "ClusterRoleBinding" {
            continue;
        }
        let bound = items(&b["subjects"]).iter().any(|s| {
            s["kind"] == "ServiceAccount" && s["name"] == account.1 && s["namespace"] == account.0
        });
        if !bound {
            continue;
        }
        let ns = (kind == "RoleBinding").then(|| str_of(&b["metadata"]["namespace"]));
        let role_ref = &b["roleRef"];
        let role_ns = if role_ref["kind"] == "Role" {
            ns.unwrap_or_default()
        } else {
            ""
        };
        let role = docs
            .iter()
            .find(|d| {
                d["kind"] == role_ref["kind"]
                    && d["metadata"]["name"] == role_ref["name"]
                    && str_of(&d["metadata"]["namespace"]) == role_ns
            })
            .ok_or_else(|| {
                format!(
                    "{kind} {}: no {} {}",
                    b["metadata"]["name"], role_ref["kind"], role_ref["name"]
                )
            })?;
        out.push((ns, items(&role["rules"])));
    }
    Ok(out)
}

/// Checks that every request of mock-apiserver's journal `entries` the provider made (not
/// kubectl's, not discovery) is allowed by the RBAC bound to its ServiceAccount in `docs`;
/// returns a summary of what it did.
pub fn check_rbac(docs: &[Value], entries: &[Value]) -> Result<String, Vec<String>> {
    let grants = grants(docs, PROVIDER_ACCOUNT).map_err(|e| vec![e])?;
    let allowed = |e: &Value| {
        grants.iter().any(|(ns, rules)| {
            ns.is_none_or(|ns| e["namespace"] == ns)
                && rules.iter().any(|r| {
                    items(&r["verbs"]).contains(&e["verb"])
                        && items(&r["apiGroups"]).contains(&e["group"])
                        && items(&r["resources"]).contains(&e["resource"])
                })
        })
    };
    let mine: Vec<&Value> = entries
        .iter()
        .filter(|e| !str_of(&e["userAgent"]).starts_with("kubectl") && e["verb"] != "discovery")
        .collect();
    let denied: BTreeSet<String> = mine
        .iter()
        .filter(|e| !allowed(e))
        .map(|e| {
            let ns = str_of(&e["namespace"]);
            format!(
                "not allowed by the provider's RBAC: verb={} group={:?} resource={} namespace={}",
                str_of(&e["verb"]),
                str_of(&e["group"]),
                str_of(&e["resource"]),
                if ns.is_empty() { "*" } else { ns }
            )
        })
        .collect();
    if !denied.is_empty() {
        return Err(denied.into_iter().collect());
    }
    if mine.is_empty() {
        return Err(vec!["no provider requests in the journal".to_owned()]);
    }
    let kinds: BTreeSet<String> = mine
        .iter()
        .map(|e| format!("{} {}", str_of(&e["verb"]), str_of(&e["resource"])))
        .collect();
    Ok(format!(
        "{} provider requests, all allowed by its RBAC: {}",
        mine.len(),
        kinds.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::validate::need::{documents, tests::mutate};

    fn stack() -> Vec<Value> {
        documents(include_str!("fixtures/stack.yaml"), "stack.yaml").unwrap()
    }

    #[test]
    fn the_command_lines_are_the_deployments_with_local_addresses() {
        let dir = Path::new("/scratch");
        let (ps, grace) = processes(&stack(), dir, 1001, 1002).unwrap();
        assert_eq!(grace, 45);
        let [cloud, provider] = &ps[..] else {
            panic!("{ps:?}")
        };
        assert_eq!(cloud.name, "mock-cloud");
        assert_eq!(cloud.port, 1001);
        assert!(
            cloud.args.contains(&"--listen=127.0.0.1:1001".to_owned()),
            "{:?}",
            cloud.args
        );
        assert!(
            cloud
                .args
                .contains(&"--config=/scratch/mock-cloud-config/config.yaml".to_owned()),
            "{:?}",
            cloud.args
        );
        assert_eq!(
            cloud.files,
            [(
                PathBuf::from("/scratch/mock-cloud-config/config.yaml"),
                "(left out)".to_owned()
            )]
        );
        assert_eq!(cloud.probes, ["/admin/v1/summary", "/metrics"]);
        let env = |name: &str| {
            provider
                .env
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(
            env("PROVIDER_CLOUD_ENDPOINT"),
            Some("http://127.0.0.1:1001")
        );
        assert_eq!(env("PROVIDER_METRICS_ADDR"), Some("127.0.0.1:1002"));
        assert_eq!(env("PROVIDER_KUBECONFIG"), Some("/scratch/kubeconfig"));
        assert_eq!(provider.env.last().unwrap().0, "PROVIDER_KUBECONFIG");
        assert_eq!(provider.probes, ["/readyz", "/healthz"]);
    }

    #[test]
    fn an_endpoint_that_is_not_the_service_is_refused() {
        let broken = mutate(
            &stack(),
            "Service",
            "mock-cloud",
            "/metadata/name",
            Some(json!("cloud")),
        );
        let err = processes(&broken, Path::new("/x"), 1, 2).unwrap_err();
        assert!(
            err.contains("no Deployment mock-cloud") || err.contains("the Service is"),
            "{err}"
        );
        let broken = mutate(
            &stack(),
            "Service",
            "mock-cloud",
            "/spec/ports/0/port",
            Some(json!(9090)),
        );
        let err = processes(&broken, Path::new("/x"), 1, 2).unwrap_err();
        assert!(
            err.contains("the Service is http://mock-cloud.loadtest-system.svc:9090"),
            "{err}"
        );
    }

    fn entry(verb: &str, group: &str, resource: &str, namespace: Option<&str>) -> Value {
        json!({"verb": verb, "group": group, "resource": resource, "namespace": namespace,
               "userAgent": "provider/0.1"})
    }

    #[test]
    fn requests_the_rbac_allows_pass_and_others_are_named() {
        let s = stack();
        let ok = [
            entry("list", "mockcloud.example.org", "buckets", None),
            entry(
                "update",
                "mockcloud.example.org",
                "buckets/status",
                Some("harness-pods"),
            ),
            entry("watch", "", "secrets", Some("loadtest-system")),
            json!({"verb": "delete", "group": "", "resource": "pods", "namespace": null, "userAgent": "kubectl/v1.32"}),
            json!({"verb": "discovery", "group": "", "resource": "", "namespace": null, "userAgent": "provider"}),
        ];
        let summary = check_rbac(&s, &ok).unwrap();
        assert!(summary.starts_with("3 provider requests, all allowed by its RBAC: list buckets, update buckets/status, watch secrets"), "{summary}");

        let mut bad = ok.to_vec();
        bad.push(entry("list", "", "secrets", Some("default")));
        bad.push(entry(
            "delete",
            "mockcloud.example.org",
            "buckets",
            Some("x"),
        ));
        assert_eq!(
            check_rbac(&s, &bad).unwrap_err(),
            [
                "not allowed by the provider's RBAC: verb=delete group=\"mockcloud.example.org\" resource=buckets namespace=x",
                "not allowed by the provider's RBAC: verb=list group=\"\" resource=secrets namespace=default",
            ]
        );
        assert_eq!(
            check_rbac(&s, &ok[3..]).unwrap_err(),
            ["no provider requests in the journal"]
        );
    }

    #[test]
    fn a_binding_of_another_account_grants_nothing() {
        let s = mutate(
            &stack(),
            "RoleBinding",
            "loadtest-provider-secrets",
            "/subjects/0/name",
            Some(json!("other")),
        );
        let err = check_rbac(
            &s,
            &[entry("watch", "", "secrets", Some("loadtest-system"))],
        )
        .unwrap_err();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].contains("resource=secrets"), "{err:?}");
    }
}
