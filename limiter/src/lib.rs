//! The shared limiter (work in progress).
pub mod go;
mod instant;
pub mod rate;
pub mod workqueue;
