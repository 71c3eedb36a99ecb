//! A Composition's function pipeline, run as core runs it
//! (`composite/composition_functions.go`): one `RunFunction` per step, the desired state
//! and the context passed from each step to the next.
//!
//! # Semantics
//! - Every request carries the observed state, the desired state the previous step
//!   returned (the caller's for the first step), the context the previous step returned
//!   (an empty `Struct` for the first), the step's input and credentials, and core's
//!   capabilities (`xfn.SupportedCapabilities`).
//! - The pipeline's TTL is the smallest non-zero TTL any step returned.
//! - A FATAL result stops the pipeline at that step ([`PipelineError::Fatal`]); WARNING and
//!   NORMAL results are collected, as core collects them for events.
//! - One deadline covers every step, as core's reconcile deadline does.
//! - Not reproduced here: the request tag (core's SHA-256 of the deterministic encoding),
//!   requirements and their second call; those belong to the composite reconciler.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;

use super::error::FunctionError;
use super::proto::{
    Capability, Condition, Credentials, RequestMeta, Result as FnResult, RunFunctionRequest,
    Severity, State,
};
use super::runner::FunctionRunner;

/// Core's capabilities, in core's order (`xfn.SupportedCapabilities`).
pub const CAPABILITIES: [Capability; 5] = [
    Capability::Capabilities,
    Capability::RequiredResources,
    Capability::Credentials,
    Capability::Conditions,
    Capability::RequiredSchemas,
];

/// One pipeline step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    /// The step's name.
    pub step: String,
    /// The function it calls (`functionRef.name`).
    pub function: String,
    /// Its input.
    pub input: Option<super::proto::Struct>,
    /// Its credentials, by name.
    pub credentials: BTreeMap<String, Credentials>,
}

impl Step {
    /// Step `step` calls `function` with `input`.
    #[must_use]
    pub fn new(
        step: impl Into<String>,
        function: impl Into<String>,
        input: Option<super::proto::Struct>,
    ) -> Self {
        Step {
            step: step.into(),
            function: function.into(),
            input,
            credentials: BTreeMap::new(),
        }
    }
}

/// What a pipeline produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The last step's desired state.
    pub desired: State,
    /// The last step's context (core discards it; kept for tests).
    pub context: Option<super::proto::Struct>,
    /// Non-fatal results, with the step that returned each.
    pub results: Vec<(String, FnResult)>,
    /// Conditions, in order.
    pub conditions: Vec<Condition>,
    /// The smallest non-zero TTL, if any step returned one.
    pub ttl: Option<Duration>,
}

/// Why a pipeline stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A call failed.
    #[error("cannot run pipeline step {step:?}")]
    Call {
        /// The step.
        step: String,
        /// Why.
        #[source]
        source: FunctionError,
    },
    /// A step returned a FATAL result.
    #[error("pipeline step {step:?} returned a fatal result: {message}")]
    Fatal {
        /// The step.
        step: String,
        /// The result's message.
        message: String,
        /// The non-fatal results returned before it (with their steps), which core still
        /// records as events.
        results: Vec<(String, FnResult)>,
        /// The conditions returned up to it, which core still sets on the XR.
        conditions: Vec<Condition>,
    },
}

/// Runs `steps` in order through `runner`, from `observed` and an initial `desired`.
/// Every step is sent the observed state: a copy of it, the last step the state itself.
///
/// # Errors
/// A failed call or a FATAL result, naming the step.
pub async fn run(
    runner: &dyn FunctionRunner,
    steps: &[Step],
    mut observed: State,
    desired: State,
    deadline: Instant,
) -> Result<Outcome, PipelineError> {
    let mut outcome = Outcome {
        desired,
        context: Some(super::proto::Struct::default()),
        ..Outcome::default()
    };
    let last = steps.len().saturating_sub(1);
    for (i, step) in steps.iter().enumerate() {
        let observed = if i == last {
            std::mem::take(&mut observed)
        } else {
            observed.clone()
        };
        let request = RunFunctionRequest {
            meta: Some(RequestMeta {
                tag: String::new(),
                capabilities: CAPABILITIES.iter().map(|c| *c as i32).collect(),
            }),
            observed: Some(observed),
            desired: Some(std::mem::take(&mut outcome.desired)),
            input: step.input.clone(),
            context: outcome.context.take(),
            credentials: step.credentials.clone(),
            ..RunFunctionRequest::default()
        };
        let response = runner
            .run(&step.function, request, deadline)
            .await
            .map_err(|source| PipelineError::Call {
                step: step.step.clone(),
                source,
            })?;
        if let Some(ttl) = response
            .meta
            .as_ref()
            .and_then(|m| m.ttl)
            .and_then(|d| Duration::try_from(d).ok())
            && !ttl.is_zero()
            && outcome.ttl.is_none_or(|t| ttl < t)
        {
            outcome.ttl = Some(ttl);
        }
        outcome.desired = response.desired.unwrap_or_default();
        outcome.context = response.context;
        outcome.conditions.extend(response.conditions);
        for result in response.results {
            if result.severity() == Severity::Fatal {
                return Err(PipelineError::Fatal {
                    step: step.step.clone(),
                    message: result.message,
                    results: std::mem::take(&mut outcome.results),
                    conditions: std::mem::take(&mut outcome.conditions),
                });
            }
            outcome.results.push((step.step.clone(), result));
        }
    }
    Ok(outcome)
}
