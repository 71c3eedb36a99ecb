//! The binaries' log output (feature `log`): `tracing` events as text on standard error,
//! filtered by `RUST_LOG` (tracing-subscriber's `EnvFilter` syntax, such as
//! `info,kube=debug`), with colours only for a person at a terminal, not in CI logs or
//! files. Standard output stays the binaries' own (addresses, reports, JSON).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Sends the process's `tracing` events to standard error, at `default` (a filter
/// directive such as `"info"` or `"warn"`) when `RUST_LOG` is unset or does not parse.
/// A second call, or one after another subscriber was installed, changes nothing.
pub fn init(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _already_set = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
