//! `State`, `Resource` and `Ready`: the observed and desired state a function reads and
//! writes.

use std::collections::BTreeMap;

/// The state of the composite resource (XR) and its composed resources.
///
/// `message State` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct State {
    /// The composite resource.
    #[prost(message, optional, tag = "1")]
    pub composite: Option<Resource>,
    /// The composed resources, keyed by the name the Composition gives them (not by
    /// `metadata.name`).
    #[prost(btree_map = "string, message", tag = "2")]
    pub resources: BTreeMap<String, Resource>,
}

/// One resource: its JSON object as a `google.protobuf.Struct`, its connection details, and
/// whether it is ready.
///
/// `message Resource` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resource {
    /// The resource, as JSON.
    #[prost(message, optional, tag = "1")]
    pub resource: Option<super::Struct>,
    /// Connection details (a Secret's data).
    #[prost(btree_map = "string, bytes", tag = "2")]
    pub connection_details: BTreeMap<String, Vec<u8>>,
    /// Readiness of a desired composed resource, as the function judges it ([`Ready`]).
    #[prost(enumeration = "Ready", tag = "3")]
    pub ready: i32,
}

/// Whether a desired composed resource is ready. Unspecified lets core decide from the
/// resource's `Ready` condition.
///
/// `enum Ready` in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Ready {
    /// `READY_UNSPECIFIED`
    Unspecified = 0,
    /// `READY_TRUE`
    True = 1,
    /// `READY_FALSE`
    False = 2,
}
