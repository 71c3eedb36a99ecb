//! Where `cargo xtask kind` looks things up: its environment variables and tools (the
//! process's own, or a test's), and the Ctrl-C or SIGTERM that stops it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};

use crate::step::{self, Error, Result};

/// The environment variables the command reads, and the ones its commands get.
#[derive(Clone)]
pub struct Env {
    /// Set on every command started, over the process's own environment.
    set: BTreeMap<String, String>,
    /// Whether a variable not in `set` is read from the process's environment.
    inherit: bool,
}

impl Env {
    /// The process's environment.
    pub fn process() -> Env {
        Env {
            set: BTreeMap::new(),
            inherit: true,
        }
    }

    /// Exactly `vars` (PATH included): the process's environment is not read, and the
    /// commands started get `vars` over it.
    #[cfg(test)]
    pub fn fixed(vars: impl IntoIterator<Item = (String, String)>) -> Env {
        Env {
            set: vars.into_iter().collect(),
            inherit: false,
        }
    }

    /// The value of `name`; an empty one counts as unset (as `${NAME:-default}` in a shell).
    pub fn get(&self, name: &str) -> Option<String> {
        let value = match self.set.get(name) {
            Some(v) => Some(v.clone()),
            None if self.inherit => std::env::var(name).ok(),
            None => None,
        };
        value.filter(|v| !v.is_empty())
    }

    /// Whether `name` is exactly `1`.
    pub fn is_one(&self, name: &str) -> bool {
        self.get(name).as_deref() == Some("1")
    }

    /// The first `name` on this environment's PATH that is an executable file.
    pub fn tool(&self, name: &str) -> Option<PathBuf> {
        let path = self.get("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| executable(p))
    }

    /// `program args` in `dir`, with this environment's variables set and without the ones
    /// `cargo run` set for this process.
    pub fn command(&self, dir: &Path, program: impl AsRef<OsStr>, args: &[&str]) -> Command {
        let mut c = step::command(dir, program, args, &[]);
        c.envs(&self.set);
        c
    }
}

/// Whether `path` is a file with an execute bit set.
pub fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The tools every run needs, found on PATH.
pub struct Tools {
    pub docker: PathBuf,
    pub kind: PathBuf,
    pub kubectl: PathBuf,
}

impl Tools {
    /// The tools, or an error naming the first one missing.
    pub fn find(env: &Env) -> Result<Tools> {
        let find = |name: &str| {
            env.tool(name).ok_or_else(|| {
                Error::Usage(format!(
                    "{name} is not installed (cargo xtask kind needs docker, kind and kubectl)"
                ))
            })
        };
        Ok(Tools {
            docker: find("docker")?,
            kind: find("kind")?,
            kubectl: find("kubectl")?,
        })
    }
}

/// The SIGINT or SIGTERM that asks the run to stop, once one has arrived. The first one
/// is noted (the run stops its commands, collects the logs and deletes the cluster); a
/// second one ends the process at once, as it would have without a handler.
#[derive(Clone, Default)]
pub struct Interrupt {
    signal: Arc<AtomicUsize>,
}

impl Interrupt {
    /// Listens for SIGINT and SIGTERM.
    pub fn install() -> Result<Interrupt> {
        let interrupt = Interrupt::default();
        let armed = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            let registered = signal_hook::flag::register_conditional_default(signal, armed.clone())
                .and_then(|_| {
                    signal_hook::flag::register_usize(
                        signal,
                        interrupt.signal.clone(),
                        signal as usize,
                    )
                })
                .and_then(|_| signal_hook::flag::register(signal, armed.clone()));
            registered
                .map_err(|e| Error::Usage(format!("cannot listen for signal {signal}: {e}")))?;
        }
        Ok(interrupt)
    }

    /// The signal that arrived (2 for SIGINT, 15 for SIGTERM), if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            s => i32::try_from(s).ok(),
        }
    }

    /// Notes `signal` as if it had arrived (the tests' Ctrl-C).
    #[cfg(test)]
    pub fn raise(&self, signal: i32) {
        self.signal.store(signal as usize, Ordering::SeqCst);
    }
}

/// SIGINT's number, for the tests.
#[cfg(test)]
pub const INT: i32 = SIGINT;
