//! The shared limiter (work in progress).
pub mod controller;
pub mod crossplane;
pub mod go;
mod instant;
pub mod rate;
pub mod replay;
pub mod workqueue;
