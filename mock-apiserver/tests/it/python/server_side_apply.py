"""The official Kubernetes Python client's server-side apply against mock-apiserver: two
field managers applying one field conflict (409, the apiserver's message and causes) until
one forces, and managedFields name the owners. Through the DynamicClient's
server_side_apply (application/apply-patch+yaml), on a custom resource and a ConfigMap.
Usage: server_side_apply.py KUBECONFIG"""

import json
import sys

from kubernetes import config, dynamic
from kubernetes.client.rest import ApiException

dyn = dynamic.DynamicClient(config.new_client_from_config(sys.argv[1]))
buckets = dyn.resources.get(api_version="example.org/v1alpha1", kind="Bucket")
config_maps = dyn.resources.get(api_version="v1", kind="ConfigMap")


def owners(obj):
    """(manager, operation, subresource, fieldsV1) of each managedFields entry."""
    return [(e["manager"], e["operation"], e.get("subresource", ""), e["fieldsV1"])
            for e in obj.to_dict()["metadata"]["managedFields"]]


def apply(resource, body, manager, force=None):
    return dyn.server_side_apply(resource, body=body, namespace="default",
                                 field_manager=manager, force_conflicts=force)


def refused(resource, body, manager):
    try:
        apply(resource, body, manager)
    except ApiException as e:
        assert e.status == 409, (e.status, e.body)
        return json.loads(e.body)
    raise AssertionError(f"{manager}'s apply was not refused")


def bucket(spec):
    return {"apiVersion": "example.org/v1alpha1", "kind": "Bucket",
            "metadata": {"name": "applied"}, "spec": spec}


# A custom resource: manager-a applies region and size.
first = apply(buckets, bucket({"region": "eu", "size": 1}), "manager-a")
assert first.spec.region == "eu", first
assert owners(first) == [("manager-a", "Apply", "", {"f:spec": {"f:region": {}, "f:size": {}}})], owners(first)

# manager-b applies region with another value: 409, nothing written.
status = refused(buckets, bucket({"region": "us"}), "manager-b")
assert status["kind"] == "Status" and status["reason"] == "Conflict", status
assert status["message"] == 'Apply failed with 1 conflict: conflict with "manager-a": .spec.region', status
assert status["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                        "message": 'conflict with "manager-a"',
                                        "field": ".spec.region"}], status
unchanged = buckets.get(name="applied", namespace="default")
assert unchanged.spec.region == "eu", unchanged
assert unchanged.metadata.resourceVersion == first.metadata.resourceVersion, unchanged

# Forced, manager-b takes region; manager-a keeps size.
forced = apply(buckets, bucket({"region": "us"}), "manager-b", force=True)
assert forced.spec.region == "us" and forced.spec.size == 1, forced
assert sorted(owners(forced)) == [
    ("manager-a", "Apply", "", {"f:spec": {"f:size": {}}}),
    ("manager-b", "Apply", "", {"f:spec": {"f:region": {}}}),
], owners(forced)
print("custom resource apply ok")

# A ConfigMap: the same through a built-in kind's data map.
cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"},
      "data": {"colour": "red", "shared": "a"}}
apply(config_maps, cm, "manager-a")
cm_b = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"},
        "data": {"shared": "b"}}
status = refused(config_maps, cm_b, "manager-b")
assert status["message"] == 'Apply failed with 1 conflict: conflict with "manager-a": .data.shared', status
forced = apply(config_maps, cm_b, "manager-b", force=True)
assert forced.data.to_dict() == {"colour": "red", "shared": "b"}, forced
assert sorted(owners(forced)) == [
    ("manager-a", "Apply", "", {"f:data": {"f:colour": {}}}),
    ("manager-b", "Apply", "", {"f:data": {"f:shared": {}}}),
], owners(forced)
print("config map apply ok")
