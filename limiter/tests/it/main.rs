//! Integration tests of the limiter crate.

mod clocks;
mod conformance;
mod models;
mod properties;
mod scopes;
