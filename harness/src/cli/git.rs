//! The git commit of the working directory as a run starts, recorded in the result.

use std::process::Command;

fn git(args: &[&str]) -> Option<std::process::Output> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
}

/// `HEAD`'s commit, with `+dirty` when tracked files have changes; None outside a git
/// checkout or without git.
pub fn commit() -> Option<String> {
    let head = git(&["rev-parse", "--short=12", "HEAD"])?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let dirty = Command::new("git")
        .args(["diff", "--quiet", "HEAD", "--"])
        .status()
        .is_ok_and(|s| s.code() == Some(1));
    Some(if dirty { format!("{head}+dirty") } else { head })
}
