//! Reports made from a [`crate::result::RunResult`]: the terminal table, JUnit XML and the
//! self-contained HTML page; and the `predict` listing.

mod chaos;
mod core;
mod escape;
mod html;
mod junit;
mod parts;
mod peaks;
pub mod per_reconcile;
mod quota;
mod strip;
mod svg;
mod text;
mod waiting;
mod xr;

pub use chaos::{kill_lines, memory_lines};
pub use escape::xml_escape;
pub(crate) use html::STYLE;
pub use html::html;
pub use junit::junit;
pub use svg::{Limit as ChartLimit, Scatter, ScatterPoint, scatter};
pub use text::{assertion_table, human_duration, plan_listing, time_summary, what_it_creates};
pub use waiting::waiting_lines;
