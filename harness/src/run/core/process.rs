//! Crossplane core as a process (the process target with a core profile): what the
//! harness installs in mock-apiserver before core starts, how it knows core is up, and
//! what it reads of core at the end.
//!
//! # Semantics
//! - Before core starts, the harness creates (as itself, with its own `User-Agent`) what a
//!   user installs: Crossplane's CRDs (open ones for `CompositeResourceDefinition`,
//!   `Composition`, `CompositionRevision` and `Function`, unless the core profile's `crds`
//!   gives them), then the scenario's Functions, XRDs and Compositions, as the embedded
//!   core's start does. It does not create the XR kinds' CRDs: core's definition
//!   controller applies them, and a core that discovers its objects at start (the
//!   composer) finds them all.
//! - Core is up when every XRD's XR CRD exists (and, with a `metricsUrl`, core answers
//!   there): the run's objects are created after that.
//! - At the end, core's `metricsUrl` is read once (`function_run_function_request_total`
//!   by `function_name`) before SIGTERM. Core's requests are those of the journal whose
//!   `User-Agent` starts with the profile's `userAgent`; XR readiness comes from the
//!   harness's watches, as for the embedded core. A process's circuit breakers and its
//!   per-phase counters cannot be read: their checks are UNMEASURED (and `functionCalls`
//!   without a `metricsUrl`).

use std::collections::BTreeMap;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, Composition, Function};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

use super::measure::{CoreSide, report_of};
use super::xrs::XrLog;
use crate::result::core::CoreReport;
use crate::run::clock::{Epoch, RunClock};
use crate::run::error::RunError;
use crate::run::prometheus::{label_value, samples};
use crate::run::source::watches::SeenMap;
use crate::scenario::Scenario;

/// How long core has to apply its XR CRDs after it starts.
pub const CORE_START_TIMEOUT: Duration = Duration::from_secs(60);

fn setup(what: &str, e: impl std::fmt::Display) -> RunError {
    RunError::CoreSetup(format!("{what}: {e}"))
}

/// What a scenario asks of core that a core in another process cannot do, if anything.
#[must_use]
pub fn unsupported(s: &Scenario) -> Option<String> {
    if let Some(p) = s
        .phases
        .iter()
        .find(|p| matches!(p.action, crate::scenario::Action::FunctionFault { .. }))
    {
        return Some(format!(
            "phase {} is a functionFault, which switches the built-in function inside the harness's process; core's built-in function runs inside core's process here (run it embedded, or serve a function of your own that fails)",
            p.name
        ));
    }
    if !s.composites.core.request_latency.is_zero() {
        return Some(
            "core.requestLatency delays the embedded core's requests; a core process talks to mock-apiserver over loopback with its own latency (leave requestLatency out)".to_owned(),
        );
    }
    None
}

/// Creates what a user installs before core starts (see the module's semantics), through
/// `client` (the harness's). `crossplane_crds`: whether to create open CRDs of
/// Crossplane's kinds (not when the core profile gives its own).
///
/// # Errors
/// [`RunError::CoreSetup`] when an object cannot be created.
pub async fn install(
    client: &kube::Client,
    s: &Scenario,
    crossplane_crds: bool,
) -> Result<(), RunError> {
    let post = PostParams::default();
    if crossplane_crds {
        let crds = Api::<CustomResourceDefinition>::all(client.clone());
        for crd in super::embedded::crossplane_crds() {
            crds.create(&post, &crd)
                .await
                .map_err(|e| setup("cannot install Crossplane's CRDs", e))?;
        }
    }
    let composites = &s.composites;
    for f in &composites.functions {
        let function: Function = serde_json::from_value(f.body.clone())
            .map_err(|e| setup(&format!("Function {}", f.name), e))?;
        Api::<Function>::all(client.clone())
            .create(&post, &function)
            .await
            .map_err(|e| setup(&format!("cannot create Function {}", f.name), e))?;
    }
    for xrd in &composites.xrds {
        let name = xrd.metadata.name.clone().unwrap_or_default();
        Api::<CompositeResourceDefinition>::all(client.clone())
            .create(&post, xrd)
            .await
            .map_err(|e| setup(&format!("cannot create XRD {name}"), e))?;
    }
    for comp in &composites.compositions {
        let name = comp.metadata.name.clone().unwrap_or_default();
        Api::<Composition>::all(client.clone())
            .create(&post, comp)
            .await
            .map_err(|e| setup(&format!("cannot create Composition {name}"), e))?;
    }
    Ok(())
}

/// The names of the XR CRDs core applies, one per XRD.
#[must_use]
pub fn xr_crd_names(s: &Scenario) -> Vec<String> {
    s.composites
        .xrds
        .iter()
        .map(|x| format!("{}.{}", x.spec.names.plural, x.spec.group))
        .collect()
}

/// Waits until every XR CRD exists (at most until `deadline`), calling `running` between
/// looks so a core that exited says why.
///
/// # Errors
/// What `running` returns, or [`RunError::CoreSetup`] naming the CRDs still missing.
pub async fn wait_for_xr_crds(
    client: &kube::Client,
    s: &Scenario,
    deadline: Instant,
    running: impl Fn() -> Result<(), RunError>,
) -> Result<(), RunError> {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    loop {
        let mut missing = Vec::new();
        for name in xr_crd_names(s) {
            if crds.get_opt(&name).await.ok().flatten().is_none() {
                missing.push(name);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        running()?;
        if Instant::now() >= deadline {
            return Err(RunError::CoreSetup(format!(
                "core did not apply the XR CRDs {} within {:?} of its start (its log says why)",
                missing.join(", "),
                CORE_START_TIMEOUT
            )));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Core's function calls per function in its metrics text
/// (`function_run_function_request_total`, summed over its other labels).
#[must_use]
pub fn function_calls(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (labels, v) in samples(text, "function_run_function_request_total") {
        let f = label_value(labels, "function_name").unwrap_or_default();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = v.max(0.0) as u64;
        *out.entry(f.to_owned()).or_default() += n;
    }
    out
}

/// What a core process did: its requests in `apiserver`'s journal by `user_agent`, its
/// function calls (`None`: its metrics were not read, or could not be), the XRs from `log`
/// and what the watches `seen`; the rest UNMEASURED.
#[must_use]
pub fn report(
    user_agent: &str,
    function_calls: Result<BTreeMap<String, u64>, String>,
    apiserver: &mock_apiserver::ApiServer,
    clocks: (Epoch, RunClock),
    xrs: (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let (calls, calls_missing) = match function_calls {
        Ok(c) => (c, None),
        Err(why) => (BTreeMap::new(), Some(why)),
    };
    let side = CoreSide {
        user_agent,
        function_calls: calls,
        function_responses: BTreeMap::new(),
        function_seconds: BTreeMap::new(),
        function_buckets: BTreeMap::new(),
        breakers: &[],
    };
    let mut r = report_of(&side, apiserver, clocks, xrs);
    r.unmeasured.insert(
        "breakerOpens".to_owned(),
        "core ran as a process: its circuit breakers are inside it, and the harness reads no breaker metrics from it".to_owned(),
    );
    r.unmeasured.insert(
        "phases".to_owned(),
        "core ran as a process: its share of each phase (function calls, reconciles, breakers at the phase's start and end) is read only from the embedded core".to_owned(),
    );
    if let Some(why) = calls_missing {
        r.unmeasured.insert("functionCalls".to_owned(), why);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_calls_are_summed_by_function_over_the_other_labels() {
        let text = "# TYPE function_run_function_request_total counter\nfunction_run_function_request_total{function_name=\"resources\",grpc_method=\"RunFunction\"} 12\nfunction_run_function_request_total{function_name=\"resources\",grpc_method=\"Other\"} 3\nfunction_run_function_request_total{function_name=\"kcl\",grpc_method=\"RunFunction\"} 4\nfunction_run_function_response_total{function_name=\"kcl\"} 9\n";
        let calls = function_calls(text);
        assert_eq!(calls.get("resources"), Some(&15));
        assert_eq!(calls.get("kcl"), Some(&4));
        assert_eq!(calls.len(), 2);
    }
}
