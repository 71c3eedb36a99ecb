"""A composite for crossplane-function-pythonic, for composer's tests.

function-pythonic loads it by name (``queue_composite.QueueComposite``, with this directory on
``--python-path``). It composes one SQS queue in the XR's region, labels every other desired
resource with the number of resources an earlier step listed in the context, and asks to be
called again in 25 s.
"""

from crossplane.pythonic import BaseComposite

COMPOSED_KEY = "composer.loadtest.dev/composed"


class QueueComposite(BaseComposite):
    """One queue per XR, in the XR's region."""

    def compose(self):
        queue = self.resources.queue("Queue", "sqs.aws.upbound.io/v1beta1")
        queue.spec.forProvider.region = self.spec.region
        earlier = self.context[COMPOSED_KEY]
        self.context["example.org/queues"] = [f"after {len(earlier)} resources"]
        self.ttl = 25
