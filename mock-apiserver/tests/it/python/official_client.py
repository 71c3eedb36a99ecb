"""The official Kubernetes Python client against mock-apiserver: CRD schemas, the garbage
collector and Deployment rollouts. Usage: official_client.py KUBECONFIG"""

import json
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(sys.argv[1])
custom = client.CustomObjectsApi()
core = client.CoreV1Api()
apps = client.AppsV1Api()
GROUP, VERSION, PLURAL = "example.org", "v1alpha1", "buckets"


def bucket(name, spec):
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Bucket",
            "metadata": {"name": name}, "spec": spec}


def expect_error(code, call):
    try:
        call()
    except ApiException as e:
        assert e.status == code, (e.status, e.body)
        return json.loads(e.body)
    raise AssertionError(f"expected {code}")


# Unknown fields: Strict refuses, the default warns and prunes.
status = expect_error(400, lambda: custom.create_namespaced_custom_object(
    GROUP, VERSION, "default", PLURAL, bucket("b1", {"region": "eu", "colour": "red"}),
    field_validation="Strict"))
assert 'strict decoding error: unknown field "spec.colour"' in status["message"], status
created = custom.create_namespaced_custom_object(
    GROUP, VERSION, "default", PLURAL, bucket("b1", {"region": "eu", "colour": "red"}))
assert "colour" not in created["spec"], created

# Validation: 422 with one cause per field.
status = expect_error(422, lambda: custom.create_namespaced_custom_object(
    GROUP, VERSION, "default", PLURAL, bucket("b2", {"size": "big"})))
causes = {c["field"]: c for c in status["details"]["causes"]}
assert causes["spec.region"]["reason"] == "FieldValueRequired", causes
assert causes["spec.size"]["reason"] == "FieldValueTypeInvalid", causes
print("schema ok")

# The garbage collector: a connection Secret owned by a ConfigMap goes with it.
owner = core.create_namespaced_config_map("default", client.V1ConfigMap(
    metadata=client.V1ObjectMeta(name="owner")))
core.create_namespaced_secret("default", client.V1Secret(
    metadata=client.V1ObjectMeta(name="connection", owner_references=[client.V1OwnerReference(
        api_version="v1", kind="ConfigMap", name="owner", uid=owner.metadata.uid,
        controller=True, block_owner_deletion=True)]),
    string_data={"password": "s3cr3t"}))
core.delete_namespaced_config_map("owner", "default", propagation_policy="Foreground")
expect_error(404, lambda: core.read_namespaced_secret("connection", "default"))
expect_error(404, lambda: core.read_namespaced_config_map("owner", "default"))
print("gc ok")

# Deployments roll out.
apps.create_namespaced_deployment("default", client.V1Deployment(
    metadata=client.V1ObjectMeta(name="web"),
    spec=client.V1DeploymentSpec(
        replicas=2, selector=client.V1LabelSelector(match_labels={"app": "web"}),
        template=client.V1PodTemplateSpec(
            metadata=client.V1ObjectMeta(labels={"app": "web"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="nginx")])))))
deadline = time.monotonic() + 30
while True:
    status = apps.read_namespaced_deployment_status("web", "default").status
    if status.available_replicas == 2 and status.updated_replicas == 2:
        break
    assert time.monotonic() < deadline, status
    time.sleep(0.1)
print("rollout ok")
