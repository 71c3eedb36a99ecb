//! `RunFunctionRequest` and what only a request carries: meta, credentials, required
//! resources and schemas.

use std::collections::BTreeMap;

use super::State;

/// What core sends to a function, one per pipeline step.
///
/// `message RunFunctionRequest` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RunFunctionRequest {
    /// Metadata about the request.
    #[prost(message, optional, tag = "1")]
    pub meta: Option<RequestMeta>,
    /// The observed state: the XR and the composed resources that exist.
    #[prost(message, optional, tag = "2")]
    pub observed: Option<State>,
    /// The desired state the previous steps accumulated.
    #[prost(message, optional, tag = "3")]
    pub desired: Option<State>,
    /// The step's `input`, from the Composition.
    #[prost(message, optional, tag = "4")]
    pub input: Option<super::Struct>,
    /// The pipeline's context, passed from step to step.
    #[prost(message, optional, tag = "5")]
    pub context: Option<super::Struct>,
    /// Deprecated in the proto: `required_resources` replaces it.
    #[prost(btree_map = "string, message", tag = "6")]
    pub extra_resources: BTreeMap<String, Resources>,
    /// The step's credentials, by name.
    #[prost(btree_map = "string, message", tag = "7")]
    pub credentials: BTreeMap<String, Credentials>,
    /// The resources the function required, by the name of the requirement.
    #[prost(btree_map = "string, message", tag = "8")]
    pub required_resources: BTreeMap<String, Resources>,
    /// The OpenAPI schemas the function required, by the name of the requirement.
    #[prost(btree_map = "string, message", tag = "9")]
    pub required_schemas: BTreeMap<String, Schema>,
}

/// `message RequestMeta` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestMeta {
    /// An opaque string identifying the request's content; core derives it from a hash of
    /// the request, and a function copies it to its response.
    #[prost(string, tag = "1")]
    pub tag: String,
    /// What the caller supports ([`Capability`]).
    #[prost(enumeration = "Capability", repeated, tag = "2")]
    pub capabilities: Vec<i32>,
}

/// What the caller of a function supports.
///
/// `enum Capability` in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Capability {
    /// `CAPABILITY_UNSPECIFIED`
    Unspecified = 0,
    /// `CAPABILITY_CAPABILITIES`: the caller advertises its capabilities.
    Capabilities = 1,
    /// `CAPABILITY_REQUIRED_RESOURCES`
    RequiredResources = 2,
    /// `CAPABILITY_CREDENTIALS`
    Credentials = 3,
    /// `CAPABILITY_CONDITIONS`
    Conditions = 4,
    /// `CAPABILITY_REQUIRED_SCHEMAS`
    RequiredSchemas = 5,
}

/// Credentials a step may use.
///
/// `message Credentials` in the proto.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Credentials {
    /// Where the credentials come from.
    #[prost(oneof = "credentials::Source", tags = "1")]
    pub source: Option<credentials::Source>,
}

/// The `oneof source` of [`Credentials`].
pub mod credentials {
    /// `oneof source` in `message Credentials`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Source {
        /// `credential_data`
        #[prost(message, tag = "1")]
        CredentialData(super::CredentialData),
    }
}

/// `message CredentialData` in the proto: a Secret's data.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CredentialData {
    /// The Secret's keys and values.
    #[prost(btree_map = "string, bytes", tag = "1")]
    pub data: BTreeMap<String, Vec<u8>>,
}

/// `message Resources` in the proto: the resources that matched one requirement.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resources {
    /// The matching resources.
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<super::Resource>,
}

/// `message Schema` in the proto: a required OpenAPI v3 schema.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    /// The schema; unset when the kind has none.
    #[prost(message, optional, tag = "1")]
    pub openapi_v3: Option<super::Struct>,
}
