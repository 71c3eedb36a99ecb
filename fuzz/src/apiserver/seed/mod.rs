//! Seeds of the `apiserver_requests` target: sessions written as the bytes that
//! `arbitrary` decodes into them, so that fuzzing starts from requests that reach deep
//! paths (server-side apply with managed fields and conflicts, strategic merge patch
//! directives) rather than waiting for random bytes to spell them.
//!
//! [`Encode`] is the inverse of the derived `Arbitrary` decoding for the input types
//! (arbitrary 1.x: integers little-endian, an enum's variant from a `u32` as
//! `(u32 × variants) >> 32`, a collection's items each after a byte whose low bit says one
//! more follows, a vocabulary word as a ratio byte then its index). Text that is not a
//! vocabulary word cannot be written (its length would come from the end of the input),
//! so seeds use vocabulary words only; the variants holding free text are refused.
//!
//! The seeds are checked in as files under `fuzz/seeds/apiserver_requests/`;
//! `corpus write-seeds apiserver_requests` writes them from [`seeds`], and the fuzz
//! crate's tests check that the files are what [`seeds`] encodes and that each decodes
//! back to its session.

mod build;
mod encode;
mod input;
mod sessions;

pub use encode::Encode;
pub use sessions::seeds;

use super::input::Session;

/// Where the seed files are, from the workspace root.
pub const DIR: &str = "fuzz/seeds/apiserver_requests";

/// Writes every seed of [`seeds`] as `DIR/NAME` under `root`, the workspace root, and
/// removes any other file there; returns the paths written.
///
/// # Errors
/// If the directory or a file cannot be written.
pub fn write(root: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let dir = root.join(DIR);
    std::fs::create_dir_all(&dir)?;
    let seeds = seeds();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let known = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| seeds.iter().any(|(name, _)| *name == n));
        if !known && path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }
    let mut written = Vec::new();
    for (name, session) in &seeds {
        let path = dir.join(name);
        std::fs::write(&path, encode(session))?;
        written.push(path);
    }
    Ok(written)
}

/// The bytes `Session::arbitrary_take_rest` decodes into `session`.
#[must_use]
pub fn encode(session: &Session) -> Vec<u8> {
    let mut out = Vec::new();
    session.encode(&mut out);
    out
}
