//! Running the commands of a step: the environment the check's build uses, a step's
//! heading with the time so far, and errors that carry the exit code to return.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Instant, SystemTime};

/// Why a command failed, and the exit code `cargo xtask` returns for it.
#[derive(Debug)]
pub enum Error {
    /// A step's command exited with a failure (exit 1): its own output said why.
    Failed(String),
    /// Bad arguments, a missing tool, or a command that could not start (exit 2).
    Usage(String),
    /// Exit with this code: the command has said why already (`cargo xtask kind` exits
    /// with the harness's code).
    Exit(u8),
}

impl Error {
    /// The process exit code.
    pub fn code(&self) -> u8 {
        match self {
            Error::Failed(_) => 1,
            Error::Usage(_) => 2,
            Error::Exit(code) => *code,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Failed(m) | Error::Usage(m) => f.write_str(m),
            Error::Exit(code) => write!(f, "exit {code}"),
        }
    }
}

pub type Result<T = ()> = std::result::Result<T, Error>;

/// The workspace's root: the directory above this crate's.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// The features of the check's one build and its docs: the provider's AWS flavour (and the
/// harness's), so the flavour is linted, tested and documented with everything else.
pub const TEST_FEATURES: &str = "provider/aws,harness/aws";

/// `cargo` arguments of the check's test build (every target, [`TEST_FEATURES`], the lock
/// file as it is).
pub const TEST_BUILD: [&str; 6] = [
    "test",
    "--workspace",
    "--all-targets",
    "--features",
    TEST_FEATURES,
    "--locked",
];

/// The target directory cargo builds into: `CARGO_TARGET_DIR`, else `target/` at the root.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

/// The environment of the check's build, as `(name, value)` pairs: no incremental
/// compilation (it only adds gigabytes to target/), line tables only in debug builds
/// (backtraces still name file and line), and clippy-driver as the compiler of the
/// workspace's own crates with warnings as errors, as `cargo clippy` sets it: lints and
/// tests in one build. clippy-driver is reached through this binary as cargo's
/// `RUSTC_WORKSPACE_WRAPPER`, which records each crate's compile for the doc step
/// (`crate::rustdoc`). A caller's own `CARGO_INCREMENTAL` and `CARGO_PROFILE_DEV_DEBUG`
/// win.
pub fn build_env(root: &Path) -> Result<Vec<(&'static str, String)>> {
    let clippy = which("clippy-driver").ok_or_else(|| {
        Error::Usage("clippy-driver not found on PATH (rustup component add clippy)".into())
    })?;
    let keep = |name: &str, default: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let mut env = vec![
        ("CARGO_INCREMENTAL", keep("CARGO_INCREMENTAL", "0")),
        (
            "CARGO_PROFILE_DEV_DEBUG",
            keep("CARGO_PROFILE_DEV_DEBUG", "line-tables-only"),
        ),
        (
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__".to_owned(),
        ),
    ];
    env.extend(wrapper_env(root, &clippy)?);
    Ok(env)
}

/// The compiler the wrapper hands every compile to (clippy-driver).
pub const DRIVER: &str = "XTASK_RUSTC_DRIVER";
/// The directory the wrapper writes its records to.
pub const RECORDS: &str = "XTASK_COMPILE_RECORDS";

/// The check's build's variables for the wrapper: `RUSTC_WORKSPACE_WRAPPER` naming a copy
/// of this binary at a fixed place under the target directory (cargo keeps a build per
/// wrapper path, so the path must not change from run to run; the copy is replaced only
/// when this binary differs), the compiler it hands compiles to, and the records'
/// directory.
fn wrapper_env(root: &Path, driver: &Path) -> Result<Vec<(&'static str, String)>> {
    let dir = target_dir(root).join("check");
    let records = dir.join("compiles");
    std::fs::create_dir_all(&records)
        .map_err(|e| Error::Usage(format!("{}: {e}", records.display())))?;
    let wrapper = dir.join("rustc-wrapper");
    install(&wrapper)?;
    Ok(vec![
        ("RUSTC_WORKSPACE_WRAPPER", wrapper.display().to_string()),
        (DRIVER, driver.display().to_string()),
        (RECORDS, records.display().to_string()),
    ])
}

/// Copies this binary to `to` unless it is the same already: written beside it and renamed
/// into place, so a compile running the old copy keeps it.
fn install(to: &Path) -> Result {
    // /proc/self/exe reads this process's binary even after a build has replaced the file.
    let me = match std::fs::read("/proc/self/exe") {
        Ok(bytes) => bytes,
        Err(_) => std::env::current_exe()
            .and_then(std::fs::read)
            .map_err(|e| Error::Usage(format!("cannot read cargo xtask's own binary: {e}")))?,
    };
    if std::fs::read(to).is_ok_and(|old| old == me) {
        return Ok(());
    }
    let tmp = to.with_extension(format!("new-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&tmp, &me)?;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))?;
        std::fs::rename(&tmp, to)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::Usage(format!("{}: {e}", to.display()))
    })
}

/// [`build_env`], and `LOADTEST_BIN_DIR` naming the debug binaries of the build under
/// `root` (for `cargo xtask validate` inside the tests).
pub fn check_env(root: &Path) -> Result<Vec<(&'static str, String)>> {
    let mut env = build_env(root)?;
    let bins = target_dir(root).join("debug");
    env.push(("LOADTEST_BIN_DIR", bins.display().to_string()));
    Ok(env)
}

/// The first `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A scratch directory under the system's temporary directory, readable by its owner only,
/// removed when dropped.
pub struct WorkDir(pub PathBuf);

impl WorkDir {
    /// `PREFIX-PID-N-NANOS`.
    pub fn create(prefix: &str) -> Result<WorkDir> {
        use std::os::unix::fs::DirBuilderExt;
        static CREATED: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run of steps: prints each step's heading with the time since the run started.
pub struct Steps {
    started: Instant,
}

impl Steps {
    pub fn start() -> Steps {
        Steps {
            started: Instant::now(),
        }
    }

    /// A run that started at `unix_secs` (wall-clock seconds since 1970): a process
    /// continuing the clock of the one that started it, counting whatever ran between
    /// (such as cargo building this binary first).
    pub fn started_at(unix_secs: u64) -> Steps {
        let now = Instant::now();
        let ago = unix_now().saturating_sub(unix_secs);
        Steps {
            started: now
                .checked_sub(std::time::Duration::from_secs(ago))
                .unwrap_or(now),
        }
    }

    /// When the run started, in wall-clock seconds since 1970 (for [`Steps::started_at`]).
    pub fn started_unix(&self) -> u64 {
        unix_now().saturating_sub(self.started.elapsed().as_secs())
    }

    /// Prints `==> [m:ss] what`.
    pub fn step(&self, what: &str) {
        println!("\n==> [{}] {what}", clock(self.started.elapsed().as_secs()));
    }

    /// The time since the start, `m:ss`.
    pub fn elapsed(&self) -> String {
        clock(self.started.elapsed().as_secs())
    }
}

/// The wall clock, whole seconds since 1970.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `m:ss` of `secs`.
pub fn clock(secs: u64) -> String {
    format!("{}:{:02}", secs / 60, secs % 60)
}

/// Whether `name` is one of the variables `cargo run` sets for the program it runs (this
/// one): the package's name, version and manifest. A cargo started from here with them
/// set would see build scripts' `rerun-if-env-changed` inputs changed (ring's and cc's
/// name `CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, …) and rebuild those crates, and the
/// next plain `cargo test` would rebuild them back.
pub fn set_by_cargo_run(name: &str) -> bool {
    [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || matches!(name, "CARGO_PRIMARY_PACKAGE" | "OUT_DIR")
}

/// A command in `dir` with `env` set, and without the variables `cargo run` set for this
/// process ([`set_by_cargo_run`]).
pub fn command(
    dir: &Path,
    program: impl AsRef<OsStr>,
    args: &[&str],
    env: &[(&str, String)],
) -> Command {
    let mut c = Command::new(program);
    c.current_dir(dir).args(args);
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_run) {
            c.env_remove(name);
        }
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs `c` with the terminal as its output; a failure names `what`.
pub fn run(mut c: Command, what: &str) -> Result {
    let status = c
        .status()
        .map_err(|e| Error::Usage(format!("{what}: cannot start {:?}: {e}", c.get_program())))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Failed(format!("{what} failed ({status})")))
    }
}

/// Runs `c` with its standard output written to `path` and its errors to the terminal; a
/// failure names `what`.
pub fn run_to_file(mut c: Command, path: &Path, what: &str) -> Result {
    let file = std::fs::File::create(path)
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    c.stdout(file);
    run(c, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_minutes_and_two_digit_seconds() {
        assert_eq!(clock(0), "0:00");
        assert_eq!(clock(61), "1:01");
        assert_eq!(clock(725), "12:05");
    }

    #[test]
    fn the_root_holds_the_workspace_manifest_and_ci() {
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file());
        assert!(root.join("ci").is_dir());
    }

    #[test]
    fn the_variables_cargo_run_sets_are_not_passed_on() {
        for name in [
            "CARGO_PKG_NAME",
            "CARGO_MANIFEST_DIR",
            "CARGO_CRATE_NAME",
            "OUT_DIR",
        ] {
            assert!(set_by_cargo_run(name), "{name}");
        }
        for name in [
            "CARGO_TARGET_DIR",
            "CARGO_HOME",
            "CARGO",
            "PATH",
            "RUSTFLAGS",
        ] {
            assert!(!set_by_cargo_run(name), "{name}");
        }
    }

    #[test]
    fn a_clock_continued_from_a_wall_time_counts_from_it() {
        let at = unix_now() - 90;
        let steps = Steps::started_at(at);
        assert!(steps.elapsed().starts_with("1:3"), "{}", steps.elapsed());
        assert!(steps.started_unix().abs_diff(at) <= 1);
        // A start in the future is now.
        assert_eq!(Steps::started_at(unix_now() + 60).elapsed(), "0:00");
    }

    #[test]
    fn errors_carry_their_exit_codes() {
        assert_eq!(Error::Failed("x".into()).code(), 1);
        assert_eq!(Error::Usage("x".into()).code(), 2);
        assert_eq!(Error::Exit(130).code(), 130);
    }
}
