//! Scenario files: YAML in two stages. [`parse`] reads the text into the raw structs
//! ([`raw`], unknown fields rejected) and validates them into a [`Scenario`]; every error
//! carries the file, line and column and says what was expected.

mod apply;
mod calls;
pub mod clients;
pub mod composite;
pub mod core_flags;
mod error;
mod faults;
pub mod flags;
pub mod generate;
pub mod kinds;
mod model;
pub mod profile;
pub mod raw;
mod set;
pub mod settings;
mod template;
mod validate;
mod words;

pub use error::{Pos, Problem, ScenarioError};
pub use faults::{FaultShare, GroupFault};
pub use kinds::{ApiKind, Catalogue, GroupKind};
pub use model::{
    Account, Action, ActionClass, AnnotationShare, ApiCosts, Assertion, AwsSettings, CALL_PATHS,
    CallDetail, Calls, Check, Classes, Cloud, ErrorFault, Latency, Measured, Phase,
    PredictionInputs, Provisioning, Quota, ResourceGroup, Scenario, SceneObject, TtrLimit,
    op_matches,
};
pub use profile::{Calibrated, Profile};
pub use raw::{Kind, Target, TimeMode, Until};
pub use set::{SETTABLE, Set, SetSyntaxError};
pub use template::{Template, TemplateError, Vars};
pub use validate::API_VERSION;
pub use validate::Purpose;

/// Parses and validates scenario text; `file` names it in errors.
///
/// # Errors
/// [`ScenarioError::Invalid`] with every problem found.
///
/// # Examples
/// ```
/// let yaml = "apiVersion: harness/v1\nname: tiny\nresources:\n  - {name: b, kind: Bucket, count: 3}\nphases:\n  - {name: create, action: create}\n";
/// let s = harness_scenario::parse(yaml, "tiny.yaml").unwrap();
/// assert_eq!(s.total_resources(), 3);
/// assert_eq!(s.groups[0].resource_name(2, &s.name), "b-2");
/// ```
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_with(text, file, &[])
}

/// [`parse`] with `--set`s applied to the text's values before they are validated.
///
/// # Errors
/// As [`parse`]; problems of a set (a value of the wrong type, an unknown path, or a value
/// the checks reject) are placed at `--set PATH`.
pub fn parse_with(text: &str, file: &str, sets: &[Set]) -> Result<Scenario, ScenarioError> {
    parse_for(text, file, sets, Purpose::Run)
}

/// [`parse_with`] for a `purpose`: to calibrate a scenario, its kinds need no calls per
/// reconcile yet, and a profile's calibration file may not exist yet.
///
/// # Errors
/// As [`parse_with`].
pub fn parse_for(
    text: &str,
    file: &str,
    sets: &[Set],
    purpose: Purpose,
) -> Result<Scenario, ScenarioError> {
    let invalid = |problems| ScenarioError::Invalid {
        file: file.to_owned(),
        sets: sets.to_vec(),
        problems,
    };
    let mut raw: raw::RawScenario =
        serde_saphyr::from_str(text).map_err(|e| invalid(vec![error::from_yaml_in(&e, text)]))?;
    let unapplied = apply::apply_all(&mut raw, sets);
    let profile = match raw.profile.take() {
        Some(p) => Some(profile_of(p, file, purpose)?),
        None => None,
    };
    match validate::validate(raw, file, sets, (profile, purpose)) {
        Ok(s) if unapplied.is_empty() => Ok(s),
        Ok(_) => Err(invalid(unapplied)),
        Err(mut problems) => {
            problems.extend(unapplied);
            problems.sort_by_key(|p| (p.pos.source, p.pos.line, p.pos.column));
            Err(invalid(problems))
        }
    }
}

/// The validated profile of a scenario's `profile` section: inline, or read from the file
/// it names (relative to the scenario's directory); problems name the file they are in.
fn profile_of(
    section: serde_saphyr::Spanned<profile::raw::RawProfile>,
    scenario_file: &str,
    purpose: Purpose,
) -> Result<Profile, ScenarioError> {
    let dir = std::path::Path::new(scenario_file)
        .parent()
        .unwrap_or(std::path::Path::new(""))
        .to_path_buf();
    let at = Pos::of(&section.referenced);
    let invalid = |file: String, problems| ScenarioError::Invalid {
        file,
        sets: Vec::new(),
        problems,
    };
    let Some(name) = &section.value.file else {
        let mut profile = validate::profile(&section.value, at, &dir, None)
            .map_err(|p| invalid(scenario_file.to_owned(), p))?;
        if let Some(c) = &section.value.calibration {
            let place = (scenario_file, Pos::of(&c.referenced));
            profile.calibration = calibration_of(&dir.join(&c.value), place, purpose)?;
        }
        return Ok(profile);
    };
    let path = dir.join(&name.value);
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        invalid(
            scenario_file.to_owned(),
            vec![Problem::new(
                Pos::of(&name.referenced),
                format!(
                    "cannot read the profile {shown}: {e}, expected a profile file (its path relative to the scenario's directory)"
                ),
            )],
        )
    })?;
    let raw: profile::raw::RawProfile = serde_saphyr::from_str(&text)
        .map_err(|e| invalid(shown.clone(), vec![error::from_yaml_in(&e, &text)]))?;
    let others = section.value.flags.is_some()
        || section.value.args.is_some()
        || section.value.command.is_some()
        || !section.value.kinds.is_empty();
    if others {
        return Err(invalid(
            scenario_file.to_owned(),
            vec![Problem::new(
                Pos::of(&name.referenced),
                "a profile with `file` has no other field, expected the file to hold them",
            )],
        ));
    }
    let profile_dir = path.parent().unwrap_or(&dir).to_path_buf();
    let start = Pos {
        line: 1,
        column: 1,
        source: 0,
    };
    let mut profile = validate::profile(&raw, start, &profile_dir, Some(shown.clone()))
        .map_err(|p| invalid(shown.clone(), p))?;
    if let Some(c) = &raw.calibration {
        let place = (shown.as_str(), Pos::of(&c.referenced));
        profile.calibration = calibration_of(&profile_dir.join(&c.value), place, purpose)?;
    }
    Ok(profile)
}

/// The kinds of a calibration file, named at `place` (the file and position of its
/// `calibration` field); problems name the file. To calibrate, a file that does not exist
/// yet is none.
fn calibration_of(
    path: &std::path::Path,
    (named_in, at): (&str, Pos),
    purpose: Purpose,
) -> Result<Vec<profile::Calibrated>, ScenarioError> {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if purpose == Purpose::Calibrate && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Vec::new());
        }
        Err(e) => {
            let hint = if e.kind() == std::io::ErrorKind::NotFound {
                " (`harness calibrate SCENARIO` writes one)"
            } else {
                ""
            };
            return Err(ScenarioError::Invalid {
                file: named_in.to_owned(),
                sets: Vec::new(),
                problems: vec![Problem::new(
                    at,
                    format!(
                        "cannot read the calibration file {shown}: {e}, expected a calibration file (its path relative to the profile's directory){hint}"
                    ),
                )],
            });
        }
    };
    let invalid = |problems| ScenarioError::Invalid {
        file: shown.clone(),
        sets: Vec::new(),
        problems,
    };
    let raw: raw::RawCalibration =
        serde_saphyr::from_str(&text).map_err(|e| invalid(vec![error::from_yaml_in(&e, &text)]))?;
    validate::calibration(&raw.calls, &shown).map_err(invalid)
}

/// Reads and parses a scenario file.
///
/// # Errors
/// [`ScenarioError::Read`] if the file cannot be read, else as [`parse`].
pub fn load(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    load_with(path, &[])
}

/// Reads a scenario file to calibrate it, as [`parse_for`] with [`Purpose::Calibrate`].
///
/// # Errors
/// As [`load_with`].
pub fn load_for_calibration(
    path: &std::path::Path,
    sets: &[Set],
) -> Result<Scenario, ScenarioError> {
    load_for(path, sets, Purpose::Calibrate)
}

/// Reads a scenario file and parses it with `--set`s, as [`parse_with`].
///
/// # Errors
/// [`ScenarioError::Read`] if the file cannot be read, else as [`parse_with`].
pub fn load_with(path: &std::path::Path, sets: &[Set]) -> Result<Scenario, ScenarioError> {
    load_for(path, sets, Purpose::Run)
}

/// Reads a scenario file and parses it for `purpose`, as [`parse_for`].
fn load_for(
    path: &std::path::Path,
    sets: &[Set],
    purpose: Purpose,
) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        what: "scenario",
        file: file.clone(),
        source,
    })?;
    parse_for(&text, &file, sets, purpose)
}

/// The JSON Schema of scenario files.
#[must_use]
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(raw::RawScenario)).unwrap_or_default()
}
