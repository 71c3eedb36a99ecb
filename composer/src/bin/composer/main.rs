//! The `composer` binary: Crossplane core's composite controllers with core's flags
//! (`composer --help`). Exit codes: 0 stopped by SIGTERM or Ctrl-C, 1 a failure while
//! running, 2 bad flags or a failed setup.

mod cli;
mod metrics;
mod run;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if cli.print_crds {
        // JSON documents: YAML that kubectl and mock-apiserver read.
        for crd in composer::api::crossplane_crds() {
            println!(
                "---\n{}",
                serde_json::to_string_pretty(&crd).expect("a CRD serializes")
            );
        }
        return ExitCode::SUCCESS;
    }
    serve::log::init("info");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    match runtime.block_on(run::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {:#}", failure.error);
            ExitCode::from(failure.code)
        }
    }
}
