//! Measurement primitives the run feeds: exact windowed maxima, latency histograms,
//! realised poll intervals and the orphan/duplicate audit.

mod audit;
mod poll;
mod ttr;
mod window;

pub use audit::{Audit, CloudResource, CustomResource, audit};
pub use poll::{ObserveSeries, PollStats, realised_intervals};
pub use ttr::{Latencies, LatencySummary};
pub use window::{WindowMax, bin_counts, window_us, windowed_max, within};
