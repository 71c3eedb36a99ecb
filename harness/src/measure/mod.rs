//! Measurement primitives the run feeds: exact windowed maxima, latency histograms,
//! realised poll intervals, calls per reconcile by kind and path, the audit (orphans, duplicates, stuck and lost resources) and
//! memory growth.

mod audit;
mod memory;
pub mod per_reconcile;
mod per_resource;
mod poll;
mod ttr;
mod window;

pub use audit::{Audit, CloudResource, CustomResource, audit};
pub use memory::{
    Growth, HEAP_LIVE, MemorySample, PROCESS_RSS, growth, retained_by_design, shown_only,
};
pub use per_resource::{NamedCall, ResourceCalls, hot_loops, hot_loops_by, per_resource};
pub use poll::{ObserveSeries, PollStats, realised_intervals};
pub use ttr::{Latencies, LatencySummary};
pub use window::{WindowMax, bin_counts, window_us, windowed_max, within};
