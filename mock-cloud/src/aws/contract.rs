//! The contract between the AWS pipeline (`aws/mod.rs`) and a service: what a service's
//! `route` reads ([`AwsRequest`]) and says ([`Routed`], [`Unrouted`]), and what its
//! `handle` gets ([`Ctx`]). Services import these from here, never from the pipeline.

use bytes::Bytes;
use http::{HeaderMap, Method};
use jiff::Timestamp;

use super::accounts::Caller;
use super::envelope::{AwsError, Reply};
use super::state::AwsState;
use crate::cloud::MockCloud;
use crate::service::{Operation, Protocol, Service};

/// An AWS request, its body read.
#[derive(Debug)]
pub(crate) struct AwsRequest<'a> {
    pub service: Service,
    pub protocol: Protocol,
    pub method: &'a Method,
    /// The path as sent, percent-encoded.
    pub raw_path: &'a str,
    pub raw_query: Option<&'a str>,
    /// The query's pairs, decoded.
    pub query: super::params::Borrowed<'a>,
    pub headers: &'a HeaderMap,
    /// The request's authority (the `Host` header, or the URI's).
    pub authority: Option<&'a str>,
    pub body: Bytes,
    /// The credential scope's region (`us-east-1` for an unsigned request).
    pub region: String,
}

/// What a service's `route` says a request is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Routed {
    pub op: Operation,
    /// The quota class, an index into [`Service::classes`].
    pub class: u8,
    /// The resource for per-resource quotas (an S3 bucket, or bucket and prefix).
    pub resource: String,
    /// The journal's `name`.
    pub name: String,
    /// The operation needs no signature.
    pub anonymous: bool,
}

/// A request a service could not route: the operation if it is known and the journal's
/// name (both may stay empty), and the error to answer once the caller is authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrouted {
    pub op: Option<Operation>,
    pub name: String,
    pub error: Box<AwsError>,
}

impl Unrouted {
    /// A request whose operation is unknown, answered with `error`.
    pub fn new(error: AwsError) -> Unrouted {
        Unrouted {
            op: None,
            name: String::new(),
            error: Box::new(error),
        }
    }

    /// Names the operation (if known) and the resource for the journal.
    #[must_use]
    pub fn journalled_as(mut self, op: Option<Operation>, name: impl Into<String>) -> Unrouted {
        self.op = op;
        self.name = name.into();
        self
    }
}

/// What a handler gets.
pub(crate) struct Ctx<'a> {
    pub cloud: &'a MockCloud,
    pub request: &'a AwsRequest<'a>,
    pub reply: Reply<'a>,
    pub caller: &'a Caller,
    /// The cloud's wall-clock time: its epoch plus its clock.
    pub now: Timestamp,
    /// The per-resource drift of the resource the request names: `Some(field)` (a tag
    /// key; `None` for the extra tag `drift`) when its tags read drifted.
    pub drift: Option<Option<String>>,
    /// The per-resource slow create of the resource a create makes: how long it stays in
    /// its service's creating state.
    pub slow_create: Option<std::time::Duration>,
    /// EC2's CreateVpc: the ID reserved for the new VPC while per-resource rules are read.
    pub new_id: Option<String>,
}

impl Ctx<'_> {
    pub fn state(&self) -> &AwsState {
        &self.cloud.inner.aws
    }
}
