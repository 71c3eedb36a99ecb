//! Fuzz targets for every parser that takes outside input, and the replay of their
//! corpora as tests.
//!
//! Each target is a function of bytes, [`Target::check`], that panics when the code under
//! test breaks a promise (a panic inside it, an error without a position, a 5xx nobody
//! asked for). Three programs call them:
//! - the libFuzzer binaries in `fuzz_targets/` (feature `libfuzzer`), built and run by
//!   `cargo xtask fuzz TARGET SECONDS`;
//! - the integration test, which replays every seed and every checked-in corpus file
//!   through its target on each `cargo test`;
//! - the `corpus` binary, which lists targets and seeds and replays single files with a
//!   plain build (to read a crash's backtrace).
//!
//! # Targets
//! [`TARGETS`]: `scenario` ([`scenario`]), `cloud_config` ([`cloud_config`]),
//! `cloud_requests` ([`cloud`]), `aws_requests` ([`aws`]), `apiserver_requests` ([`apiserver`]), `replay`
//! ([`replay`]), `composer_inputs` ([`composer`]).

pub mod apiserver;
pub mod aws;
pub mod cloud;
pub mod cloud_config;
pub mod composer;
mod json;
pub mod pick;
pub mod replay;
pub mod scenario;
pub mod sign;
pub mod timed;

use std::path::{Path, PathBuf};

/// One fuzz target.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// Its name: the binary in `fuzz_targets/` and the directory in `corpus/`.
    pub name: &'static str,
    /// Runs one input; panics when the code under test breaks a promise.
    pub check: fn(&[u8]),
    /// Its seeds taken from the tests: directories (from the workspace root) and the file
    /// suffix of the seeds in them.
    pub seeds: &'static [(&'static str, &'static str)],
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "scenario",
        check: scenario::check,
        seeds: &[("scenarios", ".yaml")],
    },
    Target {
        name: "cloud_config",
        check: cloud_config::check,
        seeds: &[
            ("mock-cloud", ".yaml"),
            ("ci/manifests", "mock-cloud-config.yaml"),
        ],
    },
    Target {
        name: "cloud_requests",
        check: cloud::check,
        seeds: &[],
    },
    Target {
        name: "aws_requests",
        check: aws::check,
        seeds: &[],
    },
    Target {
        name: "apiserver_requests",
        check: apiserver::check,
        seeds: &[(apiserver::seed::DIR, "")],
    },
    Target {
        name: "replay",
        check: replay::check,
        seeds: &[("limiter/tests/vectors", ".txt")],
    },
    Target {
        name: "composer_inputs",
        check: composer::check,
        seeds: &[("composer/tests/fuzz-seeds", "")],
    },
];

impl Target {
    /// The target called `name`.
    #[must_use]
    pub fn named(name: &str) -> Option<Target> {
        TARGETS.iter().copied().find(|t| t.name == name)
    }

    /// Its checked-in corpus: `fuzz/corpus/NAME` under `root`, the workspace root.
    #[must_use]
    pub fn corpus_dir(&self, root: &Path) -> PathBuf {
        root.join("fuzz").join("corpus").join(self.name)
    }

    /// Its seed files under `root`, sorted.
    ///
    /// # Errors
    /// If a seed directory cannot be read.
    pub fn seed_files(&self, root: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for (dir, suffix) in self.seeds {
            for entry in std::fs::read_dir(root.join(dir))? {
                let path = entry?.path();
                let matches = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(suffix));
                if matches && path.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// Its checked-in inputs under `root`, sorted: the corpus libFuzzer kept
    /// (`fuzz/corpus/NAME`) and the crashes it found (`fuzz/regressions/NAME`). A missing
    /// directory holds none.
    ///
    /// # Errors
    /// If a directory exists but cannot be read.
    pub fn corpus_files(&self, root: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for dir in [self.corpus_dir(root), self.regressions_dir(root)] {
            if !dir.exists() {
                continue;
            }
            for entry in std::fs::read_dir(dir)? {
                let path = entry?.path();
                if path.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// Where its crashes are checked in: `fuzz/regressions/NAME` under `root`.
    #[must_use]
    pub fn regressions_dir(&self, root: &Path) -> PathBuf {
        root.join("fuzz").join("regressions").join(self.name)
    }
}

/// A single-threaded tokio runtime on paused time: timers (injected latency, watch
/// bookmarks, quotas refilling) fire as soon as every task waits, so no input waits in
/// real time.
///
/// # Panics
/// If a runtime cannot be built.
#[must_use]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime builds")
}
