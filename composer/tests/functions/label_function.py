"""A composition function written with crossplane-function-sdk-python, for composer's tests.

It labels every desired composed resource with the XR's ``spec.region``, lists the names it
labelled in the context under ``example.org/labelled`` (after the names an earlier step
listed under ``composer.loadtest.dev/composed``, if any), adds a NORMAL result and answers
with the TTL given on the command line. An XR without ``spec.region`` gets a FATAL result.

    python3 label_function.py --address 127.0.0.1:9443 --ttl-seconds 42

It serves insecure (plaintext HTTP/2), as ``crossplane render``'s Development runtime expects.
"""

import argparse
import datetime

from crossplane.function import resource, response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1

LABEL = "example.org/region"
COMPOSED_KEY = "composer.loadtest.dev/composed"
LABELLED_KEY = "example.org/labelled"


class LabelFunction(grpcv1.FunctionRunnerServiceServicer):
    """Labels desired composed resources with the XR's region."""

    def __init__(self, ttl: datetime.timedelta):
        self.ttl = ttl

    async def RunFunction(  # noqa: N802 (gRPC's name)
        self, req: fnv1.RunFunctionRequest, _context
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(req, ttl=self.ttl)
        xr = resource.struct_to_dict(req.observed.composite.resource)
        region = xr.get("spec", {}).get("region")
        if not isinstance(region, str):
            response.fatal(rsp, "the XR has no spec.region")
            return rsp
        labelled = []
        for name in sorted(req.desired.resources):
            composed = resource.struct_to_dict(req.desired.resources[name].resource)
            composed.setdefault("metadata", {}).setdefault("labels", {})[LABEL] = region
            resource.update(rsp.desired.resources[name], composed)
            labelled.append(name)
        earlier = list(req.context[COMPOSED_KEY]) if COMPOSED_KEY in req.context else []
        rsp.context[LABELLED_KEY] = [*earlier, *labelled]
        response.normal(rsp, f"labelled {len(labelled)} resources")
        return rsp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="host:port to listen on")
    parser.add_argument("--ttl-seconds", type=float, default=60.0)
    args = parser.parse_args()
    ttl = datetime.timedelta(seconds=args.ttl_seconds)
    runtime.serve(LabelFunction(ttl), args.address, creds=None, insecure=True)


if __name__ == "__main__":
    main()
