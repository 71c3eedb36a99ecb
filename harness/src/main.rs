//! The `harness` command. Exit codes: 0 pass, 1 an assertion or regression failed, 2 bad
//! input or setup, 141 standard output closed before everything was printed.

mod cli;

use std::process::ExitCode;

/// mimalloc, counting the bytes it holds for the program: the live heap, which the soak's
/// `memoryGrowth` judges (the resident set also counts the pages mimalloc keeps after a
/// free).
#[global_allocator]
static ALLOCATOR: live_heap::Counting<mimalloc::MiMalloc> =
    live_heap::Counting::new(mimalloc::MiMalloc);

fn main() -> ExitCode {
    harness::run::count_live_heap(live_heap::live_bytes);
    let cli = <cli::Cli as clap::Parser>::parse();
    match cli.command.execute() {
        Ok(outcome) => outcome.exit_code(),
        Err(err) => cli::report_error(&err),
    }
}
