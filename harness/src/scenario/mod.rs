//! Scenario files: YAML in two stages. [`parse`] reads the text into the raw structs
//! ([`raw`], unknown fields rejected) and validates them into a [`Scenario`]; every error
//! carries the file, line and column and says what was expected.

mod error;
mod model;
pub mod raw;
mod template;
mod validate;

pub use error::{Pos, Problem, ScenarioError};
pub use model::{
    Account, Action, ActionClass, AnnotationShare, ApiCosts, Assertion, Check, Classes, Cloud,
    ErrorFault, Latency, Phase, PredictionInputs, Provisioning, Quota, ResourceGroup, Scenario,
    TtrLimit,
};
pub use raw::{Kind, Target, Until};
pub use template::{Template, TemplateError, Vars};
pub use validate::API_VERSION;

/// Parses and validates scenario text; `file` names it in errors.
///
/// # Errors
/// [`ScenarioError::Invalid`] with every problem found.
///
/// # Examples
/// ```
/// let yaml = "apiVersion: harness/v1\nname: tiny\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";
/// let s = harness::scenario::parse(yaml, "tiny.yaml").unwrap();
/// assert_eq!(s.total_resources(), 3);
/// assert_eq!(s.groups[0].resource_name(2, &s.name), "b-2");
/// ```
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let invalid = |problems| ScenarioError::Invalid {
        file: file.to_owned(),
        problems,
    };
    let raw: raw::RawScenario =
        serde_saphyr::from_str(text).map_err(|e| invalid(vec![error::from_yaml(&e)]))?;
    validate::validate(raw, file).map_err(invalid)
}

/// Reads and parses a scenario file.
///
/// # Errors
/// [`ScenarioError::Read`] if the file cannot be read, else as [`parse`].
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        file: file.clone(),
        source,
    })?;
    parse(&text, &file)
}

/// The JSON Schema of scenario files.
#[must_use]
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(raw::RawScenario)).unwrap_or_default()
}
