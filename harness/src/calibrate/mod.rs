//! `harness calibrate`: a provider's cloud calls per reconcile, by kind, path and operation,
//! measured on a small sample of a scenario's resources.
//!
//! [`sample()`] turns a scenario into its calibration run: a few resources of each group,
//! created and deleted slowly so that their reconciles do not overlap, and held through a
//! few polls. The run's `calls_per_reconcile` (`crate::measure::per_reconcile`) is then
//! written out by [`mod@file`] as a calibration file, which a profile names (`calibration`) so
//! that the budget uses the measured figures.

pub mod file;
pub mod sample;

pub use file::{CalibrationMeta, calibration_yaml, summary};
pub use sample::{SampleOptions, sample};
