//! Crossplane's API types that the composite reconciler reads: the
//! `CompositeResourceDefinition` (XRD) that defines an XR kind, the `Composition` and its
//! `CompositionRevision`s that say how to compose it, and the `Function`s a pipeline calls.
//!
//! Each type deserializes from what a user applies; its `validate` (or the reader beside it)
//! turns bad input into an [`ApiError`] naming the object and the field.

mod composition;
mod error;
mod function;
mod open_crd;
mod xrd;

#[cfg(test)]
pub(crate) use xrd::xbucket_json;

pub use composition::{
    Composition, CompositionMode, CompositionRevision, CompositionRevisionSpec,
    CompositionRevisionStatus, CompositionSpec, Condition, FunctionReference,
    LABEL_COMPOSITION_NAME, PipelineStep, TYPE_VALID_PIPELINE, TypeReference,
};
pub use error::ApiError;
pub use function::{
    ANNOTATION_RUNTIME, ANNOTATION_RUNTIME_TARGET, DEFAULT_DEVELOPMENT_TARGET, Endpoint, Function,
    FunctionSpec,
};
pub use open_crd::{crossplane_crds, open_crd};
pub use xrd::{
    CompositeResourceDefinition, CompositeResourceDefinitionSpec,
    CompositeResourceDefinitionVersion, CompositeResourceValidation, CompositionRef, Scope,
    SpecMetadata, UpdatePolicy, VersionSubresources,
};

/// The API group of XRDs and Compositions.
pub const APIEXTENSIONS_GROUP: &str = "apiextensions.crossplane.io";
/// The API group of Functions.
pub const PKG_GROUP: &str = "pkg.crossplane.io";
