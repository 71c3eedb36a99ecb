//! The fuzz targets without libFuzzer: lists them and their seeds, and replays inputs
//! through a plain build, so that a crash found by `cargo xtask fuzz` shows its backtrace.
//!
//! ```text
//! corpus list                      the targets, one a line
//! corpus seeds TARGET              TARGET's seed files taken from the tests, one a line
//! corpus replay TARGET FILE...     runs each FILE through TARGET; a failure panics
//! corpus write-seeds apiserver_requests
//!                                  writes the target's encoded seed sessions
//!                                  (fuzz::apiserver::seed) as its seed files
//! ```
//!
//! Paths are relative to the workspace root. Exit codes: 0 done, 2 bad arguments or an
//! unreadable file; a failing input panics (101).

use std::path::Path;

use anyhow::{Context, bail};
use fuzz::{TARGETS, Target};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("the fuzz crate has a workspace above it")?;
    let target = |name: Option<&String>| {
        let name = name.context("a target name is required (corpus list)")?;
        Target::named(name).with_context(|| format!("no target {name:?} (corpus list)"))
    };
    match args.first().map(String::as_str) {
        Some("list") => TARGETS.iter().for_each(|t| println!("{}", t.name)),
        Some("seeds") => {
            for file in target(args.get(1))?.seed_files(root)? {
                println!("{}", file.strip_prefix(root).unwrap_or(&file).display());
            }
        }
        Some("replay") => {
            let t = target(args.get(1))?;
            for file in &args[2..] {
                let data = std::fs::read(file).with_context(|| format!("cannot read {file}"))?;
                (t.check)(&data);
                println!("{file}: ok");
            }
        }
        Some("write-seeds") => match args.get(1).map(String::as_str) {
            Some("apiserver_requests") => {
                for file in fuzz::apiserver::seed::write(root)? {
                    println!("{}", file.strip_prefix(root).unwrap_or(&file).display());
                }
            }
            other => bail!(
                "write-seeds: only apiserver_requests has encoded seed sessions (got {other:?})"
            ),
        },
        _ => bail!(
            "usage: corpus list | corpus seeds TARGET | corpus replay TARGET FILE... | corpus write-seeds apiserver_requests"
        ),
    }
    Ok(())
}
