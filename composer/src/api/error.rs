//! Why an XRD, a Composition or a Function cannot be used.

/// An object the reconciler cannot use, with the object's name and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// An XRD version's `openAPIV3Schema` is not a schema (core: `cannot parse validation
    /// schema`).
    #[error("XRD {xrd:?} version {version:?}: cannot parse validation schema")]
    SchemaParse {
        /// The XRD.
        xrd: String,
        /// The version whose schema is bad.
        version: String,
        /// What the decoder said.
        #[source]
        source: serde_json::Error,
    },
    /// An XRD version has no schema (core: `custom resource validation cannot be nil`).
    #[error("XRD {xrd:?} version {version:?}: custom resource validation cannot be nil")]
    SchemaMissing {
        /// The XRD.
        xrd: String,
        /// The version without a schema.
        version: String,
    },
    /// An XRD has no version marked `referenceable`, or more than one.
    #[error("XRD {xrd:?}: exactly one version must be referenceable, found {found}")]
    Referenceable {
        /// The XRD.
        xrd: String,
        /// How many are.
        found: usize,
    },
    /// An XRD whose name is not `<plural>.<group>`: the XR CRD takes the XRD's name, and the
    /// API server refuses a CRD named otherwise.
    #[error("XRD {xrd:?}: the name must be spec.names.plural+\".\"+spec.group, {expected:?}")]
    Name {
        /// The XRD.
        xrd: String,
        /// `<plural>.<group>`.
        expected: String,
    },
    /// A Composition whose mode is not `Pipeline`.
    #[error("composition {composition:?}: mode {mode:?} is not supported, only Pipeline")]
    Mode {
        /// The Composition.
        composition: String,
        /// Its mode.
        mode: String,
    },
    /// A Composition without steps.
    #[error("composition {composition:?}: the pipeline has no steps")]
    EmptyPipeline {
        /// The Composition.
        composition: String,
    },
    /// Two steps share a name.
    #[error("composition {composition:?}: step {step:?} appears more than once")]
    DuplicateStep {
        /// The Composition.
        composition: String,
        /// The repeated step name.
        step: String,
    },
    /// A step names a function that does not exist.
    #[error(
        "composition {composition:?}: step {step:?} calls function {function:?}, which does not exist"
    )]
    MissingFunction {
        /// The Composition.
        composition: String,
        /// The step.
        step: String,
        /// The function it names.
        function: String,
    },
    /// A Function whose runtime annotation the reconciler cannot serve.
    #[error(
        "function {function:?}: runtime {runtime:?} is not supported (Development or InProcess)"
    )]
    Runtime {
        /// The Function.
        function: String,
        /// The annotation's value.
        runtime: String,
    },
    /// A Function's development target is not `host:port`.
    #[error("function {function:?}: target {target:?} is not an address")]
    Target {
        /// The Function.
        function: String,
        /// The annotation's value.
        target: String,
        /// Why it does not parse.
        #[source]
        source: std::net::AddrParseError,
    },
}
