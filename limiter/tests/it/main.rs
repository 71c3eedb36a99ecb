//! Integration tests of the limiter crate.

mod breaker;
mod clocks;
mod conformance;
mod models;
mod properties;
mod scopes;
mod support;
