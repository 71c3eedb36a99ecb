//! Integration tests of the harness library and binary.

/// mimalloc, as the harness binary uses: the virtual-time runs allocate heavily.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod aws;
#[cfg(feature = "aws")]
mod aws_flavour;
mod bins;
mod cli;
mod client_limiters;
mod clock;
mod closed_pipe;
mod cluster;
mod compare;
mod composite_phases;
mod composite_run;
mod composite_schema;
mod composite_storms;
mod core_process;
mod doc_links;
mod docs;
mod echo;
mod error_paths;
mod errors;
mod fixture;
mod keeping;
mod kill;
mod predict_generated;
mod predict_json;
mod process;
mod provider_process;
mod reconcile_requests;
mod reports;
mod run;
mod scenario_properties;
mod scenarios;
mod secrets;
mod selfcheck;
mod soak;
mod sweep;
mod sweep_job;
mod timing;
mod virtual_time;
mod xr_reports;
