//! `Function`, `pkg.crossplane.io/v1`: a composition function, and where it is served.
//!
//! Core installs a Function from its package and calls it over mTLS at its Service. Here no
//! package manager runs, so a Function says where it is served with the annotations
//! `crossplane render` reads (crossplane/cli's `cmd/crossplane/render/runtime.go`):
//! `render.crossplane.io/runtime: Development` with
//! `render.crossplane.io/runtime-development-target: host:port` calls it over plaintext gRPC
//! (the target defaults to `localhost:9443`, as render's does), and
//! `render.crossplane.io/runtime: InProcess` calls the runner registered under the
//! Function's name in process. render's default runtime, Docker, is refused: nothing here
//! starts containers.

use std::net::{Ipv4Addr, SocketAddr};

use kube::CustomResource;
use serde::{Deserialize, Serialize};

use super::ApiError;

/// The annotation naming how a Function runs.
pub const ANNOTATION_RUNTIME: &str = "render.crossplane.io/runtime";
/// The annotation naming a Development function's address.
pub const ANNOTATION_RUNTIME_TARGET: &str = "render.crossplane.io/runtime-development-target";
/// Where a Development function without a target is called.
pub const DEFAULT_DEVELOPMENT_TARGET: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 9443);

/// The specification of a Function (the fields that matter without a package manager).
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "pkg.crossplane.io",
    version = "v1",
    kind = "Function",
    plural = "functions",
    schema = "disabled"
)]
pub struct FunctionSpec {
    /// The package the function comes from (kept, not pulled).
    #[serde(default)]
    pub package: String,
}

/// Where the reconciler calls a Function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// Plaintext gRPC at an address.
    Development(SocketAddr),
    /// The runner registered in process under the Function's name.
    InProcess,
}

impl Function {
    /// Where this Function is served, from its annotations.
    ///
    /// # Errors
    /// [`ApiError::Runtime`] for a runtime other than Development or InProcess (or none,
    /// which render takes as Docker), [`ApiError::Target`] for a target that is not
    /// `ip:port` or `localhost:port`.
    pub fn endpoint(&self) -> Result<Endpoint, ApiError> {
        let name = self.metadata.name.clone().unwrap_or_default();
        let annotation = |key: &str| {
            self.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .map(String::as_str)
        };
        match annotation(ANNOTATION_RUNTIME).unwrap_or("Docker") {
            "InProcess" => Ok(Endpoint::InProcess),
            "Development" => match annotation(ANNOTATION_RUNTIME_TARGET) {
                None => Ok(Endpoint::Development(DEFAULT_DEVELOPMENT_TARGET)),
                Some(target) => {
                    let resolved = match target.strip_prefix("localhost:") {
                        Some(port) => format!("127.0.0.1:{port}"),
                        None => target.to_owned(),
                    };
                    resolved
                        .parse()
                        .map(Endpoint::Development)
                        .map_err(|source| ApiError::Target {
                            function: name,
                            target: target.to_owned(),
                            source,
                        })
                }
            },
            other => Err(ApiError::Runtime {
                function: name,
                runtime: other.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn function(annotations: serde_json::Value) -> Function {
        serde_json::from_value(json!({
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Function",
            "metadata": {"name": "resources", "annotations": annotations},
            "spec": {"package": "xpkg.crossplane.io/example/function:v1"},
        }))
        .unwrap()
    }

    #[test]
    fn a_development_function_is_called_at_its_target_or_render_s_default() {
        let at = function(
            json!({ANNOTATION_RUNTIME: "Development", ANNOTATION_RUNTIME_TARGET: "127.0.0.1:9555"}),
        );
        assert_eq!(
            at.endpoint().unwrap(),
            Endpoint::Development("127.0.0.1:9555".parse().unwrap())
        );
        let localhost = function(
            json!({ANNOTATION_RUNTIME: "Development", ANNOTATION_RUNTIME_TARGET: "localhost:9556"}),
        );
        assert_eq!(
            localhost.endpoint().unwrap(),
            Endpoint::Development("127.0.0.1:9556".parse().unwrap())
        );
        let default = function(json!({ANNOTATION_RUNTIME: "Development"}));
        assert_eq!(
            default.endpoint().unwrap(),
            Endpoint::Development(DEFAULT_DEVELOPMENT_TARGET)
        );
    }

    #[test]
    fn an_in_process_function_is_called_by_name() {
        let f = function(json!({ANNOTATION_RUNTIME: "InProcess"}));
        assert_eq!(f.endpoint().unwrap(), Endpoint::InProcess);
    }

    #[test]
    fn a_function_without_a_runtime_is_docker_and_refused() {
        let error = function(json!({})).endpoint().unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"function "resources": runtime "Docker" is not supported (Development or InProcess)"#
        );
    }

    #[test]
    fn a_target_that_is_not_an_address_is_refused() {
        let f = function(
            json!({ANNOTATION_RUNTIME: "Development", ANNOTATION_RUNTIME_TARGET: "functions.svc:9443"}),
        );
        assert!(matches!(f.endpoint(), Err(ApiError::Target { .. })));
    }
}
