//! Real-time tests whose figures depend on the provider being scheduled promptly, kept from
//! running beside the tests that keep both cores busy for minutes.
//!
//! A real-time calibration attributes cloud calls to reconciles by the times the journals
//! give them; beside a virtual-time run that holds a core for three minutes, the provider's
//! process is starved and a reconcile's boundary lands among its calls (seen: one steady
//! observe of 14 calls, one of 17, where every other made 15). A CPU-heavy test takes
//! [`heavy`] (any number may run together); a timing-sensitive one takes [`sensitive`],
//! which waits until none of them runs and keeps them out while it does.
//!
//! The lock is a file lock (`flock`) on one file in the target's temporary directory, not a
//! lock in memory: it holds between the threads of one test process (`cargo test`) and
//! between the processes of one run (`cargo nextest`, a process per test), since each
//! holder opens the file anew.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// A held lock on the cores, released when dropped (the file closes).
pub struct Cores {
    _file: File,
}

/// The lock file, opened anew for this holder.
fn open() -> File {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("harness-it-cores.lock");
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

/// Held by a test that keeps a core busy for minutes.
pub fn heavy() -> Cores {
    let file = open();
    file.lock_shared().expect("a shared lock on the cores");
    Cores { _file: file }
}

/// Held by a real-time test whose figures need the provider scheduled promptly.
pub fn sensitive() -> Cores {
    let file = open();
    file.lock().expect("an exclusive lock on the cores");
    Cores { _file: file }
}
