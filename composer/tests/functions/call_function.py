"""Calls a composition function with grpcio and the stubs crossplane-function-sdk-python ships.

Composer's tests point it at composer's own function server: the built-in function must answer
a client nobody here wrote. It sends one v1 RunFunctionRequest (an XR with spec.region and the
built-in function's input for two buckets) and prints the response as JSON, or the gRPC
status code and details on failure (exit code 1).

    python3 call_function.py 127.0.0.1:9443
"""

import json
import sys

import grpc
from google.protobuf import json_format
from crossplane.function import resource
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

INPUT = {
    "apiVersion": "composer.loadtest.dev/v1alpha1",
    "kind": "Resources",
    "ttl": "45s",
    "resources": [
        {
            "name": "bucket",
            "count": 2,
            "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket"},
            "patches": [
                {"fromFieldPath": "spec.region", "toFieldPath": "spec.forProvider.region"}
            ],
        }
    ],
}


def main() -> int:
    address = sys.argv[1]
    req = fnv1.RunFunctionRequest(
        meta=fnv1.RequestMeta(tag="from-python"),
        input=resource.dict_to_struct(INPUT),
    )
    req.observed.composite.resource.update(
        {"apiVersion": "example.org/v1", "kind": "XBucket", "spec": {"region": "us-east-2"}}
    )
    with grpc.insecure_channel(address) as channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        try:
            rsp = stub.RunFunction(req, timeout=30, wait_for_ready=True)
        except grpc.RpcError as e:
            print(json.dumps({"code": e.code().name, "details": e.details()}))
            return 1
    print(json_format.MessageToJson(rsp, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
