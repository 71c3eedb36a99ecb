//! The files the checks read and write: sources, scripts, scratch files.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::step::{Error, Result};

/// Whether a file under `path` (or `path` itself) that cargo builds from (`*.rs`,
/// Cargo.toml, Cargo.lock) was modified after `than`.
pub(crate) fn newer_source(path: &Path, than: SystemTime) -> std::io::Result<bool> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            if newer_source(&entry?.path(), than)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let source = name.ends_with(".rs") || name == "Cargo.toml" || name == "Cargo.lock";
    Ok(source && meta.modified()? > than)
}

/// The files under `dir` (recursively) whose names end with `suffix`.
pub(crate) fn files_under(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        if path.is_dir() {
            out.extend(files_under(&path, suffix)?);
        } else if path.to_str().is_some_and(|p| p.ends_with(suffix)) {
            out.push(path);
        }
    }
    Ok(out)
}

/// `path` relative to `root`, as a string.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

pub(crate) fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| io_error(path, e))
}

pub(crate) fn write(path: &Path, text: &str) -> Result {
    fs::File::create(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| io_error(path, e))
}

pub(crate) fn io_error(path: &Path, e: std::io::Error) -> Error {
    Error::Usage(format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::step;

    #[test]
    fn the_scripts_and_dockerfiles_are_found_under_ci() {
        let root = step::workspace_root();
        let scripts = files_under(&root.join("ci"), ".sh").unwrap();
        assert!(scripts.iter().any(|p| p.ends_with("ci/kind/run.sh")));
        assert!(scripts.iter().all(|p| p.to_str().unwrap().ends_with(".sh")));
        let dockerfiles = files_under(&root.join("ci/docker"), ".Dockerfile").unwrap();
        assert_eq!(dockerfiles.len(), crate::kind::ALL_IMAGES.len());
        assert_eq!(relative(&root, &root.join("ci/x.sh")), "ci/x.sh");
    }

    #[test]
    fn a_source_newer_than_the_binary_is_found() {
        let root = step::workspace_root();
        let lib = root.join("xtask/src");
        assert!(newer_source(&lib, SystemTime::UNIX_EPOCH).unwrap());
        let future = SystemTime::now() + Duration::from_secs(3600);
        assert!(!newer_source(&lib, future).unwrap());
        // Only what cargo builds from counts.
        assert!(!newer_source(&root.join("README.md"), SystemTime::UNIX_EPOCH).unwrap());
    }
}
