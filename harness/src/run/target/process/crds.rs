//! The CRDs mock-apiserver serves on the process target: the profile's files, or one
//! permissive CRD per kind.

use std::path::{Path, PathBuf};

use super::child::io_error;
use crate::run::error::RunError;
use crate::scenario::Scenario;
use crate::scenario::profile::{ProcessCommand, permissive_crd};

/// The CRDs mock-apiserver serves: the profile's files, or one permissive CRD per kind.
pub(super) fn crds(s: &Scenario, command: &ProcessCommand) -> Result<Vec<String>, RunError> {
    if command.crds.is_empty() {
        let kinds = s
            .profile
            .as_ref()
            .map(|p| p.kinds.as_slice())
            .unwrap_or_default();
        return Ok(kinds
            .iter()
            .filter(|k| !k.group.is_empty())
            .map(|k| permissive_crd(k).to_string())
            .collect());
    }
    crd_files(&command.crds)
}

/// The text of each CRD file of `paths` (a directory stands for its YAML files).
pub(super) fn crd_files(paths: &[PathBuf]) -> Result<Vec<String>, RunError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            files.extend(yaml_files_in(path)?);
        } else {
            files.push(path.clone());
        }
    }
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f).map_err(io_error(format!("read the CRDs {}", f.display())))
        })
        .collect()
}

/// A `crds` entry that names a directory: its `.yaml` and `.yml` files, in name order (as
/// `kubectl apply -f DIR` takes them).
fn yaml_files_in(dir: &Path) -> Result<Vec<PathBuf>, RunError> {
    let entries = std::fs::read_dir(dir).map_err(io_error(format!(
        "list the CRDs directory {}",
        dir.display()
    )))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(io_error(format!(
                "list the CRDs directory {}",
                dir.display()
            )))?
            .path();
        let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if yaml && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
