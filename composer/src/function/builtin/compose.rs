//! What the built-in function computes from a request and a validated input.

use serde_json::{Map, Value};

use super::input::{Input, Readiness, Template};
use crate::function::proto::{
    Ready, Resource, ResponseMeta, RunFunctionRequest, RunFunctionResponse, State,
};
use crate::function::response;
use crate::function::value::{from_struct, to_duration, to_struct, to_value};

/// The context key under which the function lists the names of the resources it composed.
pub const CONTEXT_KEY: &str = "composer.loadtest.dev/composed";

/// Why a request cannot be composed; answered as a FATAL result.
#[derive(Debug, thiserror::Error)]
pub enum ComposeError {
    /// The XR's count field is not a non-negative integer.
    #[error("{template}: {path} is {found}, not a non-negative integer count")]
    Count {
        /// The template's name.
        template: String,
        /// The count's field path.
        path: String,
        /// The value found.
        found: Value,
    },
    /// A patch cannot be written.
    #[error("{resource}: patch to {to}")]
    Patch {
        /// The composed resource's name.
        resource: String,
        /// The target path.
        to: String,
        /// What is in the way.
        #[source]
        source: super::fieldpath::WriteError,
    },
}

/// Composes: the request's desired state, plus one desired resource per template and
/// index, patched from the XR and judged ready from the observed resource.
///
/// # Errors
/// A count or a patch that cannot be applied.
pub fn compose(
    input: &Input,
    request: &RunFunctionRequest,
) -> Result<RunFunctionResponse, ComposeError> {
    let empty = State::default();
    let observed = request.observed.as_ref().unwrap_or(&empty);
    let xr = observed
        .composite
        .as_ref()
        .and_then(|c| c.resource.as_ref())
        .map(from_struct)
        .unwrap_or_default();
    let mut response = response::to(request);
    let desired = response.desired.get_or_insert_with(State::default);
    let mut composed = Vec::new();
    for template in &input.templates {
        for index in 0..count(template, &xr)? {
            let name = format!("{}-{index}", template.name);
            let mut resource = template.base.clone();
            for patch in &template.patches {
                if let Some(value) = patch.from.get(&xr) {
                    patch
                        .to
                        .set(&mut resource, value.clone())
                        .map_err(|source| ComposeError::Patch {
                            resource: name.clone(),
                            to: patch.to.to_string(),
                            source,
                        })?;
                }
            }
            let ready = ready(&template.readiness, observed.resources.get(&name));
            desired.resources.insert(
                name.clone(),
                Resource {
                    resource: Some(to_struct(&resource)),
                    connection_details: Default::default(),
                    ready: ready as i32,
                },
            );
            composed.push(Value::String(name));
        }
    }
    let context = response
        .context
        .get_or_insert_with(crate::function::proto::Struct::default);
    context
        .fields
        .insert(CONTEXT_KEY.to_owned(), to_value(&Value::Array(composed)));
    response.meta.get_or_insert_with(ResponseMeta::default).ttl = input.ttl.map(to_duration);
    Ok(response)
}

fn count(template: &Template, xr: &Map<String, Value>) -> Result<u64, ComposeError> {
    let Some(path) = &template.count_from else {
        return Ok(template.count.into());
    };
    match path.get(xr) {
        None => Ok(template.count.into()),
        Some(value) => value.as_u64().ok_or_else(|| ComposeError::Count {
            template: template.name.clone(),
            path: path.to_string(),
            found: value.clone(),
        }),
    }
}

/// Ready when the observed resource matches the check; a resource not observed yet is not
/// ready, unless the check is `None`.
fn ready(readiness: &Readiness, observed: Option<&Resource>) -> Ready {
    let (want_type, want_status) = match readiness {
        Readiness::None => return Ready::True,
        Readiness::MatchCondition { r#type, status } => (r#type, status),
    };
    let Some(resource) = observed.and_then(|r| r.resource.as_ref()).map(from_struct) else {
        return Ready::False;
    };
    let matches = resource
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some(want_type.as_str())
                    && c.get("status").and_then(Value::as_str) == Some(want_status.as_str())
            })
        });
    if matches { Ready::True } else { Ready::False }
}
