//! Integration tests of the limiter crate.

mod conformance;
mod models;
mod properties;
