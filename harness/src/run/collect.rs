//! Turning what the stack recorded into [`Observations`]: mock-cloud's journal, the API
//! server's journal, the watches, the cloud inventory and the custom resources at the end.

use kube::api::{Api, DynamicObject, ListParams};

use super::objects::{api_resource, namespace};
use super::phases::Driver;
use super::stack::Stack;
use crate::measure::{CloudResource, CustomResource};
use crate::result::{CallAction, CloudCall, Observations, ResourceTimes};
use crate::scenario::Scenario;

fn call_action(a: mock_cloud::Action) -> CallAction {
    match a {
        mock_cloud::Action::Create => CallAction::Create,
        mock_cloud::Action::Get => CallAction::Get,
        mock_cloud::Action::Update => CallAction::Update,
        mock_cloud::Action::Delete => CallAction::Delete,
        mock_cloud::Action::List => CallAction::List,
    }
}

pub(crate) fn kind_of(c: mock_cloud::Collection) -> &'static str {
    match c {
        mock_cloud::Collection::Buckets => "Bucket",
        mock_cloud::Collection::Databases => "Database",
        mock_cloud::Collection::Records => "Record",
    }
}

/// The samples of metric `name` in Prometheus text: each line's labels (without braces,
/// empty when it has none) and value.
pub(crate) fn prometheus_samples<'a>(
    text: &'a str,
    name: &'a str,
) -> impl Iterator<Item = (&'a str, f64)> + 'a {
    text.lines().filter_map(move |line| {
        let rest = line.strip_prefix(name)?;
        let (labels, value) = if let Some(rest) = rest.strip_prefix('{') {
            rest.rsplit_once("} ")?
        } else {
            ("", rest.strip_prefix(' ')?)
        };
        Some((labels, value.trim().parse::<f64>().ok()?))
    })
}

/// The value of label `key` in a sample's labels (values without commas or quotes).
pub(crate) fn label_value<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels
        .split(',')
        .find_map(|l| l.strip_prefix(key)?.strip_prefix("=\"")?.strip_suffix('"'))
}

/// Whether a sample's labels include `key="value"`.
pub(crate) fn has_label(labels: &str, key: &str, value: &str) -> bool {
    label_value(labels, key) == Some(value)
}

/// How much a counter grew between two scrapes; a counter that went down was reset (its
/// process restarted), so all of its new value is growth.
pub(crate) fn counter_increase(before: u64, now: u64) -> u64 {
    if now >= before { now - before } else { now }
}

/// A counter's value in Prometheus text (summed over its label sets).
pub(crate) fn prometheus_counter(text: &str, name: &str) -> u64 {
    prometheus_samples(text, name).map(|(_, v)| v).sum::<f64>() as u64
}

/// Everything the run observed.
pub(crate) async fn observations(
    s: &Scenario,
    stack: &mut Stack,
    driver: &Driver<'_>,
    partial: bool,
) -> Observations {
    let (calls, cloud_dropped, cloud_error) = match stack.cloud.calls_since(0).await {
        Ok((calls, dropped)) => (calls, dropped, false),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the cloud's journal");
            (Vec::new(), 0, true)
        }
    };
    let cloud_calls: Vec<CloudCall> = calls
        .into_iter()
        .filter_map(|c| {
            Some(CloudCall {
                at_us: c.at_us + stack.cloud_offset_us,
                account: c.account,
                action: call_action(c.action?),
                name: c.name,
                status: c.status,
                throttled: c.throttled,
            })
        })
        .collect();
    let (api_requests, api_measure, api_dropped) = stack.api_requests().await;
    if api_dropped > 0 || cloud_dropped > 0 {
        tracing::warn!(
            api_dropped,
            cloud_dropped,
            "journal entries were dropped: the result is partial"
        );
    }
    let seen = driver.tracker.lock().clone();
    let resources = driver
        .records
        .values()
        .map(|r| {
            let s = seen.get(&(r.kind.clone(), r.name.clone()));
            ResourceTimes {
                name: r.name.clone(),
                group: r.group.clone(),
                created_in: r.created_in.clone(),
                created_us: r.created_us,
                ready_us: s.and_then(|s| s.ready_us),
                deleted_us: r.deleted_us,
                gone_us: s.and_then(|s| s.gone_us),
                external_name: s.and_then(|s| s.external_name.clone()),
                expected_poll_s: r.expected_poll_s,
            }
        })
        .collect();
    let inventory = match stack.cloud.inventory().await {
        Ok(items) => items
            .into_iter()
            .map(|r| CloudResource {
                account: r.account,
                kind: mock_cloud::Collection::parse(&r.collection)
                    .map_or("?", kind_of)
                    .to_owned(),
                name: r.name,
                owner: None,
            })
            .collect(),
        Err(e) => {
            tracing::error!(error = %e, "cannot read the cloud's inventory");
            Vec::new()
        }
    };
    let mut custom_resources = Vec::new();
    let client = stack.client();
    let ns = namespace(s);
    let mut kinds: Vec<&str> = s
        .groups
        .iter()
        .map(|g| super::objects::kind_name(g.kind))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        let api: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), &ns, &api_resource(kind));
        match api.list(&ListParams::default()).await {
            Ok(list) => custom_resources.extend(list.items.into_iter().map(|o| {
                CustomResource {
                    kind: kind.to_owned(),
                    external_name: o
                        .metadata
                        .annotations
                        .as_ref()
                        .and_then(|a| a.get("crossplane.io/external-name"))
                        .cloned(),
                    name: o.metadata.name.unwrap_or_default(),
                }
            })),
            Err(e) => {
                tracing::warn!(error = %e, kind, "cannot list custom resources for the audit")
            }
        }
    }
    let provider_metrics = stack.provider_metrics().await;
    let mut versions = stack.describe();
    versions.insert("harness".to_owned(), env!("CARGO_PKG_VERSION").to_owned());
    versions.insert(
        "api requests measured by".to_owned(),
        api_measure.describe().to_owned(),
    );
    versions.insert(
        "journal entries dropped (api, cloud)".to_owned(),
        format!("{api_dropped}, {cloud_dropped}"),
    );
    versions.insert(
        "provider starts".to_owned(),
        stack.provider_starts.to_string(),
    );
    Observations {
        duration_us: stack.now_us(),
        phases: driver.spans.clone(),
        cloud_calls,
        api_requests,
        resources,
        inventory,
        custom_resources,
        provider_metrics,
        versions,
        partial: partial
            || cloud_error
            || api_dropped > 0
            || cloud_dropped > 0
            || driver.spans.iter().any(|p| !p.completed),
    }
}

#[cfg(test)]
mod tests {
    use super::prometheus_counter;

    #[test]
    fn a_counter_is_summed_over_its_label_sets() {
        let text = "# TYPE limiter_early_runs_total counter\n\
                    limiter_early_runs_total 3\n\
                    limiter_reservations_total{controller=\"a\"} 5\n\
                    limiter_reservations_total{controller=\"b\"} 7\n";
        assert_eq!(prometheus_counter(text, "limiter_reservations_total"), 12);
        assert_eq!(prometheus_counter(text, "limiter_early_runs_total"), 3);
        assert_eq!(prometheus_counter(text, "limiter_missing_total"), 0);
    }
}
