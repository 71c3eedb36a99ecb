//! # composer
//!
//! Crossplane core's composite layer. This first piece is its function layer.
pub mod function;
