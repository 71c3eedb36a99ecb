//! The writes of the store: create, update (with its status, resourceVersion, no-op,
//! generation and finalizer rules), delete, and writes to a whole resource.

mod create;
mod delete;
mod resource;
mod update;

use serde_json::Value;

use super::Subresource;
use crate::error::ApiError;
use crate::registry::ResourceKind;
use crate::ssa;

/// Records a client's non-apply write in `new`'s managed fields.
pub(super) fn track_update(
    kind: &ResourceKind,
    subresource: Subresource,
    manager: &str,
    clock: &crate::clock::Clock,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<(), ApiError> {
    let api_version = kind.api_version();
    let now = clock.rfc3339();
    let writer = ssa::Writer {
        manager,
        api_version: &api_version,
        kind: &kind.kind,
        status: subresource == Subresource::Status,
        status_subresource: kind.status_subresource,
        shape: ssa::Shape::of(kind),
        now: &now,
    };
    ssa::update(&writer, old, new).map_err(ssa::api_error)
}
