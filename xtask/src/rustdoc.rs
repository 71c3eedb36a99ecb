//! The check's docs, documented from its test build.
//!
//! `cargo doc` needs each dependency's metadata from a build of its own kind (`cargo
//! check`'s), which no test build makes: from an empty target it compiles about five
//! hundred crates again before it documents the first of ours (159 of a cold check's
//! CPU-seconds, on a 2-core machine). The test build has compiled every one of them
//! already, and a compiled library carries the metadata rustdoc reads. So the check's
//! build runs this binary as cargo's `RUSTC_WORKSPACE_WRAPPER` ([`as_rustc_wrapper`]): for
//! each of the workspace's libraries and binaries that cargo compiles, it records the
//! compiler's arguments and the package's `CARGO_*` variables in
//! `target/check/compiles/`, then hands the compile to clippy-driver unchanged. The doc
//! step ([`document`]) then runs rustdoc on each library and binary `cargo doc
//! --workspace --no-deps` would document, with the same sources, edition, features, cfgs,
//! lints and dependencies (the test build's compiled ones), warnings as errors, into
//! `target/doc`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::step::{self, DRIVER, Error, RECORDS, Result};

/// Whether a target is a library or a binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Lib,
    Bin,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Lib => "lib",
            Kind::Bin => "bin",
        }
    }
}

/// One library or binary of the workspace, as `cargo doc` documents it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    package: String,
    /// The crate's name (the target's, `-` as `_`).
    krate: String,
    kind: Kind,
}

impl Target {
    /// Its name in the records and the docs' stamps.
    fn key(&self) -> String {
        format!("{}.{}.{}", self.package, self.krate, self.kind.as_str())
    }

    /// Its records: its compile as itself, and as its unit tests' harness. The doc step
    /// reads the later of the two.
    fn records(&self, dir: &Path) -> [PathBuf; 2] {
        let key = self.key();
        [
            dir.join(format!("{key}.json")),
            dir.join(format!("{key}.test.json")),
        ]
    }
}

/// What the wrapper recorded of one compile.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    /// The directory cargo ran the compiler in.
    cwd: PathBuf,
    /// The compiler's arguments, after its own path.
    args: Vec<String>,
    /// The variables cargo set for the compile that the sources may read (`env!`): every
    /// `CARGO*` but the jobserver's, and `OUT_DIR`.
    env: BTreeMap<String, String>,
}

impl Record {
    fn to_json(&self) -> String {
        serde_json::json!({
            "cwd": self.cwd.display().to_string(),
            "args": self.args,
            "env": self.env,
        })
        .to_string()
    }

    fn from_json(s: &str) -> Option<Record> {
        let v: serde_json::Value = serde_json::from_str(s).ok()?;
        let strings = |v: &serde_json::Value| -> Option<Vec<String>> {
            v.as_array()?
                .iter()
                .map(|a| a.as_str().map(str::to_owned))
                .collect()
        };
        let env = v
            .get("env")?
            .as_object()?
            .iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect::<Option<_>>()?;
        Some(Record {
            cwd: PathBuf::from(v.get("cwd")?.as_str()?),
            args: strings(v.get("args")?)?,
            env,
        })
    }
}

/// Whether a variable of a compile's environment goes into its record.
fn recorded_var(name: &str) -> bool {
    (name.starts_with("CARGO") && name != "CARGO_MAKEFLAGS") || name == "OUT_DIR"
}

/// The crate name of a compile to record, and its record's kind: a library or binary
/// compiled as itself (`lib`, `bin`) or as its unit tests' harness (`lib.test`,
/// `bin.test`: `bin` when cargo names a binary, `CARGO_BIN_NAME`); not a compiler probe,
/// not a procedural macro.
///
/// A test build compiles a binary as itself only when its package has integration tests
/// (they run it): the doc step documents the others from their unit tests' compile.
fn to_record(args: &[String], binary: bool) -> Option<(String, &'static str)> {
    let mut name = None;
    let mut kind = None;
    let mut test = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-" => return None,
            "--test" => test = true,
            "--crate-name" => name = it.next().cloned(),
            "--crate-type" => kind = it.next().map(String::as_str),
            _ if a.starts_with("--print") => return None,
            _ => {
                if let Some(t) = a.strip_prefix("--crate-type=") {
                    kind = Some(t);
                } else if let Some(n) = a.strip_prefix("--crate-name=") {
                    name = Some(n.to_owned());
                }
            }
        }
    }
    let kind = match (test, kind, binary) {
        (true, _, false) => "lib.test",
        (true, _, true) => "bin.test",
        (false, Some("lib" | "rlib"), _) => "lib",
        (false, Some("bin"), _) => "bin",
        _ => return None,
    };
    Some((name?, kind))
}

/// Run as cargo's `RUSTC_WORKSPACE_WRAPPER` (`[this binary] rustc ARGS…`, with
/// [`DRIVER`] set): records the compile when it is one [`document`] needs, then becomes the
/// driver with the same arguments. `None` when this process is not the wrapper.
pub fn as_rustc_wrapper() -> Option<ExitCode> {
    let driver = std::env::var_os(DRIVER)?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let rustc = Path::new(args.first()?);
    if rustc.file_stem().and_then(|s| s.to_str()) != Some("rustc") {
        return None;
    }
    if let (Some(records), Ok(package)) =
        (std::env::var_os(RECORDS), std::env::var("CARGO_PKG_NAME"))
    {
        let strings: Option<Vec<String>> = args[1..]
            .iter()
            .map(|a| a.clone().into_string().ok())
            .collect();
        if let Some(strings) = strings
            && let Some((krate, kind)) =
                to_record(&strings, std::env::var_os("CARGO_BIN_NAME").is_some())
        {
            let record = Record {
                cwd: std::env::current_dir().unwrap_or_default(),
                args: strings,
                env: std::env::vars().filter(|(k, _)| recorded_var(k)).collect(),
            };
            let path = Path::new(&records).join(format!("{package}.{krate}.{kind}.json"));
            let tmp = path.with_extension(format!("json.{}", std::process::id()));
            // A record that cannot be written leaves the old one (or none): the doc step
            // then names the crate. The compile itself goes on.
            if std::fs::write(&tmp, record.to_json())
                .and_then(|()| std::fs::rename(&tmp, &path))
                .is_err()
            {
                eprintln!("cargo xtask: cannot write {}", path.display());
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }
    // xtask runs on Unix only (step.rs's scratch directories are Unix's too).
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(&driver).args(&args).exec();
    eprintln!(
        "cargo xtask: cannot run {}: {e}",
        Path::new(&driver).display()
    );
    Some(ExitCode::from(101))
}

/// What rustdoc does with a compiler flag.
enum Flag {
    /// rustdoc takes it with its value: the crate, its edition, cfgs, dependencies, lints.
    Keep,
    /// Code generation, output and diagnostics' format: rustdoc has its own, or none.
    Drop,
}

/// The compiler flags a compile's record may hold that take a value, and what rustdoc
/// does with each.
fn flag(name: &str) -> Option<Flag> {
    Some(match name {
        "--crate-name" | "--edition" | "--crate-type" | "--cfg" | "--check-cfg" | "-L"
        | "--extern" | "--cap-lints" | "-W" | "-A" | "-D" | "-F" | "--warn" | "--allow"
        | "--deny" | "--forbid" | "--force-warn" | "--target" | "--sysroot" => Flag::Keep,
        "--error-format"
        | "--json"
        | "--emit"
        | "-C"
        | "--codegen"
        | "--out-dir"
        | "-o"
        | "--diagnostic-width"
        | "--color"
        | "-Z"
        | "--remap-path-prefix" => Flag::Drop,
        _ => return None,
    })
}

/// rustdoc's arguments for a compile's: the kept flags with their values, and the source
/// file; an error names a flag this step does not know.
fn rustdoc_args(args: &[String]) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut input = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if matches!(a.as_str(), "--test" | "-g" | "-O") {
            continue;
        }
        if !a.starts_with('-') {
            if input.replace(a.clone()).is_some() {
                return Err(format!("two source files in one compile: {a}"));
            }
            continue;
        }
        // `--flag=value`, `--flag value`, `-Xvalue` or `-X value`.
        let (name, inline) = if a.starts_with("--") {
            match a.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (a.as_str(), None),
            }
        } else if a.len() > 2 {
            (&a[..2], Some(a[2..].to_owned()))
        } else {
            (a.as_str(), None)
        };
        let what =
            flag(name).ok_or_else(|| format!("a compiler flag the doc step does not know: {a}"))?;
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .cloned()
                .ok_or_else(|| format!("{name} without its value"))?,
        };
        if let Flag::Keep = what {
            out.push(name.to_owned());
            out.push(value);
        }
    }
    out.push(input.ok_or("no source file")?);
    Ok(out)
}

/// The workspace's targets `cargo doc --workspace --no-deps` documents, from `cargo
/// metadata --no-deps`: each library, and each binary whose name is not its package's
/// library's, unless its manifest says `doc = false`.
fn documented(metadata: &serde_json::Value) -> Vec<Target> {
    let members: Vec<&str> = metadata["workspace_members"]
        .as_array()
        .map(|m| m.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for p in metadata["packages"].as_array().into_iter().flatten() {
        if !p["id"].as_str().is_some_and(|id| members.contains(&id)) {
            continue;
        }
        let package = p["name"].as_str().unwrap_or_default().to_owned();
        let targets = p["targets"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let is = |t: &serde_json::Value, kind: &str| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == kind))
        };
        let krate =
            |t: &serde_json::Value| t["name"].as_str().unwrap_or_default().replace('-', "_");
        let lib = targets.iter().find(|t| is(t, "lib")).map(krate);
        for t in targets {
            if t["doc"] == false {
                continue;
            }
            let kind = if is(t, "lib") {
                Kind::Lib
            } else if is(t, "bin") && lib.as_deref() != Some(krate(t).as_str()) {
                Kind::Bin
            } else {
                continue;
            };
            out.push(Target {
                package: package.clone(),
                krate: krate(t),
                kind,
            });
        }
    }
    out
}

/// The doc step: rustdoc on every target [`documented`] names, from its record of the test
/// build, warnings as errors, into `target/doc`; a target whose compile has not changed
/// since its last docs were written is left as it is.
pub fn document(root: &Path, env: &[(&str, String)]) -> Result {
    let out = step::command(
        root,
        "cargo",
        &["metadata", "--no-deps", "--format-version", "1", "--locked"],
        env,
    )
    .output()
    .map_err(|e| Error::Usage(format!("cannot start cargo metadata: {e}")))?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "cargo metadata failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Failed(format!("cargo metadata's output: {e}")))?;
    let target = step::target_dir(root);
    let records = target.join("check").join("compiles");
    let stamps = target.join("check").join("docs");
    std::fs::create_dir_all(&stamps)
        .map_err(|e| Error::Usage(format!("{}: {e}", stamps.display())))?;
    let docs = target.join("doc");
    let rustdoc = std::env::var("RUSTDOC").unwrap_or_else(|_| "rustdoc".to_owned());
    let targets = documented(&metadata);
    let (mut written, mut kept) = (0, 0);
    for t in &targets {
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let [itself, harness] = t.records(&records);
        let path = if modified(&harness) > modified(&itself) {
            harness
        } else {
            itself
        };
        let record = std::fs::read_to_string(&path)
            .ok()
            .and_then(|s| Record::from_json(&s))
            .ok_or_else(|| {
                Error::Failed(format!(
                    "no record of the test build's compile of {} {} {} ({}): the doc step documents what the check's test build compiled (`cargo xtask check --build-only` builds it)",
                    t.package,
                    t.kind.as_str(),
                    t.krate,
                    path.display()
                ))
            })?;
        let mut args = rustdoc_args(&record.args).map_err(|e| {
            Error::Failed(format!(
                "{} {}: {e} (in {})",
                t.package,
                t.krate,
                path.display()
            ))
        })?;
        if !args.iter().any(|a| a == "--crate-type") {
            // A unit tests' compile names no crate type.
            args.extend(["--crate-type".to_owned(), t.kind.as_str().to_owned()]);
        }
        args.extend(["-o".to_owned(), docs.display().to_string()]);
        if let Some(v) = record.env.get("CARGO_PKG_VERSION") {
            args.extend(["--crate-version".to_owned(), v.clone()]);
        }
        if t.kind == Kind::Bin {
            // As cargo doc documents a binary: its items are all private.
            args.push("--document-private-items".to_owned());
        }
        args.extend(["-D".to_owned(), "warnings".to_owned()]);
        let stamp = stamps.join(t.key());
        let line = serde_json::json!({"args": args, "env": record.env}).to_string();
        let fresh = std::fs::read_to_string(&stamp).is_ok_and(|s| s == line)
            && modified(&stamp) >= modified(&path)
            && docs.join(&t.krate).join("index.html").is_file();
        if fresh {
            kept += 1;
            continue;
        }
        println!(
            " Documenting {} ({} {})",
            t.package,
            t.kind.as_str(),
            t.krate
        );
        let _ = std::fs::remove_file(&stamp);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut c = step::command(&record.cwd, &rustdoc, &refs, &[]);
        c.envs(&record.env);
        step::run(c, &format!("the docs of {} ({})", t.package, t.krate))?;
        std::fs::write(&stamp, line)
            .map_err(|e| Error::Usage(format!("{}: {e}", stamp.display())))?;
        written += 1;
    }
    println!(
        "the docs of {} crates are in {}: {written} written, {kept} unchanged since their last docs",
        targets.len(),
        docs.strip_prefix(root).unwrap_or(&docs).display()
    );
    Ok(())
}

#[cfg(test)]
mod tests;
