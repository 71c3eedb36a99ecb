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
//!   controller applies them, and a core that reads its Functions at start (the
//!   composer) finds them all.
//! - Core is up when every XRD's XR CRD exists (and, with a `metricsUrl`, core answers
//!   there): the run's objects are created after that.
//! - At the end, core's `metricsUrl` is read once before SIGTERM: its function calls
//!   (`function_run_function_request_total` by `function_name`), responses, seconds and
//!   latency histogram (`function_run_function_response_total`,
//!   `function_run_function_seconds`, its buckets when they are Prometheus' default ones,
//!   as core's are). Core's requests are those of the journal whose
//!   `User-Agent` starts with the profile's `userAgent`; XR readiness comes from the
//!   harness's watches, as for the embedded core. With a `metricsUrl`, the same function
//!   metrics are read at every phase's start and end too, so each phase has its function
//!   calls, the responses core's deadline ended and its latency (its reconciles are not
//!   read: 0 in `result.json`). A process's circuit breakers cannot be read: their checks
//!   are UNMEASURED, over the run and per phase (and `functionCalls` without a
//!   `metricsUrl`, or every per-phase check when a phase's read failed).

use std::collections::BTreeMap;
use std::time::Duration;

use composer::api::{CompositeResourceDefinition, Composition, Function};
use composer::function::metrics::SECONDS_BUCKETS;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

use super::measure::{CoreSide, report_of};
use super::xrs::XrLog;
use crate::result::core::{CoreReport, FunctionLatency};
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

/// Core's function figures, per function, from its metrics text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FunctionFigures {
    /// `function_run_function_request_total`, summed over its other labels.
    pub calls: BTreeMap<String, u64>,
    /// `function_run_function_response_total` and `function_run_function_seconds_sum`,
    /// summed likewise, and `function_run_function_seconds_bucket` by bound, cumulative,
    /// for the functions whose bounds are Prometheus' default ones ([`SECONDS_BUCKETS`]).
    pub latency: FunctionLatency,
}

/// Reads [`FunctionFigures`] from core's metrics text: each series summed by
/// `function_name` over its other labels.
#[must_use]
pub fn function_figures(text: &str) -> FunctionFigures {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let count = |v: f64| v.max(0.0) as u64;
    let by_function = |name: &str| {
        let mut out: BTreeMap<String, f64> = BTreeMap::new();
        for (labels, v) in samples(text, name) {
            let f = label_value(labels, "function_name").unwrap_or_default();
            *out.entry(f.to_owned()).or_default() += v;
        }
        out
    };
    let counts = |name: &str| -> BTreeMap<String, u64> {
        by_function(name)
            .into_iter()
            .map(|(f, v)| (f, count(v)))
            .collect()
    };
    let mut bounds: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    for (labels, v) in samples(text, "function_run_function_seconds_bucket") {
        let f = label_value(labels, "function_name").unwrap_or_default();
        let Some(le) = label_value(labels, "le").and_then(|le| le.parse::<f64>().ok()) else {
            continue;
        };
        if le.is_finite() {
            *bounds
                .entry(f.to_owned())
                .or_default()
                .entry(le.to_bits())
                .or_default() += count(v);
        }
    }
    let default: Vec<u64> = SECONDS_BUCKETS.iter().map(|b| b.to_bits()).collect();
    let buckets = bounds
        .into_iter()
        .filter(|(_, by_bound)| by_bound.keys().copied().eq(default.iter().copied()))
        .map(|(f, by_bound)| {
            let n = default.iter().map(|b| by_bound[b]).collect();
            (f, n)
        })
        .collect();
    FunctionFigures {
        calls: counts("function_run_function_request_total"),
        latency: FunctionLatency {
            responses: counts("function_run_function_response_total"),
            seconds: by_function("function_run_function_seconds_sum"),
            buckets,
        },
    }
}

/// Core's function figures from its metrics at `url` (`remote`, `path`), read at the run's
/// end; `Err` says why they were not.
///
/// # Errors
/// The metrics could not be read.
pub async fn read_function_figures(
    remote: &crate::run::remote::Remote,
    path: &str,
    url: &str,
) -> Result<FunctionFigures, String> {
    remote
        .get_text(path)
        .await
        .map(|text| function_figures(&text))
        .map_err(|e| format!("core's metrics at {url} could not be read at the end: {e}"))
}

/// What a core process did: its requests in the API server's `journal` by `user_agent`, its
/// function figures (`Err`: its metrics were not read, or could not be, and why), the XRs
/// from `log` and what the watches `seen`; the rest UNMEASURED.
#[must_use]
pub fn report(
    user_agent: &str,
    functions: Result<FunctionFigures, String>,
    journal: &[mock_apiserver::Entry],
    clocks: (Epoch, RunClock),
    xrs: (&XrLog, &SeenMap, &[String]),
) -> CoreReport {
    let (figures, calls_missing) = match functions {
        Ok(f) => (f, None),
        Err(why) => (FunctionFigures::default(), Some(why)),
    };
    let side = CoreSide {
        user_agent,
        function_calls: figures.calls,
        latency: figures.latency,
        breakers: &[],
    };
    let unread = &xrs.0.unread_phases;
    let mut r = report_of(&side, journal, clocks, xrs);
    let breakers = "core ran as a process: its circuit breakers are inside it, and the harness reads no breaker metrics from it";
    r.unmeasured
        .insert("breakerOpens".to_owned(), breakers.to_owned());
    r.unmeasured
        .insert("phases/breakerOpens".to_owned(), breakers.to_owned());
    if let Some(why) = calls_missing {
        // Without its metrics no phase's function calls were read either.
        r.unmeasured
            .insert("phases/functionCalls".to_owned(), why.clone());
        r.unmeasured.insert("functionCalls".to_owned(), why);
    }
    if !unread.is_empty() {
        r.unmeasured.insert(
            "phases".to_owned(),
            format!(
                "core's metrics could not be read at the start or end of phase {}",
                unread.join(", ")
            ),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_calls_are_summed_by_function_over_the_other_labels() {
        let text = "# TYPE function_run_function_request_total counter\nfunction_run_function_request_total{function_name=\"resources\",grpc_method=\"RunFunction\"} 12\nfunction_run_function_request_total{function_name=\"resources\",grpc_method=\"Other\"} 3\nfunction_run_function_request_total{function_name=\"kcl\",grpc_method=\"RunFunction\"} 4\nfunction_run_function_response_total{function_name=\"kcl\"} 9\n";
        let f = function_figures(text);
        assert_eq!(f.calls.get("resources"), Some(&15));
        assert_eq!(f.calls.get("kcl"), Some(&4));
        assert_eq!(f.calls.len(), 2);
        assert_eq!(f.latency.responses.get("kcl"), Some(&9));
    }

    #[test]
    fn the_latency_histogram_is_summed_by_function_when_its_buckets_are_prometheus_defaults() {
        let mut text = String::new();
        // Two label sets of `resources` (codes OK and Unknown), one of `odd` with other
        // bounds.
        for (code, n) in [("OK", 3), ("Unknown", 1)] {
            for b in SECONDS_BUCKETS {
                text.push_str(&format!(
                    "function_run_function_seconds_bucket{{function_name=\"resources\",grpc_code=\"{code}\",le=\"{b}\"}} {}\n",
                    if b >= 0.1 { n } else { 0 }
                ));
            }
            text.push_str(&format!(
                "function_run_function_seconds_bucket{{function_name=\"resources\",grpc_code=\"{code}\",le=\"+Inf\"}} {n}\nfunction_run_function_seconds_sum{{function_name=\"resources\",grpc_code=\"{code}\"}} 0.25\n"
            ));
        }
        text.push_str("function_run_function_seconds_bucket{function_name=\"odd\",le=\"1\"} 2\nfunction_run_function_seconds_bucket{function_name=\"odd\",le=\"+Inf\"} 2\n");
        let f = function_figures(&text);
        assert_eq!(
            f.latency.buckets.get("resources"),
            Some(&vec![0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4])
        );
        assert_eq!(f.latency.seconds.get("resources"), Some(&0.5));
        assert!(!f.latency.buckets.contains_key("odd"));
    }
}
