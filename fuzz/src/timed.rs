//! What the sessions of the request targets are lists of: a request after some virtual time.

use arbitrary::Arbitrary;

/// One request: virtual time to let pass before it, then what it does.
#[derive(Arbitrary, Debug)]
pub struct Timed<Op> {
    /// Virtual time to let pass before it, in milliseconds.
    pub wait_ms: u16,
    /// What it does.
    pub op: Op,
}
