//! Real-time tests whose figures depend on the provider being scheduled promptly, kept from
//! running beside the tests that keep both cores busy for minutes.
//!
//! A real-time calibration attributes cloud calls to reconciles by the times the journals
//! give them; beside a virtual-time run that holds a core for three minutes, the provider's
//! process is starved and a reconcile's boundary lands among its calls (seen: one steady
//! observe of 14 calls, one of 17, where every other made 15). A CPU-heavy test takes
//! [`heavy`], a timing-sensitive one [`sensitive`]: the two are rooms, any number of tests
//! in one room at a time and none in the other, so the sensitive tests (which mostly wait
//! on real time) run beside each other, and the heavy ones beside each other, never mixed.
//!
//! The lock is file locks (`flock`) in the target's temporary directory, not locks in
//! memory: they hold between the threads of one test process (`cargo test`) and between the
//! processes of one run (`cargo nextest`, a process per test), since each holder opens the
//! files anew. A room is one file that its tests hold shared; a test enters through a gate
//! (a third file, held exclusively while entering), holds its room shared, and waits to
//! hold the other room exclusively, which it can only when nobody is in it, then lets it
//! and the gate go. Whoever waits at the gate waits for the room to empty; nobody inside
//! waits for anything, so the rooms never deadlock.

use std::fs::{File, OpenOptions};
use std::path::Path;

/// A held place in a room, released when dropped (the file closes).
pub struct Cores {
    _file: File,
}

/// The lock file `name`, opened anew for this holder.
fn open(name: &str) -> File {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

const HEAVY: &str = "harness-it-cores-heavy.lock";
const SENSITIVE: &str = "harness-it-cores-sensitive.lock";

/// Enters room `mine` once room `other` is empty.
fn enter(mine: &str, other: &str) -> Cores {
    let gate = open("harness-it-cores-gate.lock");
    gate.lock().expect("an exclusive lock on the gate");
    let room = open(mine);
    room.lock_shared().expect("a shared lock on the room");
    let theirs = open(other);
    theirs
        .lock()
        .expect("an exclusive lock on the other room, once it is empty");
    drop(theirs);
    drop(gate);
    Cores { _file: room }
}

/// Held by a test that keeps a core busy for minutes.
pub fn heavy() -> Cores {
    enter(HEAVY, SENSITIVE)
}

/// Held by a real-time test whose figures need the provider scheduled promptly.
pub fn sensitive() -> Cores {
    enter(SENSITIVE, HEAVY)
}
