//! The integration tests of mock-cloud: in-process under paused time, and over sockets
//! in real time. The tests with aws-sdk-rust's clients are in `sdk-tests/` (the crate
//! `mock-cloud-sdk-tests`), so that these build without the SDK's clients.

mod admin;
mod aws_support;
mod aws_wire;
mod binary;
#[cfg(feature = "client")]
mod client;
mod faults;
mod isolation;
mod journal;
mod quotas;
mod resource_faults;
mod resources;
mod socket;
mod support;
