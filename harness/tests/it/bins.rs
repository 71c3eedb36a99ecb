//! The workspace's binaries (mock-apiserver, mock-cloud, provider, composer) for the tests
//! that run them as processes (`cluster`, `process`, `core_process`): the ones cargo built
//! when they are fresh, as after `cargo test --workspace`, which builds them; else one `cargo build` per test
//! binary, the same for every caller, so no two tests rebuild them in turn with different
//! features.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::SystemTime;

/// The binaries, each with the crates it is built from: its own and its path dependencies.
const BINARIES: [(&str, &[&str]); 4] = [
    ("mock-apiserver", &["mock-apiserver", "serve"]),
    ("mock-cloud", &["mock-cloud", "serve"]),
    ("provider", &["provider", "limiter", "serve"]),
    ("composer", &["composer", "limiter", "serve"]),
];

fn modified(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The newest modification time of the files under `dir`.
fn newest(dir: &Path) -> Option<SystemTime> {
    let mut out = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let t = if path.is_dir() {
            newest(&path)
        } else {
            modified(&path)
        };
        out = out.max(t);
    }
    out
}

/// When the sources of a binary built from `crates` last changed: the crates' `src` and
/// manifests, the workspace's manifest and lock file.
fn sources_changed(root: &Path, crates: &[&str]) -> Option<SystemTime> {
    let crates = crates.iter().flat_map(|c| {
        let dir = root.join(c);
        [newest(&dir.join("src")), modified(&dir.join("Cargo.toml"))]
    });
    crates
        .chain([
            modified(&root.join("Cargo.toml")),
            modified(&root.join("Cargo.lock")),
        ])
        .max()
        .flatten()
}

/// Whether the provider at `path` has the AWS flavour (its `--help` lists the flag).
fn has_aws(path: &Path) -> bool {
    Command::new(path)
        .arg("--help")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--aws-retry-mode"))
}

/// What cargo sets for this test binary's crate (`CARGO_PKG_NAME=harness`, …), by prefix:
/// build scripts that watch such a variable (ring's do) would run again in a build that
/// inherits it, and again in the next `cargo test`, rebuilding everything above them twice.
const SET_FOR_THIS_CRATE: [&str; 7] = [
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "CARGO_CRATE_",
    "CARGO_BIN_",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "OUT_DIR",
];

/// The directory of the four binaries, fresh: each newer than its sources, and the
/// provider with its AWS flavour when this test binary has feature `aws`. Otherwise they
/// are built once for this test binary with `cargo build -p mock-apiserver -p mock-cloud
/// -p provider -p composer` (with `--features provider/aws` if this test binary has
/// `aws`) into the same target directory; a test that must not see them change under it copies what it runs.
pub fn binaries() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let harness = PathBuf::from(env!("CARGO_BIN_EXE_harness"));
        let dir = harness.parent().expect("a directory").to_path_buf();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let stale = BINARIES.iter().any(|(name, crates)| {
            match (modified(&dir.join(name)), sources_changed(&root, crates)) {
                (Some(built), Some(changed)) => built < changed,
                _ => true,
            }
        }) || (cfg!(feature = "aws") && !has_aws(&dir.join("provider")));
        if stale {
            let features: &[&str] = if cfg!(feature = "aws") {
                &["--features", "provider/aws"]
            } else {
                &[]
            };
            let mut cargo = Command::new(env!("CARGO"));
            for (key, _) in std::env::vars_os() {
                let inherited = key.to_str().unwrap_or_default();
                if SET_FOR_THIS_CRATE.iter().any(|p| inherited.starts_with(p)) {
                    cargo.env_remove(key);
                }
            }
            let status = cargo
                .args(["build"])
                .args(BINARIES.iter().flat_map(|(name, _)| ["-p", name]))
                .args(features)
                .arg("--target-dir")
                .arg(dir.parent().expect("the target directory"))
                .status()
                .expect("cargo runs");
            assert!(status.success(), "cannot build the stack's binaries");
        }
        dir
    })
}
