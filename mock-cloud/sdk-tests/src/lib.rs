//! mock-cloud driven by aws-sdk-rust's own clients: S3, STS, EC2 and DynamoDB round trips,
//! signatures, throttles retried by the SDK's retry modes, and resource faults, in
//! `tests/it/`.
//!
//! The crate has no code. It is a crate of its own so that the SDK clients are its
//! dev-dependencies rather than mock-cloud's: cargo builds a package's dev-dependencies for
//! every one of its test targets, so `cargo test -p mock-cloud --lib` would otherwise compile
//! the four SDK clients before running a unit test. Run these tests with
//! `cargo test -p mock-cloud-sdk-tests`; `cargo xtask check` runs them with the workspace.
