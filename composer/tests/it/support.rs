//! Requests, inputs and a raw gRPC server shared by the tests.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use composer::function::builtin::{API_VERSION, KIND};
use composer::function::proto::{Resource, RunFunctionRequest, State};
use composer::function::value::{from_struct, to_struct};
use composer::function::{Direction, FunctionError};
use serde_json::{Value, json};

pub fn object(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().expect("an object").clone()
}

pub fn resource(v: Value) -> Resource {
    Resource {
        resource: Some(to_struct(&object(v))),
        ..Default::default()
    }
}

pub fn json_of(r: &Resource) -> Value {
    Value::Object(from_struct(r.resource.as_ref().expect("a resource")))
}

/// The built-in function's input: `count` buckets patched with the XR's region.
pub fn builtin_input(count: u32, ttl: &str) -> composer::function::proto::Struct {
    to_struct(&object(json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "ttl": ttl,
        "resources": [{
            "name": "bucket",
            "count": count,
            "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket"},
            "patches": [{"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}],
        }],
    })))
}

/// An XR with a region, and `bucket-0` observed Ready.
pub fn observed() -> State {
    State {
        composite: Some(resource(json!({
            "apiVersion": "example.org/v1",
            "kind": "XBucket",
            "metadata": {"name": "xr"},
            "spec": {"region": "eu-west-1"},
        }))),
        resources: BTreeMap::from([(
            "bucket-0".to_owned(),
            resource(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
        )]),
    }
}

pub fn request(count: u32) -> RunFunctionRequest {
    RunFunctionRequest {
        observed: Some(observed()),
        input: Some(builtin_input(count, "30s")),
        ..Default::default()
    }
}

/// A free loopback port, for a process that binds it itself.
pub fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    listener.local_addr().expect("local address")
}

/// The direction of a [`FunctionError::MessageTooLarge`]; any other error panics.
pub fn too_large_direction(error: &FunctionError) -> Direction {
    let FunctionError::MessageTooLarge { direction, .. } = error else {
        panic!("{error:?}")
    };
    *direction
}
