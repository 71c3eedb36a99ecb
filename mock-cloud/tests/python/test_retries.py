"""botocore's retry machinery against mock-cloud's throttles: the standard retry mode
classifies each service's throttle as a throttle (its retry quota charges a throttle's
cost, 5, not the 14 of another error), and the adaptive mode paces the client after a
throttle.

Each service's throttle is one row of THROTTLES: a service adding its throttle adds a row.
"""

import time
import unittest

import botocore.exceptions
from botocore.retries.standard import RetryEventAdapter, ThrottlingErrorDetector

import support

# service -> (its quota class to squeeze, a call in that class, the throttle's code and
# HTTP status).
THROTTLES = {
    "s3": ("read", lambda c: c.list_buckets(), "SlowDown", 503),
    "sts": ("auth", lambda c: c.get_caller_identity(), "Throttling", 400),
    "dynamodb": ("read", lambda c: c.list_tables(), "ThrottlingException", 400),
    "ec2": ("non-mutating", lambda c: c.describe_vpcs(), "RequestLimitExceeded", 503),
}

THROTTLE_COST = 5
OTHER_ERROR_COST = 14


def setUpModule():
    support.start()


def tearDownModule():
    support.stop()


def one_call_then_throttled(service, quota_class):
    """A cloud where `service`'s class admits one call and then refills once an hour."""
    support.SERVER.put_config(
        {"quotas": {"services": {service: {"classes": {quota_class: {"burst": 1, "per_second": 0.0003}}}}}}
    )


class Observed:
    """What botocore's retry machinery made of one call: whether its throttling
    detector called each failed attempt a throttle, and what the retry quota charged."""

    def __init__(self, client, service_id):
        self.throttle = []
        self.charged = None
        detector = ThrottlingErrorDetector(RetryEventAdapter())

        def needs_retry(**kwargs):
            if kwargs.get("response") is not None:
                http, parsed = kwargs["response"]
                if http.status_code >= 400:
                    self.throttle.append(detector.is_throttling_error(**kwargs))

        def after_call(context, **kwargs):
            self.charged = context.get("retry_quota_capacity")

        # Registered before the client's own retry handler runs (more specific name).
        client.meta.events.register_first(f"needs-retry.{service_id}", needs_retry)
        client.meta.events.register(f"after-call.{service_id}", after_call)


class StandardMode(unittest.TestCase):
    def test_every_services_throttle_is_retried_and_charged_as_a_throttle(self):
        for service, (quota_class, call, code, status) in THROTTLES.items():
            with self.subTest(service=service):
                one_call_then_throttled(service, quota_class)
                client = support.SERVER.client(
                    service, retries={"mode": "standard", "total_max_attempts": 2}
                )
                observed = Observed(client, client.meta.service_model.service_id.hyphenize())
                call(client)
                with self.assertRaises(botocore.exceptions.ClientError) as raised:
                    call(client)
                response = raised.exception.response
                self.assertEqual(response["Error"]["Code"], code)
                self.assertEqual(response["ResponseMetadata"]["HTTPStatusCode"], status)
                self.assertEqual(response["ResponseMetadata"]["RetryAttempts"], 1)
                self.assertEqual(observed.throttle, [True, True])
                self.assertEqual(observed.charged, THROTTLE_COST)
                calls = [c for c in support.SERVER.calls() if c["service"] == service]
                self.assertEqual([c["throttled"] for c in calls], [False, True, True])

    def test_another_error_is_retried_at_another_errors_cost(self):
        support.SERVER.put_config(
            {"faults": {"services": {"dynamodb": {"ListTables": {"errors": {"rate": 1.0, "status": 500}}}}}}
        )
        client = support.SERVER.client("dynamodb", retries={"mode": "standard", "total_max_attempts": 2})
        observed = Observed(client, "dynamodb")
        with self.assertRaises(botocore.exceptions.ClientError) as raised:
            client.list_tables()
        self.assertEqual(raised.exception.response["Error"]["Code"], "InternalServerError")
        self.assertEqual(observed.throttle, [False, False])
        self.assertEqual(observed.charged, OTHER_ERROR_COST)


class AdaptiveMode(unittest.TestCase):
    def test_a_throttle_slows_the_client_to_about_the_servers_rate(self):
        server_rate = 5
        support.SERVER.put_config(
            {"quotas": {"services": {"dynamodb": {"classes": {"read": {"burst": 5, "per_second": server_rate}}}}}}
        )
        client = support.SERVER.client("dynamodb", retries={"mode": "adaptive", "total_max_attempts": 10})
        sends = []
        client.meta.events.register("before-send", lambda **kw: sends.append(time.monotonic()))
        # Bounded: at most 60 calls, 8 s to the first throttle, and 1.5 s after it (a late
        # throttle on a busy machine still gets its 1.5 s of paced calls).
        start = time.monotonic()
        first_throttle = None
        for _ in range(60):
            retried = client.list_tables()["ResponseMetadata"]["RetryAttempts"]
            now = time.monotonic()
            if first_throttle is None and retried:
                first_throttle = now
            if (first_throttle is None and now - start > 8) or (first_throttle and now - first_throttle > 1.5):
                break
        self.assertIsNotNone(first_throttle, "the burst of 5 was never exceeded")
        calls = [c for c in support.SERVER.calls() if c["service"] == "dynamodb"]
        self.assertEqual(len(calls), len(sends), "every attempt is journalled")
        k = next(i for i, c in enumerate(calls) if c["throttled"])
        before, after = sends[: k + 1], sends[k + 1 :]
        self.assertGreaterEqual(len(after), 2, f"{len(sends)} attempts, the first throttled at {k + 1}")
        rate_before = (len(before) - 1) / (before[-1] - before[0])
        rate_after = (len(after) - 1) / (after[-1] - after[0])
        message = f"{rate_before:.1f}/s before the first throttle, {rate_after:.1f}/s after"
        # Unpaced until the throttle; then paced near the server's rate.
        self.assertGreater(rate_before, 3 * rate_after, message)
        self.assertLess(rate_after, 2 * server_rate, message)
        throttled_after = sum(c["throttled"] for c in calls[k + 1 :])
        self.assertLessEqual(throttled_after, 3, message)


if __name__ == "__main__":
    unittest.main()
