//! Budget prediction: docs/budget.md's formulas, each returning its formula text, inputs and
//! value ([`Prediction`]), and [`plan`], which applies them to a scenario phase by phase and
//! account by account.

pub mod backlog;
pub mod bounds;
pub mod conditional;
pub mod core;
pub mod coupled;
pub mod echo;
pub mod error_paths;
mod formula;
pub mod intervals;
mod params;
pub mod quota;
pub mod quota_wave;
pub mod scan;
pub mod steady;

pub use formula::{Input, Meaning, Prediction, fmt_num};
pub use params::{Params, QueueKind};
mod plan;
pub(crate) use plan::unloaded_ttr;
pub(crate) use plan::windows;
pub use plan::{ExpectedDuration, PhasePlan, Plan, plan};
