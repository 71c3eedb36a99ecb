//! The `harness` command. Exit codes: 0 pass, 1 an assertion or regression failed, 2 bad
//! input or setup.

mod cli;

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = <cli::Cli as clap::Parser>::parse();
    match cli.command.execute() {
        Ok(outcome) => outcome.exit_code(),
        Err(err) => cli::report_error(&err),
    }
}
