"""A mock-cloud binary on loopback, and boto3 clients and AWS CLI runs pointed at it.

Each test module starts its own server (`start()` in `setUpModule`, `stop()` in
`tearDownModule`); a test that needs quotas or faults replaces the served cloud with
`put_config`, which also clears its state and journal.

The binary is `$MOCK_CLOUD_BIN`, else `target/debug/mock-cloud` of the workspace (built by
`cargo test` or `cargo build -p mock-cloud`).
"""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import boto3
from botocore.config import Config

WORKSPACE = Path(__file__).resolve().parents[3]
ACCESS_KEY = "default"
SECRET_KEY = "default"
REGION = "us-east-1"
ACCOUNT_ID = "000000000000"


class MockCloud:
    """One mock-cloud process, listening on a free loopback port."""

    def __init__(self):
        binary = os.environ.get("MOCK_CLOUD_BIN") or str(WORKSPACE / "target/debug/mock-cloud")
        if not Path(binary).is_file():
            raise RuntimeError(f"{binary} is missing: run `cargo build -p mock-cloud` first")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
            text=True,
        )
        line = self.process.stdout.readline()
        prefix = "mock-cloud listening on "
        if not line.startswith(prefix):
            self.process.kill()
            raise RuntimeError(f"mock-cloud did not start: {line!r}")
        self.url = line[len(prefix):].strip()

    def stop(self):
        self.process.stdout.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _request(self, method, path, body=None):
        request = urllib.request.Request(self.url + path, data=body, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.read()

    def put_config(self, document):
        """Replaces the served cloud by one built from `document` (a dict, as the
        `--config` file's YAML): fresh state, journal and clock."""
        self._request("PUT", "/admin/v1/config", json.dumps(document).encode())

    def calls(self):
        """Every journalled call, oldest first, as dicts (`service`, `operation`, `status`,
        `throttled`, …)."""
        text = self._request("GET", "/admin/v1/calls?since=0").decode()
        return [json.loads(line) for line in text.splitlines() if line]

    def client(self, service, **config):
        """A boto3 client of the default account, path-style for S3; `config` goes to
        botocore's `Config` (such as `retries={"mode": "standard"}`)."""
        config.setdefault("s3", {"addressing_style": "path"})
        config.setdefault("retries", {"mode": "standard", "total_max_attempts": 1})
        return boto3.client(
            service,
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            config=Config(**config),
        )

    def aws(self, *args):
        """Runs the AWS CLI (`python -m awscli`) against the cloud; returns its parsed JSON
        output (None when it prints nothing). Raises CalledProcessError on failure, with
        the CLI's stderr."""
        env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_MAX_ATTEMPTS": "1",
        }
        env.pop("AWS_PROFILE", None)
        done = subprocess.run(
            [sys.executable, "-m", "awscli", "--endpoint-url", self.url, "--output", "json", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return json.loads(done.stdout) if done.stdout.strip() else None


SERVER = None


def start():
    """Starts the module's server (call from `setUpModule`)."""
    global SERVER
    SERVER = MockCloud()
    return SERVER


def stop():
    """Stops it (call from `tearDownModule`)."""
    if SERVER is not None:
        SERVER.stop()
