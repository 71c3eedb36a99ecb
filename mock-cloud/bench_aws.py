"""Helpers of bench-aws.sh, run with the Python of a venv that has moto[server] (and so
boto3).

  bench_aws.py moto              serve moto's ThreadedMotoServer on a free loopback port,
                                 print "moto http://127.0.0.1:PORT", serve until killed
  bench_aws.py presign URL...    create bucket `bench` at each endpoint with boto3 (access
                                 key `default`, secret `default`, us-east-1, path style) and
                                 print a presigned HeadBucket URL for each, one a line
"""

import socket
import sys
import time


def serve_moto() -> None:
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    print(f"moto http://127.0.0.1:{port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        server.stop()


def presign(endpoints: list[str]) -> None:
    import boto3
    from botocore.config import Config

    for endpoint in endpoints:
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="default",
            aws_secret_access_key="default",
            config=Config(
                signature_version="s3v4",
                s3={"addressing_style": "path"},
                retries={"mode": "standard"},
            ),
        )
        client.create_bucket(Bucket="bench")
        client.head_bucket(Bucket="bench")
        url = client.generate_presigned_url(
            "head_bucket", Params={"Bucket": "bench"}, ExpiresIn=3600
        )
        print(url, flush=True)


def main() -> None:
    if sys.argv[1:2] == ["moto"]:
        serve_moto()
    elif sys.argv[1:2] == ["presign"] and len(sys.argv) > 2:
        presign(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
