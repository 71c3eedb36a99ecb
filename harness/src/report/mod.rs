//! Reports made from a [`crate::result::RunResult`]: the terminal table, JUnit XML and the
//! self-contained HTML page; and the `predict` listing.

mod html;
mod junit;
mod svg;
mod text;

pub use html::html;
pub use junit::{junit, xml_escape};
pub use text::{assertion_table, plan_listing};
