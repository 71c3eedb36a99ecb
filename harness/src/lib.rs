//! harness: runs YAML load scenarios against a rate-limited Kubernetes provider, predicts
//! its budget from the provider's own settings, measures at the source, asserts and reports.
//!
//! Where to start:
//! - [`scenario`]: the file format ([`scenario::parse`], [`scenario::load`]).
//! - [`predict`]: the budget of docs/budget.md, formula by formula ([`predict::plan`]).
//! - [`sweep`]: a scenario over a grid of settings, and the cheapest that meets an SLO.
//!
//! ```
//! let yaml = "apiVersion: harness/v1\nname: tiny\nprovider: {maxReconcileRate: 10}\n\
//!             resources:\n  - {name: b, kind: Bucket, count: 1000}\n\
//!             phases:\n  - {name: create, action: create}\n";
//! let scenario = harness::scenario::parse(yaml, "tiny.yaml").unwrap();
//! assert_eq!(scenario.settings.rate(), 10);
//! ```

pub mod calibrate;
pub mod compare;
pub mod float;
pub mod measure;
pub mod predict;
pub mod report;
pub mod result;
pub mod rng;
pub mod run;
pub use harness_scenario as scenario;
pub mod selfcheck;
pub mod sweep;

/// The cargo features this harness was built with, as `result.json` records them
/// (`run.features`): a build with `aws` runs the provider's AWS controllers in its embedded
/// stack, whose requests change the order of an embedded run's events, so results are
/// comparable between builds with the same features.
pub const BUILD_FEATURES: &[&str] = &[
    #[cfg(feature = "aws")]
    "aws",
];
