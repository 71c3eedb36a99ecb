"""Encodes one RunFunctionRequest and one RunFunctionResponse that set every field, with the
protobuf code crossplane-function-sdk-python generated from run_function.proto.

Composer's tests decode the bytes with composer's hand-written messages and compare, field by
field, then encode composer's values and compare bytes, so each side checks the other. Output:
three lines, deterministic encodings in hex: the request, the response, and a request whose
one map entry holds an empty message (which protobuf writes and prost leaves out).

    python3 encode_messages.py
"""

from google.protobuf import duration_pb2, struct_pb2
from crossplane.function.proto.v1 import run_function_pb2 as fnv1


def struct(d: dict) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(d)
    return s


def resource(d: dict, ready: int) -> fnv1.Resource:
    return fnv1.Resource(resource=struct(d), connection_details={"password": b"\x00\xff"}, ready=ready)


def request() -> fnv1.RunFunctionRequest:
    return fnv1.RunFunctionRequest(
        meta=fnv1.RequestMeta(
            tag="tag",
            capabilities=[
                fnv1.CAPABILITY_CAPABILITIES,
                fnv1.CAPABILITY_REQUIRED_RESOURCES,
                fnv1.CAPABILITY_CREDENTIALS,
                fnv1.CAPABILITY_CONDITIONS,
                fnv1.CAPABILITY_REQUIRED_SCHEMAS,
            ],
        ),
        observed=fnv1.State(
            composite=resource({"kind": "XR", "spec": {"n": 3, "on": True, "list": ["a", None]}}, fnv1.READY_UNSPECIFIED),
            resources={"a": resource({"kind": "A"}, fnv1.READY_TRUE)},
        ),
        desired=fnv1.State(resources={"b": resource({"kind": "B"}, fnv1.READY_FALSE)}),
        input=struct({"apiVersion": "x/v1", "ratio": 0.5}),
        context=struct({"k": "v"}),
        extra_resources={"old": fnv1.Resources(items=[resource({"kind": "O"}, fnv1.READY_TRUE)])},
        credentials={"c": fnv1.Credentials(credential_data=fnv1.CredentialData(data={"key": b"secret"}))},
        required_resources={"r": fnv1.Resources(items=[resource({"kind": "R"}, fnv1.READY_FALSE)])},
        required_schemas={"s": fnv1.Schema(openapi_v3=struct({"type": "object"}))},
    )


def response() -> fnv1.RunFunctionResponse:
    return fnv1.RunFunctionResponse(
        meta=fnv1.ResponseMeta(tag="tag", ttl=duration_pb2.Duration(seconds=90, nanos=5)),
        desired=fnv1.State(resources={"b": resource({"kind": "B"}, fnv1.READY_TRUE)}),
        results=[
            fnv1.Result(severity=fnv1.SEVERITY_FATAL, message="m", reason="Why", target=fnv1.TARGET_COMPOSITE_AND_CLAIM),
            fnv1.Result(severity=fnv1.SEVERITY_WARNING, message="w"),
            fnv1.Result(severity=fnv1.SEVERITY_NORMAL, message="n", target=fnv1.TARGET_COMPOSITE),
        ],
        context=struct({"k": "v"}),
        requirements=fnv1.Requirements(
            extra_resources={"e": fnv1.ResourceSelector(api_version="v1", kind="ConfigMap", match_name="cm")},
            resources={
                "l": fnv1.ResourceSelector(
                    api_version="v1", kind="Secret", match_labels=fnv1.MatchLabels(labels={"app": "x"}), namespace="ns"
                )
            },
            schemas={"s": fnv1.SchemaSelector(api_version="example.org/v1", kind="XR")},
        ),
        conditions=[
            fnv1.Condition(type="DatabaseReady", status=fnv1.STATUS_CONDITION_FALSE, reason="Creating", message="wait", target=fnv1.TARGET_COMPOSITE),
            fnv1.Condition(type="Other", status=fnv1.STATUS_CONDITION_UNKNOWN, reason="R"),
        ],
        output=struct({"out": [1, 2]}),
    )


if __name__ == "__main__":
    print(request().SerializeToString(deterministic=True).hex())
    print(response().SerializeToString(deterministic=True).hex())
    empty = fnv1.RunFunctionRequest(required_schemas={"none": fnv1.Schema()})
    print(empty.SerializeToString(deterministic=True).hex())
