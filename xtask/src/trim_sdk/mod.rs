//! `cargo xtask trim-sdk`: the published aws-sdk-ec2 cut down to the operations the
//! project calls, for `vendor/aws-sdk-ec2` (vendor/README.md says why).
//!
//! The trim copies the published crate and removes, without changing a kept line:
//! - the operations not asked for (their `operation/`, `client/` and serde modules), and
//!   the waiters;
//! - the shapes (`types/`) and their serde (`protocol_serde/`) that no kept operation
//!   reaches, followed through `crate::types::…` and `crate::protocol_serde::…` paths;
//! - every item elsewhere (a `mod` or `pub use` line, an `impl` block, a trait method, an
//!   enum variant) that names something removed;
//! - from the manifest, the dev-dependencies, tests and build hints.
//!
//! So the kept operations serialise, sign, retry and parse exactly as the published SDK
//! does: the same generated code, less of it.

mod items;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::files::{files_under, io_error, read};
use crate::step::{Error, Result};
use items::List;

/// A published SDK crate that `vendor/` holds trimmed.
pub struct Sdk {
    /// The crate's name (`aws-sdk-ec2`); the copy is `vendor/NAME`.
    pub name: &'static str,
    /// The published version the copy is the trim of.
    pub version: &'static str,
    /// The SHA-256 of that version's `.crate` file, as crates.io's index gives it.
    pub sha256: &'static str,
    /// The operations the project calls (module names under `src/operation/`).
    pub operations: &'static [&'static str],
}

/// The trimmed crates.
pub const SDKS: [Sdk; 1] = [Sdk {
    name: "aws-sdk-ec2",
    version: "1.274.0",
    sha256: "13e3f0815e4ac74946498e34064459dbae1efb7ec174cce6ed444f50f82a0a73",
    // The provider's VPC kind and mock-cloud's SDK tests.
    operations: &[
        "create_vpc",
        "describe_vpcs",
        "delete_vpc",
        "modify_vpc_attribute",
        "create_tags",
        "describe_tags",
        "delete_tags",
    ],
}];

impl Sdk {
    /// Its copy, from the workspace's root.
    pub fn vendored(&self) -> PathBuf {
        Path::new("vendor").join(self.name)
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The crates to trim (all of them by default): aws-sdk-ec2.
    #[arg(value_name = "CRATE")]
    crates: Vec<String>,
    /// The published crate, unpacked (`curl -L
    /// https://static.crates.io/crates/NAME/NAME-VERSION.crate | tar xz`), for one CRATE.
    /// Without it: the copy of the version in `SDKS` in cargo's registry, or else that
    /// version downloaded from crates.io (with curl and tar) into the target directory and
    /// checked against its SHA-256.
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// Trim into a scratch directory and compare the result with the copy in vendor/
    /// instead of writing it: exit 1 naming the first files that differ.
    #[arg(long)]
    check: bool,
}

pub fn run(root: &Path, args: &Args) -> Result {
    let chosen: Vec<&Sdk> = match args.crates.is_empty() {
        true => SDKS.iter().collect(),
        false => args
            .crates
            .iter()
            .map(|c| {
                SDKS.iter().find(|s| s.name == c).ok_or_else(|| {
                    let names: Vec<&str> = SDKS.iter().map(|s| s.name).collect();
                    Error::Usage(format!("no trimmed crate {c}: {}", names.join(", ")))
                })
            })
            .collect::<Result<_>>()?,
    };
    if args.from.is_some() && chosen.len() != 1 {
        return Err(Error::Usage("--from needs exactly one CRATE".to_owned()));
    }
    for sdk in chosen {
        let from = match &args.from {
            Some(dir) => root.join(dir),
            None => published(root, sdk)?,
        };
        trim_one(root, sdk, &from, args.check)?;
    }
    Ok(())
}

fn trim_one(root: &Path, sdk: &Sdk, from: &Path, check: bool) -> Result {
    if !from.join("src/lib.rs").is_file() || !from.join("src/types.rs").is_file() {
        return Err(Error::Usage(format!(
            "{}: not an unpacked {} (no src/lib.rs and src/types.rs)",
            from.display(),
            sdk.name
        )));
    }
    let out = root.join(sdk.vendored());
    let dest = match check {
        true => crate::step::target_dir(root)
            .join("trim-sdk")
            .join(sdk.name),
        false => out.clone(),
    };
    let trim = Trim::new(&from.join("src"), sdk.operations)?;
    let summary = trim.write(from, &dest)?;
    println!("{}: {summary}", sdk.name);
    if check {
        let diff = differences(&dest, &out)?;
        if !diff.is_empty() {
            return Err(Error::Failed(format!(
                "{} differs from the trim of {} in {} files, first: {}",
                out.display(),
                from.display(),
                diff.len(),
                diff.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        println!("{} is the trim of {}", out.display(), from.display());
    }
    Ok(())
}

/// `cargo xtask check`'s step: each copy is the trim of its published crate.
pub fn check(root: &Path) -> Result {
    run(
        root,
        &Args {
            crates: Vec::new(),
            from: None,
            check: true,
        },
    )
}

/// The published crate, unpacked: cargo's registry copy if there is one, else downloaded.
fn published(root: &Path, sdk: &Sdk) -> Result<PathBuf> {
    let name = format!("{}-{}", sdk.name, sdk.version);
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    if let Some(src) = cargo_home.map(|h| h.join("registry/src")) {
        for index in fs::read_dir(&src).into_iter().flatten().flatten() {
            let dir = index.path().join(&name);
            if dir.join("src/types.rs").is_file() {
                return Ok(dir);
            }
        }
    }
    let dir = crate::step::target_dir(root).join("trim-sdk-published");
    if dir.join(&name).join("src/types.rs").is_file() {
        return Ok(dir.join(name));
    }
    fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    let file = dir.join(format!("{name}.crate"));
    let url = format!("https://static.crates.io/crates/{}/{name}.crate", sdk.name);
    println!("downloading {url}");
    let mut curl = std::process::Command::new("curl");
    curl.args(["-sSfL", "--retry", "3", "-o"])
        .arg(&file)
        .arg(&url);
    crate::step::run(curl, &format!("the download of {name}"))?;
    let sum = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .map_err(|e| Error::Usage(format!("sha256sum: {e}")))?;
    let got = String::from_utf8_lossy(&sum.stdout);
    if got.split_whitespace().next() != Some(sdk.sha256) {
        let _ = fs::remove_file(&file);
        return Err(Error::Failed(format!(
            "{url}: SHA-256 {got}, expected {}",
            sdk.sha256
        )));
    }
    let mut tar = std::process::Command::new("tar");
    tar.arg("xzf").arg(&file).arg("-C").arg(&dir);
    crate::step::run(tar, &format!("unpacking {name}"))?;
    Ok(dir.join(name))
}

/// What the trim keeps, found from the published source.
struct Trim {
    src: PathBuf,
    operations: BTreeSet<String>,
    /// Shape name (and builder name) to its module under `types/` (`Vpc` → `_vpc`).
    modules: BTreeMap<String, String>,
    /// The modules of `types/` and `protocol_serde/` the kept operations reach.
    types: BTreeSet<String>,
    shapes: BTreeSet<String>,
}

impl Trim {
    fn new(src: &Path, operations: &[&str]) -> Result<Trim> {
        let mut modules = BTreeMap::new();
        for file in ["types.rs", "types/builders.rs"] {
            for line in read(&src.join(file))?.lines() {
                let Some(path) = line.strip_prefix("pub use crate::types::") else {
                    continue;
                };
                let path = path.trim_end_matches(';');
                if let Some((module, name)) = path.split_once("::") {
                    modules.insert(name.to_owned(), module.to_owned());
                }
            }
        }
        let mut trim = Trim {
            src: src.to_path_buf(),
            operations: operations.iter().map(|s| (*s).to_owned()).collect(),
            modules,
            types: BTreeSet::new(),
            shapes: BTreeSet::new(),
        };
        trim.reach()?;
        Ok(trim)
    }

    /// Follows the kept operations' paths to the shapes and serde modules they use.
    fn reach(&mut self) -> Result {
        let mut queue = Vec::new();
        for op in &self.operations {
            let dir = self.src.join("operation").join(op);
            if !dir.is_dir() {
                return Err(Error::Usage(format!(
                    "no operation {op} in {}",
                    self.src.display()
                )));
            }
            queue.extend(files_under(&dir, "")?);
            queue.push(self.src.join(format!("operation/{op}.rs")));
            queue.push(self.src.join(format!("client/{op}.rs")));
        }
        let mut seen = BTreeSet::new();
        while let Some(file) = queue.pop() {
            if !file.is_file() || !seen.insert(file.clone()) {
                continue;
            }
            let text = read(&file)?;
            let modules: Vec<String> = self.type_modules(&text).collect();
            for module in modules {
                if self.types.insert(module.clone()) {
                    queue.push(self.src.join(format!("types/{module}.rs")));
                }
            }
            for name in paths_after(&text, "crate::protocol_serde::") {
                if name.starts_with("shape_") && self.shapes.insert(name.to_owned()) {
                    queue.push(self.src.join(format!("protocol_serde/{name}.rs")));
                }
            }
        }
        Ok(())
    }

    /// The `types/` modules that `text` names after `crate::types::` (a module, a shape or
    /// a builder).
    fn type_modules<'t>(&'t self, text: &'t str) -> impl Iterator<Item = String> + 't {
        paths_after(text, "crate::types::").filter_map(|name| {
            let module = match name.starts_with('_') {
                true => name.to_owned(),
                false => self.modules.get(name)?.clone(),
            };
            self.src
                .join(format!("types/{module}.rs"))
                .is_file()
                .then_some(module)
        })
    }

    /// The first path in `text` to something the trim removes.
    fn removed<'t>(&self, text: &'t str) -> Option<&'t str> {
        let op = paths_after(text, "crate::operation::").find(|n| {
            !self.operations.contains(*n) && self.src.join(format!("operation/{n}.rs")).is_file()
        });
        let ty = || {
            self.type_modules(text)
                .find(|m| !self.types.contains(m))
                .map(|_| "crate::types::…")
        };
        let shape = || {
            paths_after(text, "crate::protocol_serde::")
                .find(|n| n.starts_with("shape_") && !self.shapes.contains(*n))
        };
        let waiter = || paths_after(text, "crate::waiters::").next();
        op.or_else(ty).or_else(shape).or_else(waiter)
    }

    /// Whether `file` keeps a module file of its own: the stems under `dir` it keeps.
    fn keeps(&self, dir: &str, stem: &str) -> bool {
        match dir {
            "operation" => self.operations.contains(stem),
            "client" => self.operations.contains(stem) || stem == "customize",
            "types" => self.types.contains(stem) || stem == "builders",
            "protocol_serde" => self.shapes.contains(stem),
            "waiters" => false,
            _ => true,
        }
    }

    /// Writes the trimmed crate from the published one at `from` into `out`.
    fn write(&self, from: &Path, out: &Path) -> Result<String> {
        if out.exists() {
            fs::remove_dir_all(out).map_err(|e| io_error(out, e))?;
        }
        let (mut kept, mut dropped, mut lines_before, mut lines_after) = (0, 0, 0, 0);
        for file in files_under(from, "")? {
            let rel = file.strip_prefix(from).expect("under from");
            let top = rel
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .unwrap_or("");
            if matches!(
                top,
                "tests" | "benches" | "examples" | "Cargo.lock" | "Cargo.toml.orig"
            ) || top.starts_with(".cargo")
            {
                continue;
            }
            let target = out.join(rel);
            let source = match rel.extension().is_some_and(|e| e == "rs") {
                true => Some(read(&file)?),
                false => None,
            };
            lines_before += source.as_deref().map_or(0, |t| t.lines().count());
            if rel.starts_with("src") && !self.keeps_file(rel) {
                dropped += 1;
                continue;
            }
            fs::create_dir_all(target.parent().expect("a file's parent"))
                .map_err(|e| io_error(&target, e))?;
            let text = if let Some(source) = &source {
                self.trim_file(from, rel, source)
            } else if rel == Path::new("Cargo.toml") {
                manifest(&read(&file)?)
            } else {
                fs::copy(&file, &target).map_err(|e| io_error(&target, e))?;
                kept += 1;
                continue;
            };
            if source.is_some() {
                lines_after += text.lines().count();
            }
            fs::write(&target, text).map_err(|e| io_error(&target, e))?;
            kept += 1;
        }
        Ok(format!(
            "trimmed to {} operations, {} shapes and {} serde modules: {kept} files kept, \
             {dropped} dropped; {lines_after} of {lines_before} lines of Rust",
            self.operations.len(),
            self.types.len(),
            self.shapes.len()
        ))
    }

    /// Whether the file at `rel` (under the crate's root, in `src/`) stays.
    fn keeps_file(&self, rel: &Path) -> bool {
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        match parts.as_slice() {
            ["src", dir, rest @ ..] if !rest.is_empty() => {
                let stem = rest[0].trim_end_matches(".rs");
                self.keeps(dir, stem)
            }
            _ => true,
        }
    }

    /// A kept file's text without the items that name something removed.
    fn trim_file(&self, from: &Path, rel: &Path, text: &str) -> String {
        let module_dir = module_dir(rel);
        // A `mod name;` whose file the trim does not keep.
        let gone = |name: &str| {
            let file = module_dir.join(format!("{name}.rs"));
            let kept = from.join(&file).is_file() && self.keeps_file(&file);
            !kept && !from.join(&module_dir).join(name).join("mod.rs").is_file()
        };
        self.trim(text, 0..text.len(), List::Items, &gone)
    }

    fn trim(
        &self,
        s: &str,
        range: std::ops::Range<usize>,
        list: List,
        gone: &dyn Fn(&str) -> bool,
    ) -> String {
        let spans = items::split(s, range.clone(), list);
        let mut out = String::new();
        for span in &spans {
            let code = items::code(&s[span.clone()]);
            if module_declared(&code).is_some_and(gone) {
                continue;
            }
            if self.removed(&code).is_none() {
                out.push_str(&s[span.clone()]);
                continue;
            }
            // A container whose header is clean keeps what in it is clean.
            let Some(body) = items::body(s, span.clone()) else {
                continue;
            };
            let head = items::code(&s[span.start..body.start]);
            let kind = container(&head);
            if kind.is_none() || self.removed(&head).is_some() {
                continue;
            }
            let inner = match kind {
                Some("enum") => List::Variants,
                _ => List::Items,
            };
            out.push_str(&s[span.start..body.start]);
            out.push_str(&self.trim(s, body.clone(), inner, gone));
            out.push_str(&s[body.end..span.end]);
        }
        let tail = spans.last().map_or(range.start, |r| r.end);
        out.push_str(&s[tail..range.end]);
        out
    }
}

/// The directory a file's `mod x;` lines name files in: `src/a.rs` → `src/a/`, and
/// `src/lib.rs` or `src/a/mod.rs` → their own directory.
fn module_dir(rel: &Path) -> PathBuf {
    let parent = rel.parent().unwrap_or(Path::new("")).to_path_buf();
    match rel.file_stem().and_then(|s| s.to_str()) {
        Some("lib" | "mod") => parent,
        Some(stem) => parent.join(stem),
        None => parent,
    }
}

/// The name of `mod name;` (with attributes and visibility), if `code` is one.
fn module_declared(code: &str) -> Option<&str> {
    let mut rest = code.trim();
    while let Some(attr) = rest.strip_prefix("#[") {
        rest = attr.split_once(']')?.1.trim_start();
    }
    if let Some(vis) = rest.strip_prefix("pub") {
        rest = vis.trim_start();
        if let Some(scope) = rest.strip_prefix('(') {
            rest = scope.split_once(')')?.1.trim_start();
        }
    }
    let name = rest.strip_prefix("mod ")?.trim().strip_suffix(';')?.trim();
    name.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some(name)
}

/// `impl`, `trait`, `enum` or `mod`: the kind of a container whose header is `head`.
fn container(head: &str) -> Option<&'static str> {
    let words = head.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let mut found = None;
    for w in words {
        found = match w {
            "impl" => Some("impl"),
            "trait" => Some("trait"),
            "enum" => Some("enum"),
            "mod" => Some("mod"),
            "fn" | "struct" | "const" | "static" => return None,
            _ => continue,
        };
        break;
    }
    found
}

/// The identifiers right after each occurrence of `prefix` in `text` (`builders::` is
/// looked through).
fn paths_after<'t>(text: &'t str, prefix: &'t str) -> impl Iterator<Item = &'t str> + 't {
    text.match_indices(prefix).map(move |(at, _)| {
        let mut rest = &text[at + prefix.len()..];
        if let Some(r) = rest.strip_prefix("builders::") {
            rest = r;
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        &rest[..len]
    })
}

/// The published manifest without what only the published tests need, and with the
/// trim's leftovers allowed.
fn manifest(toml: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for line in toml.split_inclusive('\n') {
        if line.starts_with('[') {
            let table = line.trim().trim_matches(['[', ']']);
            skip = table.starts_with("dev-dependencies")
                || matches!(table, "hints" | "test" | "bench" | "example");
        }
        if !skip {
            out.push_str(line);
        }
    }
    let mut out = out.trim_end().to_owned();
    out.push_str(
        "\n\n[lints.rust]\n# The trim keeps helpers that only the removed operations called.\ndead_code = \"allow\"\n",
    );
    out
}

/// The files that differ between two trees, by path under them.
fn differences(a: &Path, b: &Path) -> Result<Vec<String>> {
    let list = |root: &Path| -> Result<BTreeSet<PathBuf>> {
        if !root.is_dir() {
            return Ok(BTreeSet::new());
        }
        Ok(files_under(root, "")?
            .into_iter()
            .map(|p| p.strip_prefix(root).expect("under").to_path_buf())
            .collect())
    };
    let (la, lb) = (list(a)?, list(b)?);
    let mut out = Vec::new();
    for rel in la.union(&lb) {
        let same = la.contains(rel)
            && lb.contains(rel)
            && fs::read(a.join(rel)).map_err(|e| io_error(a, e))?
                == fs::read(b.join(rel)).map_err(|e| io_error(b, e))?;
        if !same {
            out.push(rel.display().to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
