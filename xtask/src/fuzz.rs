//! `cargo xtask fuzz`: the fuzz targets (`fuzz/`, libFuzzer) for a bounded time, on stable
//! Rust.
//!
//! How it builds without nightly: the binaries are compiled by stable rustc with the
//! instrumentation libFuzzer needs given as stable codegen flags (`-Cpasses=sancov-module`
//! and `-Cllvm-args=-sanitizer-coverage-*`): the flags `cargo fuzz build --sanitizer none`
//! passes, without cargo-fuzz and without AddressSanitizer (which needs nightly's
//! `-Zsanitizer`; the fuzzed crates forbid unsafe code). Debug assertions and overflow
//! checks are on, so an integer overflow is a crash too. libfuzzer-sys compiles libFuzzer
//! itself, which needs a C++ compiler.
//!
//! Where things go (all under `target/fuzz/`): each target's working corpus in
//! `corpus/TARGET` (seeded from `fuzz/corpus/TARGET` and the seeds the target takes from
//! the tests: `cargo run -p fuzz --bin corpus -- seeds TARGET`), crashes in
//! `artifacts/TARGET/`, libFuzzer's output in `logs/TARGET.log`. A crash fails the run; it
//! is replayed with a backtrace by `cargo run -p fuzz --bin corpus -- replay TARGET FILE`,
//! fixed in its crate with a regression test, and its input checked in under
//! `fuzz/regressions/TARGET/`, which the fuzz crate's tests replay on every `cargo test`.
//!
//! The build profile is `fuzz` (the workspace's release without debug info), or
//! `FUZZ_PROFILE`'s. A cheaper profile does not pay: at opt-level 1 the build took 15m57s
//! against about 18m for release on a loaded machine, and the targets ran 5 to 7 times
//! fewer executions.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::step::{self, Error, Result};

/// `cargo xtask fuzz`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Without arguments, lists the targets. \
`cargo xtask fuzz merge TARGET` minimizes TARGET's corpus into fuzz/corpus/TARGET \
(libFuzzer's -set_cover_merge: a greedy set cover, few files that keep every edge covered). \
Exit codes: 0 no crash, 1 a target crashed, 2 bad arguments or a failed build.")]
pub struct Args {
    /// A target, `all`, or `merge` (then the target to merge follows).
    pub target: Option<String>,
    /// Seconds of fuzzing per target; with `merge`, the target.
    #[arg(value_name = "SECONDS|TARGET")]
    pub seconds: Option<SecondsOrTarget>,
    /// Arguments passed to libFuzzer as they are (-max_len=N, -dict=FILE, -jobs=N …).
    #[arg(last = true, value_name = "LIBFUZZER_ARG")]
    pub libfuzzer: Vec<String>,
}

/// The second argument: seconds to fuzz, or (after `merge`) a target.
pub type SecondsOrTarget = String;

/// The codegen flags of the instrumented build.
const FLAGS: [&str; 9] = [
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-sanitizer-coverage-trace-compares",
    "-Cllvm-args=-sanitizer-coverage-stack-depth",
    "-Cdebug-assertions",
    "-Coverflow-checks",
    "--cfg=fuzzing",
];

/// What `cargo xtask fuzz` was asked to do.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    List,
    Fuzz { targets: Vec<String>, seconds: u64 },
    Merge(String),
}

fn plan(a: &Args, known: &[String]) -> Result<Plan> {
    let usage =
        || Error::Usage("usage: cargo xtask fuzz TARGET|all SECONDS [-- LIBFUZZER_ARG…]".into());
    let check = |t: &str| {
        if known.iter().any(|k| k == t) {
            Ok(t.to_owned())
        } else {
            Err(Error::Usage(format!(
                "no target {t} (`cargo xtask fuzz` lists them)"
            )))
        }
    };
    match (a.target.as_deref(), a.seconds.as_deref()) {
        (None, _) => Ok(Plan::List),
        (Some("merge"), Some(t)) => Ok(Plan::Merge(check(t)?)),
        (Some("merge"), None) => Err(Error::Usage("usage: cargo xtask fuzz merge TARGET".into())),
        (Some(target), Some(secs)) => {
            let seconds = secs
                .parse::<u64>()
                .ok()
                .filter(|&s| s > 0)
                .ok_or_else(usage)?;
            let targets = if target == "all" {
                known.to_vec()
            } else {
                vec![check(target)?]
            };
            Ok(Plan::Fuzz { targets, seconds })
        }
        (Some(_), None) => Err(usage()),
    }
}

/// The fuzz crate's targets: its `[[bin]]` names but the crate's own tools.
fn targets(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("name = \"")?.strip_suffix('"'))
        .filter(|n| *n != "fuzz" && *n != "corpus")
        .map(str::to_owned)
        .collect()
}

pub fn run(root: &Path, a: &Args) -> Result {
    let manifest = fs::read_to_string(root.join("fuzz/Cargo.toml"))
        .map_err(|e| Error::Usage(format!("fuzz/Cargo.toml: {e}")))?;
    let known = targets(&manifest);
    let fuzz = Fuzz::new(root)?;
    match plan(a, &known)? {
        Plan::List => {
            println!("cargo xtask fuzz TARGET|all SECONDS [-- LIBFUZZER_ARG…]\n\ntargets:");
            for t in &known {
                println!("  {t}");
            }
            Ok(())
        }
        Plan::Merge(t) => fuzz.merge(&t),
        Plan::Fuzz { targets, seconds } => {
            fuzz.build(&targets)?;
            let mut crashed = Vec::new();
            for t in &targets {
                if !fuzz.fuzz(t, seconds, &a.libfuzzer)? {
                    crashed.push(t.as_str());
                }
            }
            if crashed.is_empty() {
                Ok(())
            } else {
                Err(Error::Failed(format!("crashed: {}", crashed.join(", "))))
            }
        }
    }
}

struct Fuzz {
    root: PathBuf,
    out: PathBuf,
    triple: String,
    profile: String,
}

impl Fuzz {
    fn new(root: &Path) -> Result<Fuzz> {
        let vv = Command::new("rustc")
            .arg("-vV")
            .output()
            .map_err(|e| Error::Usage(format!("cannot run rustc -vV: {e}")))?;
        let triple = String::from_utf8_lossy(&vv.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
            .ok_or_else(|| Error::Usage("rustc -vV names no host".into()))?;
        Ok(Fuzz {
            root: root.to_path_buf(),
            out: root.join("target/fuzz"),
            triple,
            profile: std::env::var("FUZZ_PROFILE").unwrap_or_else(|_| "fuzz".to_owned()),
        })
    }

    fn binary(&self, t: &str) -> PathBuf {
        self.out.join(&self.triple).join(&self.profile).join(t)
    }

    fn build(&self, targets: &[String]) -> Result {
        println!(
            "==> building {} (profile {}, sancov instrumentation, stable rustc)",
            targets.join(" "),
            self.profile
        );
        let out = self.out.display().to_string();
        let mut args = vec![
            "build",
            "--profile",
            &self.profile,
            "--locked",
            "-p",
            "fuzz",
            "--features",
            "libfuzzer",
            "--target",
            &self.triple,
            "--target-dir",
            &out,
        ];
        for t in targets {
            args.extend(["--bin", t.as_str()]);
        }
        let c = step::command(
            &self.root,
            "cargo",
            &args,
            &[("RUSTFLAGS", FLAGS.join(" "))],
        );
        step::run(c, "the fuzz build").map_err(|_| Error::Usage("the fuzz build failed".into()))
    }

    /// The fuzz crate's `corpus` tool: the check's build's (`LOADTEST_BIN_DIR`), else
    /// `cargo run`, which would compile some eighty crates with the fuzz crate's features.
    fn corpus_tool(&self, args: &[&str]) -> Result<String> {
        let built = std::env::var_os("LOADTEST_BIN_DIR").map(|d| PathBuf::from(d).join("corpus"));
        let mut c = match built.filter(|p| p.is_file()) {
            Some(p) => step::command(&self.root, p, args, &[]),
            None => {
                let mut all = vec![
                    "run", "-q", "--locked", "-p", "fuzz", "--bin", "corpus", "--",
                ];
                all.extend(args);
                step::command(&self.root, "cargo", &all, &[])
            }
        };
        let out = c
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| Error::Usage(format!("the corpus tool: {e}")))?;
        if !out.status.success() {
            return Err(Error::Usage(format!(
                "the corpus tool failed ({})",
                out.status
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Copies the target's seeds from the tests into its working corpus.
    fn seed(&self, t: &str) -> Result {
        let dir = self.out.join("corpus").join(t);
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        for file in self
            .corpus_tool(&["seeds", t])?
            .lines()
            .filter(|l| !l.is_empty())
        {
            let from = self.root.join(file);
            let name = from
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            fs::copy(&from, dir.join(format!("seed-{name}"))).map_err(io(&from))?;
        }
        Ok(())
    }

    /// Fuzzes `t` for `seconds`; whether it ran without a crash.
    fn fuzz(&self, t: &str, seconds: u64, extra: &[String]) -> Result<bool> {
        let corpus = self.out.join("corpus").join(t);
        let artifacts = self.out.join("artifacts").join(t);
        let log = self.out.join("logs").join(format!("{t}.log"));
        for d in [
            corpus.clone(),
            artifacts.clone(),
            self.out.join("logs"),
            self.root.join("fuzz/corpus").join(t),
            self.root.join("fuzz/regressions").join(t),
        ] {
            fs::create_dir_all(&d).map_err(io(&d))?;
        }
        self.seed(t)?;
        println!("==> fuzzing {t} for {seconds}s (log: {})", log.display());
        let log_file = fs::File::create(&log).map_err(io(&log))?;
        let status = Command::new(self.binary(t))
            .current_dir(&self.root)
            .arg(&corpus)
            .arg(format!("fuzz/corpus/{t}"))
            .arg(format!("fuzz/regressions/{t}"))
            .arg(format!("-max_total_time={seconds}"))
            .args(["-timeout=20", "-rss_limit_mb=2048", "-print_final_stats=1"])
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .args(extra)
            .stdout(log_file.try_clone().map_err(io(&log))?)
            .stderr(log_file)
            .status()
            .map_err(|e| Error::Usage(format!("cannot start {}: {e}", self.binary(t).display())))?;
        let text = fs::read_to_string(&log).unwrap_or_default();
        let files = fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0);
        let s = LogSummary::of(&text);
        println!(
            "{t}: {} executions in {seconds}s ({}/s), coverage {}, corpus {files} files",
            s.runs.unwrap_or("?"),
            s.rate.unwrap_or("?"),
            s.coverage.unwrap_or("?"),
        );
        if status.success() {
            return Ok(true);
        }
        eprintln!("{}", s.failure);
        eprintln!(
            "{t} CRASHED ({status}); replay: cargo run -p fuzz --bin corpus -- replay {t} {}",
            s.crash.unwrap_or("ARTIFACT")
        );
        Ok(false)
    }

    fn merge(&self, t: &str) -> Result {
        let fresh = self.out.join("merge").join(t);
        let kept = self.root.join("fuzz/corpus").join(t);
        let _ = fs::remove_dir_all(&fresh);
        for d in [
            fresh.clone(),
            self.out.join("corpus").join(t),
            kept.clone(),
            self.out.join("logs"),
        ] {
            fs::create_dir_all(&d).map_err(io(&d))?;
        }
        self.seed(t)?;
        self.build(&[t.to_owned()])?;
        let log = self.out.join("logs").join(format!("{t}.merge.log"));
        let log_file = fs::File::create(&log).map_err(io(&log))?;
        let status = Command::new(self.binary(t))
            .current_dir(&self.root)
            .args(["-set_cover_merge=1", "-use_counters=0"])
            .arg(&fresh)
            .arg(&kept)
            .arg(self.out.join("corpus").join(t))
            .stdout(log_file.try_clone().map_err(io(&log))?)
            .stderr(log_file)
            .status()
            .map_err(|e| Error::Usage(format!("cannot start the merge: {e}")))?;
        if !status.success() {
            return Err(Error::Usage(format!(
                "merging {t} failed (see {})",
                log.display()
            )));
        }
        // Seeds stay where they are (the tests); only what fuzzing found is checked in.
        for e in fs::read_dir(&fresh).map_err(io(&fresh))?.flatten() {
            if e.file_name().to_string_lossy().starts_with("seed-") {
                fs::remove_file(e.path()).map_err(io(&e.path()))?;
            }
        }
        fs::remove_dir_all(&kept).map_err(io(&kept))?;
        fs::rename(&fresh, &kept).map_err(io(&kept))?;
        let n = fs::read_dir(&kept).map(|d| d.count()).unwrap_or(0);
        println!("{t}: fuzz/corpus/{t} holds {n} files");
        Ok(())
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Usage(format!("{}: {e}", path.display()))
}

/// What a libFuzzer log says: executions, their rate, coverage, and on a crash the panic
/// and the file the input went to.
struct LogSummary<'a> {
    runs: Option<&'a str>,
    rate: Option<&'a str>,
    coverage: Option<&'a str>,
    crash: Option<&'a str>,
    failure: String,
}

impl<'a> LogSummary<'a> {
    fn of(log: &'a str) -> LogSummary<'a> {
        let last = |prefix: &str| {
            log.lines()
                .filter_map(|l| l.strip_prefix(prefix))
                .next_back()
                .map(str::trim)
        };
        let coverage = log
            .match_indices("cov: ")
            .last()
            .and_then(|(i, _)| log[i + 5..].split(|c: char| !c.is_ascii_digit()).next());
        let lines: Vec<&str> = log.lines().collect();
        let failure = match lines
            .iter()
            .position(|l| l.contains("panicked at") || l.contains("ERROR: libFuzzer"))
        {
            Some(i) => lines[i..lines.len().min(i + 13)].join("\n"),
            None => lines[lines.len().saturating_sub(20)..].join("\n"),
        };
        LogSummary {
            runs: last("stat::number_of_executed_units:"),
            rate: last("stat::average_exec_per_sec:"),
            coverage,
            crash: log
                .lines()
                .filter_map(|l| l.split_once("Test unit written to ").map(|(_, f)| f.trim()))
                .next_back(),
            failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Args {
        Args {
            target: v.first().map(|s| (*s).to_owned()),
            seconds: v.get(1).map(|s| (*s).to_owned()),
            libfuzzer: Vec::new(),
        }
    }

    fn known() -> Vec<String> {
        vec!["scenario".into(), "replay".into()]
    }

    #[test]
    fn the_targets_are_the_fuzz_crates_bins_but_its_tools() {
        let m = "[package]\nname = \"fuzz\"\n[[bin]]\nname = \"corpus\"\n[[bin]]\nname = \"scenario\"\npath = \"x\"\n[[bin]]\nname = \"replay\"\n";
        assert_eq!(targets(m), known());
    }

    #[test]
    fn arguments_make_a_plan_or_a_usage_error() {
        let k = known();
        assert_eq!(plan(&args(&[]), &k).unwrap(), Plan::List);
        assert_eq!(
            plan(&args(&["all", "20"]), &k).unwrap(),
            Plan::Fuzz {
                targets: k.clone(),
                seconds: 20
            }
        );
        assert_eq!(
            plan(&args(&["replay", "300"]), &k).unwrap(),
            Plan::Fuzz {
                targets: vec!["replay".into()],
                seconds: 300
            }
        );
        assert_eq!(
            plan(&args(&["merge", "scenario"]), &k).unwrap(),
            Plan::Merge("scenario".into())
        );
        for bad in [
            &["nope", "5"][..],
            &["all", "0"],
            &["all", "x"],
            &["all"],
            &["merge"],
            &["merge", "nope"],
        ] {
            let e = plan(&args(bad), &k).unwrap_err();
            assert_eq!(e.code(), 2, "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_log_gives_its_figures_and_its_crash() {
        let log = "#2 INITED cov: 10 ft: 3\n#900 DONE cov: 1234 ft: 99 corp: 5\n\
thread '<unnamed>' panicked at src/x.rs:1:1:\noverflow\n\
Test unit written to target/fuzz/artifacts/scenario/crash-abc\n\
stat::number_of_executed_units: 900\nstat::average_exec_per_sec:     45\n";
        let s = LogSummary::of(log);
        assert_eq!(
            (s.runs, s.rate, s.coverage),
            (Some("900"), Some("45"), Some("1234"))
        );
        assert_eq!(s.crash, Some("target/fuzz/artifacts/scenario/crash-abc"));
        assert!(
            s.failure.starts_with("thread '<unnamed>' panicked"),
            "{}",
            s.failure
        );
    }
}
