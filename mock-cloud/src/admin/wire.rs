//! The admin API's paths, headers and the bodies that are not types of their own
//! elsewhere: the calls page, the inventory and the error envelope.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::journal::Call;
use crate::store::Resource;

/// `GET`: the journal, as NDJSON ([`Call`] lines) with [`X_NEXT_SEQ`], [`X_DROPPED`] and
/// [`X_EPOCH`] headers; query `since=SEQ&limit=N`.
pub const CALLS_PATH: &str = "/admin/v1/calls";
/// `GET`: the [`Summary`](crate::Summary).
pub const SUMMARY_PATH: &str = "/admin/v1/summary";
/// `GET`: the [`Inventory`].
pub const INVENTORY_PATH: &str = "/admin/v1/inventory";
/// `PUT`: a [`FaultsDocument`](crate::admin::FaultsDocument) replaces the faults in force.
pub const FAULTS_PATH: &str = "/admin/v1/faults";
/// `POST`: clears resources, journal, summary and buckets (see
/// [`MockCloud::reset`](crate::MockCloud::reset)).
pub const RESET_PATH: &str = "/admin/v1/reset";
/// `PUT`: a [`ConfigDocument`](crate::admin::ConfigDocument) replaces the whole cloud (see
/// [`Switchable`](crate::Switchable)).
pub const CONFIG_PATH: &str = "/admin/v1/config";

/// The header of a calls page that says where the next page starts.
pub const X_NEXT_SEQ: &str = "x-next-seq";
/// The header of a calls page that says how many entries the journal has dropped.
pub const X_DROPPED: &str = "x-dropped";
/// The header of a calls page that carries the cloud's epoch, RFC 3339.
pub const X_EPOCH: &str = "x-epoch";

/// The most calls one `GET /admin/v1/calls` returns (and its default `limit`), so that the
/// journal lock is held for milliseconds, not seconds.
pub const CALLS_PAGE: u64 = 100_000;

/// One page of the journal: what `GET /admin/v1/calls` answers, and
/// [`MockCloud::calls_page`](crate::MockCloud::calls_page) in-process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallsPage {
    /// The calls, oldest first, `seq` rising.
    pub calls: Vec<Call>,
    /// Where the next page starts: one past the last call here, or, with no call here, the
    /// larger of the `since` asked for and the journal's next `seq`.
    pub next_seq: u64,
    /// Entries the journal has dropped since start or the last reset (a gap in `seq`).
    pub dropped: u64,
    /// The wall-clock time at which the cloud's clock (`at_us`) read zero.
    pub epoch: Timestamp,
}

/// What `GET /admin/v1/inventory` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// Every live resource, including ones creating or deleting, by account, collection
    /// and name.
    pub resources: Vec<Resource>,
}

/// The body of an error answer: `{"error": {"code": …, "message": …}}`, with `field` for a
/// bad request that names the offending field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The inside of an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// A machine-readable code, such as `InvalidArgument` or `NotFound`.
    pub code: String,
    /// A sentence for people.
    pub message: String,
    /// The offending field of a bad request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}
