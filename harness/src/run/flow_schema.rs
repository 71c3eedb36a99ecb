//! The FlowSchema that sets a provider's API requests apart in the API server's metrics
//! ([`PROVIDER_FLOW_SCHEMA`], which `--api-requests-from metrics` reads): its manifest for
//! any ServiceAccount (`harness flowschema`), and the check that the one installed selects
//! the provider's pods' ServiceAccount, without which it would count another client's
//! requests, or none.

use kube::api::{Api, ApiResource, DynamicObject};

use super::error::RunError;
use super::source::report::PROVIDER_FLOW_SCHEMA;

/// The FlowSchema's manifest for the ServiceAccount `namespace/name`, what
/// `ci/manifests/provider-flowschema.yaml` holds for `loadtest-system/provider`.
#[must_use]
pub fn manifest(namespace: &str, name: &str) -> String {
    format!(
        "# Labels the provider's requests in the API server's own metrics: every request of its
# ServiceAccount is counted under flow_schema=\"{PROVIDER_FLOW_SCHEMA}\" in
# apiserver_flowcontrol_dispatched_requests_total (and the other apiserver_flowcontrol_*
# series), apart from the harness's and the system's requests, which
# apiserver_request_total mixes. It keeps the priority level that service accounts get
# by default (workload-low), so it changes no limit. Precedence 1000: after the system
# schemas (up to 900), before the catch-all `service-accounts` (9000).
# `harness flowschema --service-account {namespace}/{name}` prints it; another provider's
# pods run as another ServiceAccount: give its NAMESPACE/NAME.
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: {PROVIDER_FLOW_SCHEMA}
spec:
  matchingPrecedence: 1000
  priorityLevelConfiguration:
    name: workload-low
  distinguisherMethod:
    type: ByUser
  rules:
    - subjects:
        - kind: ServiceAccount
          serviceAccount:
            name: {name}
            namespace: {namespace}
      resourceRules:
        - verbs: [\"*\"]
          apiGroups: [\"*\"]
          resources: [\"*\"]
          clusterScope: true
          namespaces: [\"*\"]
      nonResourceRules:
        - verbs: [\"*\"]
          nonResourceURLs: [\"*\"]
"
    )
}

/// The ServiceAccounts (`namespace/name`) a FlowSchema's rules select.
fn service_accounts(flow_schema: &serde_json::Value) -> Vec<String> {
    let empty = Vec::new();
    let rules = flow_schema
        .pointer("/spec/rules")
        .and_then(|r| r.as_array())
        .unwrap_or(&empty);
    rules
        .iter()
        .filter_map(|r| r.get("subjects")?.as_array())
        .flatten()
        .filter_map(|s| {
            let sa = s.get("serviceAccount")?;
            Some(format!(
                "{}/{}",
                sa.get("namespace")?.as_str()?,
                sa.get("name")?.as_str()?
            ))
        })
        .collect()
}

/// Checks that the cluster's FlowSchema [`PROVIDER_FLOW_SCHEMA`], if there is one, selects
/// `service_account` (`namespace/name`, the provider's pods'). None installed, or one the
/// harness may not read: nothing to check.
///
/// # Errors
/// [`RunError::FlowSchemaSubject`]: it selects other ServiceAccounts.
pub async fn check(client: &kube::Client, service_account: &str) -> Result<(), RunError> {
    let resource = ApiResource {
        group: "flowcontrol.apiserver.k8s.io".to_owned(),
        version: "v1".to_owned(),
        api_version: "flowcontrol.apiserver.k8s.io/v1".to_owned(),
        kind: "FlowSchema".to_owned(),
        plural: "flowschemas".to_owned(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let found = match api.get_opt(PROVIDER_FLOW_SCHEMA).await {
        Ok(found) => found,
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the FlowSchema {PROVIDER_FLOW_SCHEMA}");
            return Ok(());
        }
    };
    let Some(fs) = found else {
        return Ok(());
    };
    let selects = service_accounts(&fs.data);
    if selects.iter().any(|s| s == service_account) {
        return Ok(());
    }
    Err(RunError::FlowSchemaSubject {
        selects,
        provider: service_account.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_selects_the_service_account_it_is_given() {
        let text = manifest("crossplane-system", "provider-aws-s3");
        let value: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
        assert_eq!(value["metadata"]["name"], PROVIDER_FLOW_SCHEMA);
        assert_eq!(
            service_accounts(&value),
            ["crossplane-system/provider-aws-s3"]
        );
    }

    /// A client whose API server holds the FlowSchema of `manifest(namespace, name)`.
    fn serving(namespace: &'static str, name: &'static str) -> kube::Client {
        let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
            let path = req.uri().path().to_owned();
            async move {
                let want = format!(
                    "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/{PROVIDER_FLOW_SCHEMA}"
                );
                let value: serde_json::Value =
                    serde_saphyr::from_str(&manifest(namespace, name)).expect("YAML");
                let (status, body) = if path == want {
                    (200, value)
                } else {
                    (404, serde_json::json!({"kind": "Status", "code": 404}))
                };
                Ok::<_, std::convert::Infallible>(
                    http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json")
                        .body(kube::client::Body::from(serde_json::to_vec(&body).unwrap()))
                        .unwrap(),
                )
            }
        });
        kube::Client::new(service, "default")
    }

    #[tokio::test]
    async fn a_flow_schema_that_selects_another_service_account_is_refused_with_the_fix() {
        let client = serving("loadtest-system", "provider");
        assert!(check(&client, "loadtest-system/provider").await.is_ok());
        let e = check(&client, "crossplane-system/provider-aws-s3")
            .await
            .expect_err("another ServiceAccount")
            .to_string();
        assert_eq!(
            e,
            "the FlowSchema loadtest-provider selects ServiceAccount loadtest-system/provider, and the provider's pods run as crossplane-system/provider-aws-s3: it would count another client's requests, not the provider's; select the provider's with `harness flowschema --service-account crossplane-system/provider-aws-s3 | kubectl apply -f -`"
        );
    }
}
