//! Standard output that may close before the command is done (`harness schema | head -1`):
//! a closed pipe ends the command quietly with exit 141, as a shell reports a command that
//! SIGPIPE stopped, instead of the panic of `println!`.

use std::fmt;
use std::io::{self, Write as _};
use std::process::ExitCode;

/// Standard output's reader went away; nothing more can be shown.
#[derive(Debug, thiserror::Error)]
#[error("standard output closed")]
pub struct Closed;

/// Writing to standard output failed for another reason than its reader going away.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to standard output")]
pub struct WriteFailed(#[source] io::Error);

/// The exit code of a command whose standard output closed: 141, 128 + SIGPIPE.
pub const CLOSED_EXIT: u8 = 141;

/// Writes `args` to standard output and flushes it, so a closed pipe is seen here.
pub fn write(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => anyhow::Error::new(Closed),
            _ => anyhow::Error::new(WriteFailed(e)),
        })
}

/// The exit code for `err` when it is standard output closing, which is no error to report.
pub fn closed_exit(err: &anyhow::Error) -> Option<ExitCode> {
    err.chain()
        .any(|c| c.is::<Closed>())
        .then(|| ExitCode::from(CLOSED_EXIT))
}

/// `print!` that returns an error instead of panicking: [`Closed`] when the reader has gone.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` that returns an error instead of panicking: [`Closed`] when the reader has gone.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
