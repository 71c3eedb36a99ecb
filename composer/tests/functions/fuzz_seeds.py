"""Writes the RunFunctionResponse seeds of the fuzz target `composer_inputs` into
composer/tests/fuzz-seeds/, encoded by the protobuf code crossplane-function-sdk-python
generated from run_function.proto (an encoder independent of composer's).

    cd composer/tests/functions && python3 fuzz_seeds.py ../fuzz-seeds
"""

import sys
from pathlib import Path

from google.protobuf import duration_pb2, struct_pb2
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from encode_messages import response as every_field


def struct(d: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(d)
    return s


def composed(name: str, region: str, ready: int, **metadata) -> fnv1.Resource:
    body = {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket",
            "metadata": {"name": name, **metadata}, "spec": {"forProvider": {"region": region}}}
    return fnv1.Resource(resource=struct(body), ready=ready)


SEEDS = {
    # what the built-in function answers: two buckets, a TTL, the context passed on
    "response-resources.pb": fnv1.RunFunctionResponse(
        meta=fnv1.ResponseMeta(tag="t", ttl=duration_pb2.Duration(seconds=30)),
        desired=fnv1.State(
            composite=fnv1.Resource(resource=struct({"status": {"address": "a.example.org"}})),
            resources={"bucket-0": composed("", "eu-west-1", fnv1.READY_UNSPECIFIED),
                       "bucket-1": composed("b1", "eu-west-1", fnv1.READY_TRUE,
                                            labels={"team": "a"}, annotations={"note": "x"})},
        ),
        context=struct({"apiextensions.crossplane.io/environment": {"region": "eu-west-1"}}),
    ),
    # another controller owns the resource; a sub-second TTL
    "response-other-controller.pb": fnv1.RunFunctionResponse(
        meta=fnv1.ResponseMeta(ttl=duration_pb2.Duration(seconds=0, nanos=500_000_000)),
        desired=fnv1.State(resources={"x": composed(
            "x", "us-east-1", fnv1.READY_FALSE,
            ownerReferences=[{"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u", "controller": True}])}),
    ),
    # metadata that is not an object; a negative TTL
    "response-bad-metadata.pb": fnv1.RunFunctionResponse(
        meta=fnv1.ResponseMeta(ttl=duration_pb2.Duration(seconds=-5)),
        desired=fnv1.State(resources={"": fnv1.Resource(resource=struct({"metadata": ["a", 1.5, None]}))}),
        results=[fnv1.Result(severity=fnv1.SEVERITY_WARNING, message="odd")],
    ),
    # a FATAL result among others, every field set
    "response-every-field.pb": every_field(),
}

if __name__ == "__main__":
    out = Path(sys.argv[1])
    for name, message in SEEDS.items():
        (out / name).write_bytes(message.SerializeToString(deterministic=True))
